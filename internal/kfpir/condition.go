package kfpir

import (
	"encoding/json"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/selection"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/kfpcel"
)

// Conditions. A condition the SDK writes (triggerPolicy.condition, a CEL
// expression over the inputs of the task or group holding it) guards every
// task inside. The simplest form, a string input == or != a quoted string,
// is a Tekton when expression on the input's value; any other (int(), <,
// in, &&, ||, the negations of an elif/else chain) is decided at run time
// by a condition task ("gate") that evaluates the CEL as KFP's driver does
// (kfp-task condition, internal/kfpcel) and gives the result "outcome"
// true or false, which the guarded tasks' when expressions test. A value
// never becomes expression text, so no value can change a condition's
// meaning. A gate is itself guarded by the conditions around it, and a
// task that consumes the result of a skipped task is skipped (Tekton).

// GateResult is the result of a condition task.
const GateResult = "outcome"

var (
	operand = `inputs\.parameter_values\[(?:'([^'\\]*)'|"([^"\\]*)")\]`
	literal = `(?:'([^'\\]*)'|"([^"\\]*)")`
	// conditionRE: operand OP literal; conditionReversedRE: literal OP operand.
	conditionRE         = regexp.MustCompile(`^\s*` + operand + `\s*(==|!=)\s*` + literal + `\s*$`)
	conditionReversedRE = regexp.MustCompile(`^\s*` + literal + `\s*(==|!=)\s*` + operand + `\s*$`)
)

// simpleCondition splits input == 'v' (or !=, operands either way).
func simpleCondition(cond string) (key, op, value string, ok bool) {
	if m := conditionRE.FindStringSubmatch(cond); m != nil {
		return m[1] + m[2], m[3], m[4] + m[5], true
	}
	if m := conditionReversedRE.FindStringSubmatch(cond); m != nil {
		return m[4] + m[5], m[3], m[1] + m[2], true
	}
	return "", "", "", false
}

// needsGate says cond is decided by a condition task.
func needsGate(cond *flatCondition) bool {
	key, _, _, ok := simpleCondition(cond.expr)
	if !ok {
		return true
	}
	typ := cond.types[key]
	return cond.inputs[key] == nil || (typ != "" && typ != "STRING")
}

var inputRE = regexp.MustCompile(operand)

// conditionInputs are the inputs cond reads, each bound by its holder.
func conditionInputs(cond *flatCondition) ([]string, error) {
	set := map[string]bool{}
	for _, m := range inputRE.FindAllStringSubmatch(cond.expr, -1) {
		key := m[1] + m[2]
		if cond.inputs[key] == nil {
			return nil, unsupported(cond.id, "condition on an unbound input", "condition %q refers to input %q, which the task does not bind", cond.expr, key)
		}
		set[key] = true
	}
	return sortedKeys(set), nil
}

// gateKey is the flat key of cond's condition task: the group's own key.
func (c *compiler) gateKey(cond *flatCondition) string {
	if c.flattener.groups[cond.id] != nil && c.flattener.loops[cond.id] == nil {
		return cond.id
	}
	return cond.id + "-condition"
}

// tektonTaskKeys are the flat keys that become PipelineTasks.
func (c *compiler) tektonTaskKeys() []string {
	set := map[string]bool{}
	for key, t := range c.flat {
		set[key] = true
		if t.exitPipeline != "" {
			set[t.exitPipeline] = true // the task running its steps
		}
		if t.loop != nil {
			if t.loop.artifacts == nil {
				set[itemsKey(t.loop)] = true
			}
			for _, cond := range t.loop.conds {
				if needsGate(cond) {
					set[c.gateKey(cond)] = true
				}
			}
		}
		for _, cond := range t.conds {
			if needsGate(cond) {
				set[c.gateKey(cond)] = true
			}
		}
	}
	for key, o := range c.flattener.oneOfs {
		set[key] = true
		for _, cond := range o.conds {
			if needsGate(cond) {
				set[c.gateKey(cond)] = true
			}
		}
	}
	return sortedKeys(set)
}

// whens are the when expressions of conds, outermost first, with the
// condition tasks not made yet.
func (c *compiler) whens(task string, conds []*flatCondition) (tektonv1.WhenExpressions, []tektonv1.PipelineTask, error) {
	var out tektonv1.WhenExpressions
	var gates []tektonv1.PipelineTask
	for _, cond := range conds {
		if !needsGate(cond) {
			key, op, value, _ := simpleCondition(cond.expr)
			input, _, err := c.inputValue(cond.id, key, cond.inputs[key], cond.types[key])
			if err != nil {
				return nil, nil, err
			}
			if err := checkLiteral(cond.id, value); err != nil {
				return nil, nil, err
			}
			operator := selection.In
			if op == "!=" {
				operator = selection.NotIn
			}
			out = append(out, tektonv1.WhenExpression{Input: input, Operator: operator, Values: []string{value}})
			continue
		}
		key := c.gateKey(cond)
		if !c.gates[key] {
			gate, err := c.gate(key, cond, out)
			if err != nil {
				return nil, nil, err
			}
			c.gates[key] = true
			gates = append(gates, gate)
		}
		out = append(out, tektonv1.WhenExpression{
			Input:    "$(tasks." + c.taskNames[key] + ".results." + GateResult + ")",
			Operator: selection.In, Values: []string{"true"},
		})
	}
	return out, gates, nil
}

// gate is the condition task deciding cond, guarded by outer.
func (c *compiler) gate(key string, cond *flatCondition, outer tektonv1.WhenExpressions) (tektonv1.PipelineTask, error) {
	var pt tektonv1.PipelineTask
	if err := kfpcel.Check(cond.expr); err != nil {
		return pt, unsupported(cond.id, "condition", "%v", err)
	}
	if c.opts.LauncherImage == "" {
		return pt, unsupported(cond.id, "condition", "deciding %q needs Options.LauncherImage (an image with %s)", cond.expr, LauncherPath)
	}
	used, err := conditionInputs(cond)
	if err != nil {
		return pt, err
	}
	local, err := paramNames.assign(used)
	if err != nil {
		return pt, err
	}
	args := []string{"condition", "--condition", cond.expr, "--result", "$(results." + GateResult + ".path)"}
	ts := tektonv1.TaskSpec{Results: []tektonv1.TaskResult{{Name: GateResult, Type: tektonv1.ResultsTypeString,
		Description: "true when the condition holds"}}}
	for _, k := range used {
		v, _, err := c.inputValue(cond.id, k, cond.inputs[k], cond.types[k])
		if err != nil {
			return pt, err
		}
		pt.Params = append(pt.Params, tektonv1.Param{Name: local[k], Value: *tektonv1.NewStructuredValues(v)})
		ts.Params = append(ts.Params, tektonv1.ParamSpec{Name: local[k], Type: tektonv1.ParamTypeString})
		args = append(args, "--param", k, cond.types[k], "$(params."+local[k]+")")
	}
	ts.Steps = []tektonv1.Step{{Name: "condition", Image: c.opts.LauncherImage, Command: []string{LauncherPath}, Args: args}}
	pt.Name = c.taskNames[key]
	pt.DisplayName = kfpTaskName(cond.id) + " (condition)"
	pt.TaskSpec = &tektonv1.EmbeddedTask{TaskSpec: ts}
	pt.When = append(tektonv1.WhenExpressions(nil), outer...)
	return pt, nil
}

// finalStatus is the value of a dsl.PipelineTaskFinalStatus input: KFP's
// PipelineTaskFinalStatus as JSON, its state Tekton's status of the
// producer (of every task when the producer is a group, which an exit
// handler's group is); the launcher maps it to KFP's words.
func (c *compiler) finalStatus(raw json.RawMessage) string {
	var src struct {
		ProducerTask string `json:"producerTask"`
	}
	_ = json.Unmarshal(raw, &src)
	state := "$(tasks.status)"
	if _, leaf := c.flat[src.ProducerTask]; leaf {
		state = "$(tasks." + c.taskNames[src.ProducerTask] + ".status)"
	}
	name, _ := json.Marshal(kfpTaskName(src.ProducerTask))
	return `{"error":{},"pipelineJobResourceName":"$(context.pipelineRun.name)","pipelineTaskName":` + string(name) + `,"state":"` + state + `"}`
}

// takesFinalStatus says a component has a dsl.PipelineTaskFinalStatus input.
func takesFinalStatus(in *IODefinitions) bool {
	for _, def := range in.Parameters {
		if def.ParameterType == "TASK_FINAL_STATUS" {
			return true
		}
	}
	return false
}

// kfpTaskName is the KFP task name of a flat key.
func kfpTaskName(key string) string {
	return key[strings.LastIndex(key, "/")+1:]
}
