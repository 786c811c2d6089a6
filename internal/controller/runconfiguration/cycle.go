package runconfiguration

import "slices"

// triggerCycle returns a cycle of triggers.runConfigurations through name
// (name, what triggers it, …, name), or nil. upstreams maps each
// RunConfiguration of the namespace to those it is triggered by. In a
// cycle each run would start the next forever.
func triggerCycle(name string, upstreams map[string][]string) []string {
	var path []string
	visited := map[string]bool{}
	var walk func(n string) bool
	walk = func(n string) bool {
		path = append(path, n)
		for _, up := range upstreams[n] {
			if up == name {
				path = append(path, up)
				return true
			}
			if !visited[up] {
				visited[up] = true
				if walk(up) {
					return true
				}
			}
		}
		path = path[:len(path)-1]
		return false
	}
	if walk(name) {
		return slices.Clip(path)
	}
	return nil
}
