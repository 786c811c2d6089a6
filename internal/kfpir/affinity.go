package kfpir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kfp-kubernetes affinity (add_node_affinity, add_node_affinity_json,
// add_pod_affinity): the pod's affinity, set with the other pod settings
// through AnnotationTaskRunSpecs. A term with a weight is a preferred rule
// of that weight, one without a required rule (node terms are ORed, pod
// terms ANDed, as Kubernetes does); nodeAffinityJson, when it is a
// constant, is the whole node affinity and replaces the terms, as in KFP
// ({} is none). From a pipeline parameter or a task output it would be
// known only at run time, after the pod settings are fixed: refused.

type selectorRequirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values"`
}

type nodeAffinityTerm struct {
	MatchExpressions []selectorRequirement `json:"matchExpressions"`
	MatchFields      []selectorRequirement `json:"matchFields"`
	Weight           *json.Number          `json:"weight"`
	NodeAffinityJSON *struct {
		RuntimeValue            *RuntimeValue   `json:"runtimeValue"`
		ComponentInputParameter string          `json:"componentInputParameter"`
		TaskOutputParameter     json.RawMessage `json:"taskOutputParameter"`
	} `json:"nodeAffinityJson"`
}

type podAffinityTerm struct {
	MatchPodExpressions       []selectorRequirement `json:"matchPodExpressions"`
	MatchPodLabels            map[string]string     `json:"matchPodLabels"`
	TopologyKey               string                `json:"topologyKey"`
	Namespaces                []string              `json:"namespaces"`
	MatchNamespaceExpressions []selectorRequirement `json:"matchNamespaceExpressions"`
	MatchNamespaceLabels      map[string]string     `json:"matchNamespaceLabels"`
	Weight                    *json.Number          `json:"weight"`
	Anti                      bool                  `json:"anti"`
}

var nodeOperators = map[string]bool{"In": true, "NotIn": true, "Exists": true, "DoesNotExist": true, "Gt": true, "Lt": true}
var labelOperators = map[string]bool{"In": true, "NotIn": true, "Exists": true, "DoesNotExist": true}

// affinityWeight reads a weight (the SDK may write 50.0): 1 to 100.
func affinityWeight(task string, w json.Number) (int32, error) {
	f, err := w.Float64()
	if err != nil || f != math.Trunc(f) || f < 1 || f > 100 {
		return 0, fmt.Errorf("task %q: kfp-kubernetes affinity weight %q: want an integer from 1 to 100", task, w)
	}
	return int32(f), nil
}

func nodeRequirements(task string, in []selectorRequirement) ([]corev1.NodeSelectorRequirement, error) {
	var out []corev1.NodeSelectorRequirement
	for _, r := range in {
		if r.Key == "" || !nodeOperators[r.Operator] {
			return nil, fmt.Errorf("task %q: kfp-kubernetes node affinity requirement %q %q: want a key and In, NotIn, Exists, DoesNotExist, Gt or Lt", task, r.Key, r.Operator)
		}
		out = append(out, corev1.NodeSelectorRequirement{Key: r.Key, Operator: corev1.NodeSelectorOperator(r.Operator), Values: r.Values})
	}
	return out, nil
}

func labelSelector(task string, exprs []selectorRequirement, labels map[string]string) (*metav1.LabelSelector, error) {
	if len(exprs) == 0 && len(labels) == 0 {
		return nil, nil
	}
	sel := &metav1.LabelSelector{MatchLabels: labels}
	for _, r := range exprs {
		if r.Key == "" || !labelOperators[r.Operator] {
			return nil, fmt.Errorf("task %q: kfp-kubernetes pod affinity requirement %q %q: want a key and In, NotIn, Exists or DoesNotExist", task, r.Key, r.Operator)
		}
		sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: r.Key, Operator: metav1.LabelSelectorOperator(r.Operator), Values: r.Values})
	}
	return sel, nil
}

// integralJSON rewrites the numbers of a protobuf Struct (all doubles:
// the SDK writes a weight 100 as 100.0) that are integers as integers.
func integralJSON(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		case json.Number:
			if f, err := x.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
				return json.Number(strconv.FormatInt(int64(f), 10))
			}
		}
		return v
	}
	return json.Marshal(walk(v))
}

// nodeAffinity is the node affinity of the terms, or of the JSON.
func nodeAffinity(task string, terms []nodeAffinityTerm) (*corev1.NodeAffinity, error) {
	na := &corev1.NodeAffinity{}
	for _, t := range terms {
		if j := t.NodeAffinityJSON; j != nil {
			if j.RuntimeValue == nil {
				return nil, unsupported(task, "kfp-kubernetes node affinity from a parameter", "nodeAffinityJson: pod settings are fixed before the run's values are known")
			}
			var fromJSON corev1.NodeAffinity
			data, err := integralJSON(j.RuntimeValue.Constant)
			if err != nil {
				return nil, fmt.Errorf("task %q: kfp-kubernetes nodeAffinityJson: %w", task, err)
			}
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&fromJSON); err != nil {
				return nil, fmt.Errorf("task %q: kfp-kubernetes nodeAffinityJson: %w", task, err)
			}
			if fromJSON.RequiredDuringSchedulingIgnoredDuringExecution == nil && len(fromJSON.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
				return nil, nil
			}
			return &fromJSON, nil
		}
	}
	for _, t := range terms {
		exprs, err := nodeRequirements(task, t.MatchExpressions)
		if err != nil {
			return nil, err
		}
		fields, err := nodeRequirements(task, t.MatchFields)
		if err != nil {
			return nil, err
		}
		term := corev1.NodeSelectorTerm{MatchExpressions: exprs, MatchFields: fields}
		if t.Weight != nil {
			w, err := affinityWeight(task, *t.Weight)
			if err != nil {
				return nil, err
			}
			na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution,
				corev1.PreferredSchedulingTerm{Weight: w, Preference: term})
			continue
		}
		if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
			na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
		}
		req := na.RequiredDuringSchedulingIgnoredDuringExecution
		req.NodeSelectorTerms = append(req.NodeSelectorTerms, term)
	}
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil && na.PreferredDuringSchedulingIgnoredDuringExecution == nil {
		return nil, nil
	}
	return na, nil
}

// podAffinities are the pod affinity and anti-affinity of the terms.
func podAffinities(task string, terms []podAffinityTerm) (*corev1.PodAffinity, *corev1.PodAntiAffinity, error) {
	var pa corev1.PodAffinity
	var anti corev1.PodAntiAffinity
	for _, t := range terms {
		if t.TopologyKey == "" {
			return nil, nil, fmt.Errorf("task %q: kfp-kubernetes pod affinity needs a topologyKey", task)
		}
		pods, err := labelSelector(task, t.MatchPodExpressions, t.MatchPodLabels)
		if err != nil {
			return nil, nil, err
		}
		namespaces, err := labelSelector(task, t.MatchNamespaceExpressions, t.MatchNamespaceLabels)
		if err != nil {
			return nil, nil, err
		}
		term := corev1.PodAffinityTerm{LabelSelector: pods, TopologyKey: t.TopologyKey, Namespaces: t.Namespaces, NamespaceSelector: namespaces}
		required, preferred := &pa.RequiredDuringSchedulingIgnoredDuringExecution, &pa.PreferredDuringSchedulingIgnoredDuringExecution
		if t.Anti {
			required, preferred = &anti.RequiredDuringSchedulingIgnoredDuringExecution, &anti.PreferredDuringSchedulingIgnoredDuringExecution
		}
		if t.Weight == nil {
			*required = append(*required, term)
			continue
		}
		w, err := affinityWeight(task, *t.Weight)
		if err != nil {
			return nil, nil, err
		}
		*preferred = append(*preferred, corev1.WeightedPodAffinityTerm{Weight: w, PodAffinityTerm: term})
	}
	var outPA *corev1.PodAffinity
	var outAnti *corev1.PodAntiAffinity
	if pa.RequiredDuringSchedulingIgnoredDuringExecution != nil || pa.PreferredDuringSchedulingIgnoredDuringExecution != nil {
		outPA = &pa
	}
	if anti.RequiredDuringSchedulingIgnoredDuringExecution != nil || anti.PreferredDuringSchedulingIgnoredDuringExecution != nil {
		outAnti = &anti
	}
	return outPA, outAnti, nil
}

// affinity is the pod's affinity from the config, nil when none.
func affinity(task string, cfg *kubernetesConfig) (*corev1.Affinity, error) {
	na, err := nodeAffinity(task, cfg.NodeAffinity)
	if err != nil {
		return nil, err
	}
	pa, anti, err := podAffinities(task, cfg.PodAffinity)
	if err != nil {
		return nil, err
	}
	if na == nil && pa == nil && anti == nil {
		return nil, nil
	}
	return &corev1.Affinity{NodeAffinity: na, PodAffinity: pa, PodAntiAffinity: anti}, nil
}
