package completion

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/artifactpath"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// Components reads a finished run's output artifacts from the outputs
// annotation the Tekton provider copied onto its PipelineRun.
func Components(outputsJSON, runName string) ([]artifactpath.Component, error) {
	if outputsJSON == "" {
		return nil, nil
	}
	var outputs []contract.OutputArtifact
	if err := json.Unmarshal([]byte(outputsJSON), &outputs); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", contract.AnnotationOutputs, err)
	}
	byName := map[string]*artifactpath.Component{}
	var order []string
	for _, o := range outputs {
		c, ok := byName[o.Component]
		if !ok {
			c = &artifactpath.Component{Name: o.Component}
			byName[o.Component] = c
			order = append(order, o.Component)
		}
		uri := strings.ReplaceAll(o.URI, contract.RunNamePlaceholder, runName)
		c.Outputs = append(c.Outputs, artifactpath.Output{Name: o.Output, Artifacts: []artifactpath.Artifact{{URI: uri}}})
	}
	out := make([]artifactpath.Component, len(order))
	for i, name := range order {
		out[i] = *byName[name]
	}
	return out, nil
}

// LatestSucceeded is a RunConfiguration's latest succeeded run once the
// run providerID, which ended at completedAt, is counted: nil when the
// recorded one is that run or a later one. It holds the artifacts the run
// spec names that the run produced; missing lists the names of those it
// did not (or whose path is malformed).
func LatestSucceeded(current *pipelinesv1beta1.RunReference, providerID string, completedAt metav1.Time,
	components []artifactpath.Component, wanted []pipelinesv1beta1.OutputArtifact) (next *pipelinesv1beta1.RunReference, missing []string) {
	if current != nil && (current.ProviderID == providerID || current.CompletedAt != nil && earlier(completedAt.Time, providerID, current)) {
		return nil, nil
	}
	next = &pipelinesv1beta1.RunReference{ProviderID: providerID, CompletedAt: &completedAt}
	for _, w := range wanted {
		p, err := artifactpath.Parse(w.Path)
		if err != nil {
			missing = append(missing, w.Name)
			continue
		}
		uri, ok := artifactpath.Select(p, components)
		if !ok {
			missing = append(missing, w.Name)
			continue
		}
		next.Artifacts = append(next.Artifacts, pipelinesv1beta1.Artifact{Name: w.Name, Location: uri})
	}
	return next, missing
}

// earlier says whether a run that ended at t is older than current. Times
// have whole seconds: of two runs ending in the same second, the one with
// the greater id (a scheduled run's names the later minute) counts as later.
func earlier(t time.Time, providerID string, current *pipelinesv1beta1.RunReference) bool {
	c := current.CompletedAt.Time
	return t.Before(c) || t.Equal(c) && providerID < current.ProviderID
}
