package kfpir

import (
	"fmt"
	"regexp"
	"strings"
)

// placeholders resolves the KFP placeholders of one task's command and args.
type placeholders struct {
	task    string            // KFP task name
	params  map[string]string // component input parameter → TaskSpec param
	results map[string]string // component output parameter → TaskSpec result
	inPath  map[string]string // input artifact → path
	inURI   map[string]string
	outPath map[string]string // output artifact → path
	outURI  map[string]string
}

var (
	placeholderRE = regexp.MustCompile(`\{\{\$[^{}]*\}\}`)
	ioRE          = regexp.MustCompile(`^\{\{\$\.(inputs|outputs)\.(parameters|artifacts)\[(?:'([^']*)'|"([^"]*)")\](?:\.([a-z_]+))?\}\}$`)
	// tektonVarRE finds text Tekton would take for one of its variables.
	tektonVarRE = regexp.MustCompile(`\$\((params|tasks|results|workspaces|context|steps|step|inputs|outputs|credentials)[.\[]`)
)

// checkLiteral refuses literal text that Tekton would substitute.
func checkLiteral(task, text string) error {
	if m := tektonVarRE.FindString(text); m != "" {
		return unsupported(task, "literal Tekton variable reference", "text contains %q, which Tekton would substitute", m)
	}
	return nil
}

func (p placeholders) resolveAll(in []string) ([]string, error) {
	if in == nil {
		return nil, nil
	}
	out := make([]string, 0, len(in))
	for _, s := range in {
		r, err := p.resolve(s)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// resolve rewrites every placeholder in s; the text between placeholders is
// kept as it is.
func (p placeholders) resolve(s string) (string, error) {
	trimmed := strings.TrimSpace(s)
	for _, structured := range []string{"Concat", "IfPresent"} {
		if strings.HasPrefix(trimmed, `{"`+structured+`"`) {
			return "", unsupported(p.task, structured+" placeholder", "argument %s", trimmed)
		}
	}
	var b strings.Builder
	last := 0
	for _, loc := range placeholderRE.FindAllStringIndex(s, -1) {
		if err := checkLiteral(p.task, s[last:loc[0]]); err != nil {
			return "", err
		}
		b.WriteString(s[last:loc[0]])
		r, err := p.one(s[loc[0]:loc[1]])
		if err != nil {
			return "", err
		}
		b.WriteString(r)
		last = loc[1]
	}
	if err := checkLiteral(p.task, s[last:]); err != nil {
		return "", err
	}
	b.WriteString(s[last:])
	if strings.Contains(b.String(), "{{$") {
		return "", unsupported(p.task, "malformed placeholder", "argument %s", s)
	}
	return b.String(), nil
}

func (p placeholders) one(ph string) (string, error) {
	switch ph {
	case "{{$.pipeline_job_name}}":
		return "$(context.pipelineRun.name)", nil
	case "{{$.pipeline_job_uuid}}":
		return "$(context.pipelineRun.uid)", nil
	case "{{$.pipeline_task_name}}":
		return p.task, nil
	case "{{$}}":
		return "", unsupported(p.task, "executor input placeholder {{$}} (Python function components need the KFP launcher)", "")
	}
	m := ioRE.FindStringSubmatch(ph)
	if m == nil {
		return "", unsupported(p.task, "placeholder "+ph, "")
	}
	dir, kind, key, attr := m[1], m[2], m[3]+m[4], m[5]
	lookup := func(table map[string]string, what string) (string, error) {
		v, ok := table[key]
		if !ok {
			return "", fmt.Errorf("task %q: placeholder %s: %s %q is not declared or not bound", p.task, ph, what, key)
		}
		return v, nil
	}
	switch {
	case dir == "inputs" && kind == "parameters" && attr == "":
		v, err := lookup(p.params, "input parameter")
		return "$(params." + v + ")", err
	case dir == "outputs" && kind == "parameters" && attr == "output_file":
		v, err := lookup(p.results, "output parameter")
		return "$(results." + v + ".path)", err
	case dir == "inputs" && kind == "artifacts" && attr == "path":
		return lookup(p.inPath, "input artifact")
	case dir == "inputs" && kind == "artifacts" && attr == "uri":
		return lookup(p.inURI, "input artifact")
	case dir == "outputs" && kind == "artifacts" && attr == "path":
		return lookup(p.outPath, "output artifact")
	case dir == "outputs" && kind == "artifacts" && attr == "uri":
		return lookup(p.outURI, "output artifact")
	}
	return "", unsupported(p.task, "placeholder "+ph, "")
}
