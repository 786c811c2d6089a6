package provider

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

const (
	// TektonFeatureFlags is the ConfigMap holding Tekton's feature flags.
	TektonFeatureFlags = "feature-flags"
	// FlagSetSecurityContext makes Tekton give its own init containers a
	// securityContext that Pod Security `restricted` admits.
	FlagSetSecurityContext = "set-security-context"
	// DefaultTektonNamespace is where Tekton's release installs its config.
	DefaultTektonNamespace = "tekton-pipelines"
)

// podSecurityProblem says why no PipelineRun can start in namespace: it
// enforces Pod Security `restricted` while Tekton's set-security-context
// flag is off, so Tekton's own init containers are refused. Empty when
// there is no problem or it cannot be known (flags unreadable): a guess
// must not block a Provider.
func podSecurityProblem(enforce string, flags map[string]string, flagsFound bool, namespace, tektonNamespace string) string {
	// Tekton reads its boolean flags with strconv.ParseBool.
	if on, _ := strconv.ParseBool(flags[FlagSetSecurityContext]); enforce != "restricted" || !flagsFound || on {
		return ""
	}
	value := flags[FlagSetSecurityContext]
	if value == "" {
		value = "unset (false)"
	}
	return fmt.Sprintf("namespace %s enforces Pod Security %q, but Tekton's feature flag %s is %s in ConfigMap %s/%s: "+
		"Tekton's init containers then carry no securityContext and every PipelineRun's pod is refused; set it to \"true\"",
		namespace, enforce, FlagSetSecurityContext, value, tektonNamespace, TektonFeatureFlags)
}

// checkPodSecurity reads what podSecurityProblem needs.
func checkPodSecurity(ctx context.Context, reader client.Reader, namespace, tektonNamespace string) (string, error) {
	ns := &corev1.Namespace{}
	if err := reader.Get(ctx, client.ObjectKey{Name: namespace}, ns); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
			return "", nil
		}
		return "", err
	}
	enforce := ns.Labels[contract.LabelPodSecurityEnforce]
	if enforce != "restricted" {
		return "", nil
	}
	cm := &corev1.ConfigMap{}
	err := reader.Get(ctx, client.ObjectKey{Namespace: tektonNamespace, Name: TektonFeatureFlags}, cm)
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return podSecurityProblem(enforce, cm.Data, true, namespace, tektonNamespace), nil
}
