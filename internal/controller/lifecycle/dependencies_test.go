package lifecycle

import (
	"testing"

	"github.com/stretchr/testify/assert"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

func TestResolveParameters(t *testing.T) {
	from := func(rc, artifact string, optional bool) *pipelinesv1beta1.ValueFrom {
		return &pipelinesv1beta1.ValueFrom{RunConfigurationRef: pipelinesv1beta1.RunConfigurationRef{Name: rc, OutputArtifact: artifact, Optional: optional}}
	}
	examples := &pipelinesv1beta1.RunConfiguration{}
	examples.Status.LatestRuns.Succeeded = &pipelinesv1beta1.RunReference{ProviderID: "run-3",
		Artifacts: []pipelinesv1beta1.Artifact{{Name: "examples", Location: "file:///kfp/artifacts/run-3/generate/dataset"}}}
	fresh := &pipelinesv1beta1.RunConfiguration{}
	upstream := map[string]*pipelinesv1beta1.RunConfiguration{"examples": examples, "fresh": fresh}

	for name, tc := range map[string]struct {
		params           []pipelinesv1beta1.RuntimeParameter
		want             []contract.Parameter
		missing, omitted int
		missingSays      string
	}{
		"plain values": {params: []pipelinesv1beta1.RuntimeParameter{{Name: "a", Value: "1"}}, want: []contract.Parameter{{Name: "a", Value: "1"}}},
		"resolved": {params: []pipelinesv1beta1.RuntimeParameter{{Name: "a", Value: "1"}, {Name: "data", ValueFrom: from("examples", "examples", false)}},
			want: []contract.Parameter{{Name: "a", Value: "1"}, {Name: "data", Value: "file:///kfp/artifacts/run-3/generate/dataset"}}},
		"no such RunConfiguration": {params: []pipelinesv1beta1.RuntimeParameter{{Name: "data", ValueFrom: from("gone", "x", false)}},
			missing: 1, missingSays: "RunConfiguration gone does not exist"},
		"no succeeded run": {params: []pipelinesv1beta1.RuntimeParameter{{Name: "data", ValueFrom: from("fresh", "x", false)}},
			missing: 1, missingSays: "has no succeeded run yet"},
		"no such artifact": {params: []pipelinesv1beta1.RuntimeParameter{{Name: "data", ValueFrom: from("examples", "model", false)}},
			missing: 1, missingSays: "(run-3) has no artifact model"},
		"optional omitted": {params: []pipelinesv1beta1.RuntimeParameter{{Name: "a", Value: "1"}, {Name: "data", ValueFrom: from("fresh", "x", true)}},
			want: []contract.Parameter{{Name: "a", Value: "1"}}, omitted: 1},
	} {
		t.Run(name, func(t *testing.T) {
			r := ResolveParameters(tc.params, upstream)
			assert.Len(t, r.Missing, tc.missing)
			assert.Len(t, r.Omitted, tc.omitted)
			if tc.missing > 0 {
				assert.Contains(t, r.Missing[0], tc.missingSays)
				return
			}
			assert.Equal(t, tc.want, r.Parameters)
		})
	}
	r := ResolveParameters([]pipelinesv1beta1.RuntimeParameter{{Name: "data", ValueFrom: from("examples", "examples", false)}}, upstream)
	assert.Equal(t, "run-3", r.Dependencies["examples"].ProviderID)
}
