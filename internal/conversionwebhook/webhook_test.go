package conversionwebhook_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	pipelinesv1alpha6 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1alpha6"
	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/scheme"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/conversionwebhook"
)

func TestCRDsNameEverySpokeKindOnce(t *testing.T) {
	s := scheme.New()
	require.Equal(t, []string{
		"experiments.pipelines.kubeflow.org",
		"pipelines.pipelines.kubeflow.org",
		"providers.pipelines.kubeflow.org",
		"runconfigurations.pipelines.kubeflow.org",
		"runs.pipelines.kubeflow.org",
		"runschedules.pipelines.kubeflow.org",
	}, conversionwebhook.CRDs(s, pipelinesv1alpha6.GroupVersion))
	// The hub is converted to, never from: it names no CRD.
	require.Empty(t, conversionwebhook.CRDs(s, pipelinesv1beta1.GroupVersion))
}

func TestConversionKeepsTheInjectedCABundle(t *testing.T) {
	svc := conversionwebhook.Service("ops", "hook")
	c := conversionwebhook.Conversion(svc, []byte("ca"))
	require.Equal(t, "Webhook", string(c.Strategy))
	require.Equal(t, []byte("ca"), c.Webhook.ClientConfig.CABundle)
	require.Equal(t, "ops", c.Webhook.ClientConfig.Service.Namespace)
	require.Equal(t, conversionwebhook.Path, *c.Webhook.ClientConfig.Service.Path)
	require.EqualValues(t, 443, *c.Webhook.ClientConfig.Service.Port)
}
