package v1beta1

import "sort"

// DependencyNames lives beside RuntimeParameter because it reads nothing
// else: the engine (which resolves a Run's parameters and indexes Runs by
// them) and the RunConfiguration controller (which records dependencies)
// must agree on which RunConfigurations a spec depends on.

// DependencyNames are the RunConfigurations params resolve from (through
// valueFrom), each once, sorted.
func DependencyNames(params []RuntimeParameter) []string {
	seen := map[string]bool{}
	var names []string
	for _, p := range params {
		if p.ValueFrom != nil && !seen[p.ValueFrom.RunConfigurationRef.Name] {
			seen[p.ValueFrom.RunConfigurationRef.Name] = true
			names = append(names, p.ValueFrom.RunConfigurationRef.Name)
		}
	}
	sort.Strings(names)
	return names
}
