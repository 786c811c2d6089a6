package kfpir

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
)

func (c *compiler) pipelineParams() (tektonv1.ParamSpecs, error) {
	var out tektonv1.ParamSpecs
	if c.spec.Root.InputDefinitions == nil {
		return nil, nil
	}
	defs := c.spec.Root.InputDefinitions.Parameters
	for _, name := range sortedKeys(defs) {
		ps, err := paramSpec(c.params[name], defs[name])
		if err != nil {
			return nil, fmt.Errorf("pipeline input parameter %q: %w", name, err)
		}
		out = append(out, ps)
	}
	arts := c.spec.Root.InputDefinitions.Artifacts
	for _, name := range sortedKeys(arts) {
		ps := tektonv1.ParamSpec{Name: c.params[name], Type: tektonv1.ParamTypeString,
			Description: "input artifact (" + firstNonEmpty(arts[name].ArtifactType.SchemaTitle, "system.Artifact") + "): its URI (file:///...)"}
		if arts[name].IsOptional {
			ps.Default = tektonv1.NewStructuredValues("") // absent
		}
		out = append(out, ps)
	}
	return out, nil
}

// paramSpec is a string Tekton param for a KFP parameter; the KFP type is
// kept in the description.
func paramSpec(name string, def *ParameterSpec) (tektonv1.ParamSpec, error) {
	if err := checkType(def.ParameterType); err != nil {
		return tektonv1.ParamSpec{}, err
	}
	ps := tektonv1.ParamSpec{Name: name, Type: tektonv1.ParamTypeString, Description: def.ParameterType}
	if def.Description != "" {
		ps.Description += ": " + def.Description
	}
	if len(def.DefaultValue) > 0 {
		v, err := valueText(def.DefaultValue, def.ParameterType)
		if err != nil {
			return ps, fmt.Errorf("default value: %w", err)
		}
		ps.Default = tektonv1.NewStructuredValues(v)
	}
	return ps, nil
}

func checkType(t string) error {
	switch t {
	case "STRING", "NUMBER_INTEGER", "NUMBER_DOUBLE", "BOOLEAN", "LIST", "STRUCT":
		return nil
	case "TASK_FINAL_STATUS":
		return nil // bound to a taskFinalStatus source, in an exit task
	}
	return fmt.Errorf("unknown parameterType %q", t)
}

// valueText is the text a KFP parameter value takes in a Tekton param: a
// string as it is, an integer without a fraction, a double in the shortest
// form that round-trips, a boolean as true/false, a list or struct as
// compact JSON (object keys sorted).
func valueText(raw json.RawMessage, typ string) (string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	switch x := v.(type) {
	case nil:
		return "", errors.New("null value")
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		if typ == "NUMBER_INTEGER" {
			if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
				return "", fmt.Errorf("%v is not an integer", x)
			}
			return strconv.FormatInt(int64(x), 10), nil
		}
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	default:
		b, err := json.Marshal(x)
		return string(b), err
	}
}

// inputValue is the PipelineTask-level value of a task's input parameter and
// the task producing it, if any.
func (c *compiler) inputValue(task, key string, in *InputParameter, typ string) (string, string, error) {
	set := 0
	for _, b := range []bool{in.ComponentInputParameter != "", in.RuntimeValue != nil, in.TaskOutputParameter != nil, len(in.TaskFinalStatus) > 0, in.ParameterExpression != "", in.oneOf != nil} {
		if b {
			set++
		}
	}
	if set != 1 {
		return "", "", fmt.Errorf("task %q: input parameter %q must have exactly one source", task, key)
	}
	switch {
	case in.ComponentInputParameter != "":
		p, ok := c.params[in.ComponentInputParameter]
		if !ok {
			return "", "", fmt.Errorf("task %q: input parameter %q refers to pipeline input %q, which is not declared", task, key, in.ComponentInputParameter)
		}
		return "$(params." + p + ")", "", nil
	case in.RuntimeValue != nil:
		if len(in.RuntimeValue.Constant) == 0 {
			return "", "", unsupported(task, "runtime value without a constant", "input parameter %q", key)
		}
		v, err := valueText(in.RuntimeValue.Constant, typ)
		if err != nil {
			return "", "", fmt.Errorf("task %q: input parameter %q: %w", task, key, err)
		}
		if err := checkLiteral(task, v); err != nil {
			return "", "", err
		}
		return v, "", nil
	case in.loopItem != nil:
		return "", "", unsupported(task, "a run-time loop's item outside the loop's tasks' inputs", "input parameter %q (a condition on it, for one)", key)
	case in.collected != nil || in.collectedFrom != nil:
		return "", "", unsupported(task, "a loop's collected outputs outside a task's inputs", "input parameter %q (a condition on them, for one)", key)
	case in.oneOf != nil:
		return "$(tasks." + c.taskNames[in.oneOf.key] + ".results." + OneOfResult + ")", "", nil
	case in.TaskOutputParameter != nil:
		src := in.TaskOutputParameter
		if p := c.flat[src.ProducerTask]; p != nil && p.loop != nil {
			return "", "", unsupported(task, "data passed between the tasks of a loop over a run-time list", "input parameter %q from %q", key, src.ProducerTask)
		}
		if _, ok := c.taskNames[src.ProducerTask]; !ok {
			return "", "", fmt.Errorf("task %q: input parameter %q: producer task %q is not in the DAG", task, key, src.ProducerTask)
		}
		r, ok := c.results[src.ProducerTask][src.OutputParameterKey]
		if !ok {
			return "", "", fmt.Errorf("task %q: input parameter %q: task %q has no output parameter %q", task, key, src.ProducerTask, src.OutputParameterKey)
		}
		return "$(tasks." + c.taskNames[src.ProducerTask] + ".results." + r + ")", src.ProducerTask, nil
	case len(in.TaskFinalStatus) > 0:
		return c.finalStatus(in.TaskFinalStatus), "", nil
	default:
		return "", "", unsupported(task, "parameter expression selector", "input parameter %q", key)
	}
}
