package kfpir

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAffinity(t *testing.T) {
	zone := corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"us-west-1"}}
	cases := []struct {
		name   string
		config string // the executor's kfp-kubernetes config, as the SDK writes it
		want   *corev1.Affinity
		err    string
		refuse string
	}{
		{name: "none", config: `{}`},
		{name: "required node term", config: `{"nodeAffinity":[{"matchExpressions":[{"key":"zone","operator":"In","values":["us-west-1"]}]}]}`,
			want: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{zone}}}}}}},
		{name: "weighted node term, weight as the SDK writes it", config: `{"nodeAffinity":[{"matchExpressions":[{"key":"zone","operator":"In","values":["us-west-1"]}],"weight":50.0}]}`,
			want: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{
				{Weight: 50, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{zone}}}}}}},
		{name: "match fields", config: `{"nodeAffinity":[{"matchFields":[{"key":"metadata.name","operator":"NotIn","values":["n1"]}]}]}`,
			want: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"n1"}}}}}}}}},
		{name: "JSON constant replaces the terms", config: `{"nodeAffinity":[{"matchExpressions":[{"key":"a","operator":"Exists"}]},
			{"nodeAffinityJson":{"runtimeValue":{"constant":{"preferredDuringSchedulingIgnoredDuringExecution":[{"preference":{"matchExpressions":[{"key":"zone","operator":"In","values":["us-west-1"]}]},"weight":100.0}]}}}}]}`,
			want: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{
				{Weight: 100, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{zone}}}}}}},
		{name: "empty JSON is none", config: `{"nodeAffinity":[{"nodeAffinityJson":{"runtimeValue":{"constant":{}}}}]}`},
		{name: "JSON from a parameter", config: `{"nodeAffinity":[{"nodeAffinityJson":{"componentInputParameter":"aff"}}]}`,
			refuse: "kfp-kubernetes node affinity from a parameter"},
		{name: "bad operator", config: `{"nodeAffinity":[{"matchExpressions":[{"key":"zone","operator":"Near"}]}]}`, err: "want a key and In"},
		{name: "weight out of range", config: `{"nodeAffinity":[{"matchExpressions":[{"key":"zone","operator":"Exists"}],"weight":101}]}`, err: "from 1 to 100"},
		{name: "weight with a fraction", config: `{"nodeAffinity":[{"matchExpressions":[{"key":"zone","operator":"Exists"}],"weight":1.5}]}`, err: "from 1 to 100"},
		{name: "pod affinity and anti-affinity", config: `{"podAffinity":[
			{"matchPodLabels":{"app":"db"},"topologyKey":"kubernetes.io/hostname"},
			{"matchPodExpressions":[{"key":"app","operator":"In","values":["web"]}],"topologyKey":"zone","weight":10,"anti":true,"matchNamespaceLabels":{"team":"a"}}]}`,
			want: &corev1.Affinity{
				PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}, TopologyKey: "kubernetes.io/hostname"}}},
				PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 10,
					PodAffinityTerm: corev1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "In", Values: []string{"web"}}}},
						TopologyKey: "zone", NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}}}}}}},
		{name: "pod affinity without topology", config: `{"podAffinity":[{"matchPodLabels":{"app":"db"}}]}`, err: "topologyKey"},
		{name: "pod affinity operator", config: `{"podAffinity":[{"matchPodExpressions":[{"key":"a","operator":"Gt"}],"topologyKey":"zone"}]}`, err: "Exists or DoesNotExist"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var cfg kubernetesConfig
			require.NoError(t, json.Unmarshal([]byte(tc.config), &cfg))
			got, err := affinity("train", &cfg)
			switch {
			case tc.refuse != "":
				var ue *UnsupportedError
				require.True(t, errors.As(err, &ue), "%v", err)
				assert.Equal(t, tc.refuse, ue.Feature)
			case tc.err != "":
				assert.ErrorContains(t, err, tc.err)
			default:
				require.NoError(t, err)
				assert.Equal(t, tc.want, got)
			}
		})
	}
}

// TestAffinityReachesTheTaskRunSpecs: the affinity is the task's pod
// template in contract.AnnotationTaskRunSpecs, beside its node selector.
func TestAffinityReachesTheTaskRunSpecs(t *testing.T) {
	spec := load(t, "demo.yaml")
	spec.PlatformSpec = platformOf(`"exec-train":{"nodeSelector":{"labels":{"pool":"gpu"}},
		"nodeAffinity":[{"matchExpressions":[{"key":"zone","operator":"In","values":["us-west-1"]}],"weight":50.0}]}`)
	p := compileValid(t, spec, Options{Name: "x", LauncherImage: launcherImage})
	var specs []tektonv1.PipelineTaskRunSpec
	require.NoError(t, json.Unmarshal([]byte(p.Annotations[contract.AnnotationTaskRunSpecs]), &specs))
	require.Len(t, specs, 1)
	assert.Equal(t, "train", specs[0].PipelineTaskName)
	assert.Equal(t, map[string]string{"pool": "gpu"}, specs[0].PodTemplate.NodeSelector)
	require.NotNil(t, specs[0].PodTemplate.Affinity)
	assert.Equal(t, int32(50), specs[0].PodTemplate.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].Weight)
}
