package lifecycle

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// Resolved are a run's parameters with every valueFrom resolved from the
// latest succeeded run of the RunConfiguration it names (in the run's own
// namespace, so no other team's artifacts can be named).
type Resolved struct {
	// Parameters in spec order, each with its value.
	Parameters []contract.Parameter
	// Dependencies are the upstream runs used, by RunConfiguration.
	Dependencies map[string]pipelinesv1beta1.RunReference
	// Missing says, per required parameter that could not be resolved, why.
	Missing []string
	// Omitted names the optional parameters left out.
	Omitted []string
	// UsesValueFrom: some parameter is resolved from valueFrom.
	UsesValueFrom bool
}

// ResolveParameters resolves params against the RunConfigurations found
// (by name; absent ones are missing).
func ResolveParameters(params []pipelinesv1beta1.RuntimeParameter, upstream map[string]*pipelinesv1beta1.RunConfiguration) Resolved {
	var r Resolved
	for _, p := range params {
		if p.ValueFrom == nil {
			r.Parameters = append(r.Parameters, contract.Parameter{Name: p.Name, Value: p.Value})
			continue
		}
		r.UsesValueFrom = true
		ref := p.ValueFrom.RunConfigurationRef
		location, why := artifactOf(upstream[ref.Name], ref)
		switch {
		case why == "":
			r.Parameters = append(r.Parameters, contract.Parameter{Name: p.Name, Value: location})
			if r.Dependencies == nil {
				r.Dependencies = map[string]pipelinesv1beta1.RunReference{}
			}
			r.Dependencies[ref.Name] = *upstream[ref.Name].Status.LatestRuns.Succeeded.DeepCopy()
		case ref.Optional:
			r.Omitted = append(r.Omitted, fmt.Sprintf("parameter %s (%s)", p.Name, why))
		default:
			r.Missing = append(r.Missing, fmt.Sprintf("parameter %s: %s", p.Name, why))
		}
	}
	return r
}

func artifactOf(rc *pipelinesv1beta1.RunConfiguration, ref pipelinesv1beta1.RunConfigurationRef) (string, string) {
	if rc == nil {
		return "", fmt.Sprintf("RunConfiguration %s does not exist", ref.Name)
	}
	latest := rc.Status.LatestRuns.Succeeded
	if latest == nil {
		return "", fmt.Sprintf("RunConfiguration %s has no succeeded run yet", ref.Name)
	}
	for _, a := range latest.Artifacts {
		if a.Name == ref.OutputArtifact {
			return a.Location, ""
		}
	}
	return "", fmt.Sprintf("the latest succeeded run of RunConfiguration %s (%s) has no artifact %s", ref.Name, latest.ProviderID, ref.OutputArtifact)
}

// upstreamOf reads the RunConfigurations params name, in namespace.
func (r *Reconciler[T]) upstreamOf(ctx context.Context, namespace string, params []pipelinesv1beta1.RuntimeParameter) (map[string]*pipelinesv1beta1.RunConfiguration, error) {
	found := map[string]*pipelinesv1beta1.RunConfiguration{}
	for _, name := range pipelinesv1beta1.DependencyNames(params) {
		rc := &pipelinesv1beta1.RunConfiguration{}
		switch err := r.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, rc); {
		case err == nil:
			if r.Seal.Forged(rc) {
				// Not the operator's record: as if it had no run yet.
				rc.Status.LatestRuns.Succeeded = nil
			}
			found[name] = rc
		case !apierrors.IsNotFound(err):
			return nil, err
		}
	}
	return found, nil
}

// missingMessage says what a run waits for.
func missingMessage(missing []string) string {
	return "waiting for upstream artifacts: " + strings.Join(missing, "; ")
}
