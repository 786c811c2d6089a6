package launcher

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/kubeflow/pipelines/api/v2alpha1/go/pipelinespec"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
)

// Resolve is the container's argv: spec's command then args, each
// structured placeholder (an element that is a Concat or IfPresent JSON
// object) expanded to none, one or several elements, then every {{$...}}
// placeholder replaced. Placeholders in the input parameters' own string
// values (the SDK's f-strings) are resolved first. An unknown placeholder
// is an error naming it: nothing is passed on unresolved.
func Resolve(spec Spec, ei *pipelinespec.ExecutorInput, rt Runtime) ([]string, error) {
	r := resolver{spec: spec, ei: ei, rt: rt}
	if err := r.selfReferences(); err != nil {
		return nil, err
	}
	var out []string
	for _, el := range append(append([]string{}, spec.Command...), spec.Args...) {
		expanded, err := r.structured(el)
		if err != nil {
			return nil, fmt.Errorf("task %q: %w", spec.Task, err)
		}
		for _, e := range expanded {
			s, err := r.placeholders(e)
			if err != nil {
				return nil, fmt.Errorf("task %q: %w", spec.Task, err)
			}
			out = append(out, s)
		}
	}
	return out, nil
}

type resolver struct {
	spec Spec
	ei   *pipelinespec.ExecutorInput
	rt   Runtime
}

// selfReferences resolves placeholders inside input parameters' string
// values: an f-string argument reaches the component as
// "{{$.inputs.parameters['pipelinechannel--x']}}-suffix".
func (r resolver) selfReferences() error {
	values := r.ei.GetInputs().GetParameterValues()
	for _, name := range sortedKeys(values) {
		s, ok := values[name].GetKind().(*structpb.Value_StringValue)
		if !ok || !strings.Contains(s.StringValue, "{{$") {
			continue
		}
		resolved, err := r.placeholders(s.StringValue)
		if err != nil {
			return fmt.Errorf("task %q: input parameter %q: %w", r.spec.Task, name, err)
		}
		values[name] = structpb.NewStringValue(resolved)
	}
	return nil
}

// structured expands an element that is a Concat or IfPresent placeholder
// (KFP writes them as JSON objects in the argument list).
func (r resolver) structured(el string) ([]string, error) {
	trimmed := strings.TrimSpace(el)
	if !strings.HasPrefix(trimmed, `{"Concat"`) && !strings.HasPrefix(trimmed, `{"IfPresent"`) {
		return []string{el}, nil
	}
	var v any
	if err := json.Unmarshal([]byte(trimmed), &v); err != nil {
		return nil, fmt.Errorf("structured placeholder %s is not JSON: %w", trimmed, err)
	}
	parts, err := r.expand(v)
	if err != nil {
		return nil, fmt.Errorf("structured placeholder %s: %w", trimmed, err)
	}
	return parts, nil
}

// expand is a structured placeholder's elements: a string is itself; a
// Concat is one element, its parts joined; an IfPresent is its Then when
// the input named has a value, else its Else (a list gives several
// elements, none gives no element).
func (r resolver) expand(v any) ([]string, error) {
	switch t := v.(type) {
	case string:
		return []string{t}, nil
	case []any:
		var out []string
		for _, item := range t {
			if _, nested := item.([]any); nested {
				return nil, fmt.Errorf("a list inside a list")
			}
			parts, err := r.expand(item)
			if err != nil {
				return nil, err
			}
			out = append(out, parts...)
		}
		return out, nil
	case map[string]any:
		if len(t) != 1 {
			return nil, fmt.Errorf("an object with %d keys (want Concat or IfPresent)", len(t))
		}
		if items, ok := t["Concat"]; ok {
			list, ok := items.([]any)
			if !ok {
				return nil, fmt.Errorf("a Concat of a %T, not a list", items)
			}
			var b strings.Builder
			for _, item := range list {
				parts, err := r.expand(item)
				if err != nil {
					return nil, err
				}
				b.WriteString(strings.Join(parts, ""))
			}
			return []string{b.String()}, nil
		}
		if body, ok := t["IfPresent"]; ok {
			cond, ok := body.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("IfPresent of a %T, not an object", body)
			}
			name, _ := cond["InputName"].(string)
			if name == "" {
				return nil, fmt.Errorf("IfPresent without InputName")
			}
			branch := cond["Else"]
			if r.present(name) {
				branch = cond["Then"]
			}
			if branch == nil {
				return nil, nil
			}
			return r.expand(branch)
		}
		for k := range t {
			return nil, fmt.Errorf("unknown structured placeholder %q", k)
		}
	}
	return nil, fmt.Errorf("a %T where a string, Concat or IfPresent belongs", v)
}

// present says the input name has a value in the executor input.
func (r resolver) present(name string) bool {
	in := r.ei.GetInputs()
	if _, ok := in.GetParameterValues()[name]; ok {
		return true
	}
	return len(in.GetArtifacts()[name].GetArtifacts()) > 0
}

var (
	placeholderRE = regexp.MustCompile(`\{\{\$[^{}]*\}\}`)
	ioRE          = regexp.MustCompile(`^\{\{\$\.(inputs|outputs)\.(parameters|artifacts)\[(?:'([^']*)'|"([^"]*)")\]((?:\.[a-z_]+)?(?:\[(?:'[^']*'|"[^"]*")\])?)\}\}$`)
)

// placeholders replaces every {{$...}} placeholder in s.
func (r resolver) placeholders(s string) (string, error) {
	var firstErr error
	out := placeholderRE.ReplaceAllStringFunc(s, func(p string) string {
		v, err := r.one(p)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return v
	})
	if firstErr != nil {
		return "", firstErr
	}
	return out, nil
}

// one resolves a single placeholder.
func (r resolver) one(p string) (string, error) {
	switch p {
	case "{{$}}":
		data, err := protojson.Marshal(r.ei)
		return string(data), err
	case "{{$.outputs.output_file}}", "{{$.outputMetadataUri}}":
		return r.ei.GetOutputs().GetOutputFile(), nil
	case "{{$.pipeline_job_name}}", "{{$.pipeline_job_resource_name}}":
		return r.rt.JobName, nil
	case "{{$.pipeline_job_uuid}}":
		return r.rt.JobUID, nil
	case "{{$.pipeline_task_name}}":
		return r.spec.Task, nil
	case "{{$.pipeline_task_uuid}}":
		return r.rt.TaskUID, nil
	case "{{$.pipeline_root}}":
		return r.rt.PipelineRoot, nil
	case "{{$.pipeline_job_create_time_utc}}", "{{$.pipeline_job_schedule_time_utc}}":
		t := r.rt.JobCreateTime
		if p == "{{$.pipeline_job_schedule_time_utc}}" {
			t = r.rt.JobScheduleTime
		}
		if t == "" {
			return "", fmt.Errorf("placeholder %s is not supported: the run does not say that time", p)
		}
		return t, nil
	}
	m := ioRE.FindStringSubmatch(p)
	if m == nil {
		return "", fmt.Errorf("placeholder %s is not supported", p)
	}
	side, kind, name, field := m[1], m[2], m[3]+m[4], m[5]
	switch {
	case side == "inputs" && kind == "parameters" && field == "":
		v, ok := r.ei.GetInputs().GetParameterValues()[name]
		if !ok {
			return "", fmt.Errorf("placeholder %s: input parameter %q has no value (an optional input left unset belongs in an IfPresent)", p, name)
		}
		return Text(v), nil
	case side == "outputs" && kind == "parameters" && field == ".output_file":
		o, ok := r.ei.GetOutputs().GetParameters()[name]
		if !ok {
			return "", fmt.Errorf("placeholder %s: no output parameter %q", p, name)
		}
		return o.GetOutputFile(), nil
	case kind == "artifacts" && side == "inputs" && r.spec.Inputs.Artifacts[name].List:
		return r.artifactList(p, name, field)
	case kind == "artifacts":
		lists := r.ei.GetInputs().GetArtifacts()
		if side == "outputs" {
			lists = r.ei.GetOutputs().GetArtifacts()
		}
		as := lists[name].GetArtifacts()
		if len(as) == 0 {
			return "", fmt.Errorf("placeholder %s: %s artifact %q has none (an optional input left unset belongs in an IfPresent)", p, strings.TrimSuffix(side, "s"), name)
		}
		return artifactField(p, as[0], field)
	}
	return "", fmt.Errorf("placeholder %s is not supported", p)
}

// artifactField is an artifact's uri, path (its local path, LocalPath),
// metadata (JSON) or one metadata key.
func artifactField(p string, a *pipelinespec.RuntimeArtifact, field string) (string, error) {
	switch {
	case field == ".uri":
		return a.GetUri(), nil
	case field == ".path":
		local, err := LocalPath(a.GetUri())
		if err != nil {
			return "", fmt.Errorf("placeholder %s: %w", p, err)
		}
		return local, nil
	case field == ".metadata":
		data, err := json.Marshal(a.GetMetadata().AsMap())
		return string(data), err
	case strings.HasPrefix(field, ".metadata["):
		key := strings.Trim(strings.TrimPrefix(field, ".metadata"), `[]'"`)
		v, ok := a.GetMetadata().GetFields()[key]
		if !ok {
			return "", fmt.Errorf("placeholder %s: the artifact has no metadata %q", p, key)
		}
		return Text(v), nil
	}
	return "", fmt.Errorf("placeholder %s is not supported", p)
}

// Local mount points of remote artifacts, KFP's (the SDK's Artifact.path):
// gs://B/K is /gcs/B/K, minio://B/K /minio/B/K, s3://B/K /s3/B/K.
var remotePrefixes = [][2]string{{"gs://", "/gcs/"}, {"minio://", "/minio/"}, {"s3://", "/s3/"}}

// LocalPath is where a task sees the artifact at uri: KFP's mount point of
// a gs://, minio:// or s3:// URI, or the path of a file:// URI (the
// project's volume-backed roots). Other schemes are an error naming them.
func LocalPath(uri string) (string, error) {
	for _, p := range remotePrefixes {
		if rest, ok := strings.CutPrefix(uri, p[0]); ok {
			return p[1] + rest, nil
		}
	}
	if rest, ok := strings.CutPrefix(uri, "file://"); ok && strings.HasPrefix(rest, "/") {
		return rest, nil
	}
	return "", fmt.Errorf("artifact URI %q: only gs://, minio://, s3:// and file:/// URIs have a local path", uri)
}

// artifactList resolves the placeholder of a whole input artifact list
// (the SDK's InputListOfArtifactsPlaceholder, {{$.inputs.artifacts['x']}}
// in a container component): its artifacts as in the executor input, a
// JSON list of {name, type, uri, metadata}. The SDK allows no field of a
// list.
func (r resolver) artifactList(p, name, field string) (string, error) {
	if field != "" {
		return "", fmt.Errorf("placeholder %s: input artifact %q is an artifact list: only the whole list has a placeholder", p, name)
	}
	items := []json.RawMessage{}
	for _, a := range r.ei.GetInputs().GetArtifacts()[name].GetArtifacts() {
		data, err := protojson.Marshal(a)
		if err != nil {
			return "", err
		}
		items = append(items, data)
	}
	data, err := json.Marshal(items) // compacts protojson's unstable spacing
	return string(data), err
}
