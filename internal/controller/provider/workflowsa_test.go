package provider

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/tektonprovider"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/tektonprovider/meta"
)

// tenantProvider is team-a/kfp running as kfp-provider, a provider image
// (or a provider service), with the given pipelineServiceAccount parameter
// as raw JSON ("" leaves it unset).
func tenantProvider(service bool, pipelineAccount string) *pipelinesv1beta1.Provider {
	p := &pipelinesv1beta1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "kfp"},
		Spec: pipelinesv1beta1.ProviderSpec{ServiceAccount: "kfp-provider", Image: "example.com/provider:v1"}}
	if service {
		p.Spec.Image, p.Spec.ServiceImage = "", "example.com/provider-service:v1"
	}
	if pipelineAccount != "" {
		p.Spec.Parameters = map[string]apiextensionsv1.JSON{meta.ParamPipelineServiceAccount: {Raw: []byte(pipelineAccount)}}
	}
	return p
}

func TestPipelineStepsAccount(t *testing.T) {
	for name, tc := range map[string]struct {
		provider *pipelinesv1beta1.Provider
		want     string // "" for none to check
		refused  string
	}{
		"named":                                {provider: tenantProvider(false, `"kfp-pipeline-runner"`), want: "kfp-pipeline-runner"},
		"named, provider service":              {provider: tenantProvider(true, `"kfp-pipeline-runner"`), want: "kfp-pipeline-runner"},
		"unset: the Tekton provider's default": {provider: tenantProvider(false, ""), want: "default"},
		"unset, provider service: none":        {provider: tenantProvider(true, "")},
		"not a string":                         {provider: tenantProvider(false, `3`), refused: "must name a service account of the workflow namespace, not 3"},
		"empty":                                {provider: tenantProvider(false, `""`), refused: `pipelineServiceAccount "" names no service account`},
		"not an object name":                   {provider: tenantProvider(false, `"../secrets"`), refused: `pipelineServiceAccount "../secrets" names no service account`},
	} {
		account, err := pipelineStepsAccount(tc.provider)
		if tc.refused != "" {
			assert.ErrorIs(t, err, errServiceAccountNotAllowed, name)
			assert.ErrorContains(t, err, tc.refused, name)
			continue
		}
		require.NoError(t, err, name)
		if tc.want == "" {
			assert.Nil(t, account, name)
			continue
		}
		if assert.NotNil(t, account, name) {
			assert.Equal(t, tc.want, account.name, name)
			assert.False(t, account.mayBeMissing, "%s: a missing steps account is refused here, nowhere else", name)
		}
	}
}

// The operator's idea of the parameter is the Tekton provider's own.
func TestPipelineStepsAccountIsTheTektonProvidersOwn(t *testing.T) {
	for _, raw := range []string{"", `"kfp-pipeline-runner"`} {
		p := tenantProvider(false, raw)
		settings, err := tektonprovider.SettingsFrom(contract.ProviderConfig{Name: p.Name, Namespace: p.Namespace, Spec: p.Spec})
		require.NoError(t, err)
		account, err := pipelineStepsAccount(p)
		require.NoError(t, err)
		assert.Equal(t, settings.PipelineServiceAccount, account.name, "parameter %s", raw)
	}
}

func TestAccountsToMark(t *testing.T) {
	accounts, err := accountsToMark(tenantProvider(false, `"kfp-pipeline-runner"`))
	require.NoError(t, err)
	var names []string
	for _, a := range accounts {
		names = append(names, a.name)
	}
	assert.Equal(t, []string{"kfp-provider", "kfp-pipeline-runner"}, names, "its own, then its pipeline steps'")
	assert.True(t, accounts[0].mayBeMissing, "a missing own account is ServiceAccountNotFound, reported elsewhere")

	accounts, err = accountsToMark(tenantProvider(true, ""))
	require.NoError(t, err)
	assert.Len(t, accounts, 1, "a provider service without the parameter runs no pipeline steps the operator knows of")
}

func TestRefusal(t *testing.T) {
	marked := func(annotation string) *corev1.ServiceAccount {
		return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "workflows", Name: "sa",
			Annotations: map[string]string{contract.AnnotationProviders: annotation}}}
	}
	own := workflowAccount{name: "kfp-provider", use: "the Provider's own service account", mayBeMissing: true}
	steps := workflowAccount{name: "kfp-pipeline-runner", use: "the account the Provider's parameter pipelineServiceAccount names for its pipeline steps"}
	defaulted, err := pipelineStepsAccount(tenantProvider(false, ""))
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		account workflowAccount
		sa      *corev1.ServiceAccount
		says    []string // nil: allowed
	}{
		"marked":                        {account: steps, sa: marked("team-a/kfp")},
		"marked among others, spaced":   {account: steps, sa: marked("team-b/kfp , team-a/kfp")},
		"own account missing: not here": {account: own},
		"another team's": {account: steps, sa: marked("team-b/kfp"), says: []string{
			"service account workflows/kfp-pipeline-runner (the account the Provider's parameter pipelineServiceAccount names for its pipeline steps)",
			`the platform engineer adds it (pipelines.kubeflow.org/providers: "team-a/kfp")`}},
		"unmarked":            {account: steps, sa: &corev1.ServiceAccount{}, says: []string{"workflows/kfp-pipeline-runner", "team-a/kfp is not among them"}},
		"a prefix is no mark": {account: steps, sa: marked("team-a/kfp-2, team-a"), says: []string{"team-a/kfp is not among them"}},
		"steps account missing": {account: steps, says: []string{"workflows/kfp-pipeline-runner (the account", "does not exist",
			`creates it, marked for team-a/kfp (pipelines.kubeflow.org/providers: "team-a/kfp")`}},
		"default, unmarked": {account: *defaulted, sa: &corev1.ServiceAccount{}, says: []string{
			"service account workflows/default (the account the Provider's pipeline steps run as while its parameter pipelineServiceAccount is not set)",
			`adds it (pipelines.kubeflow.org/providers: "team-a/kfp"), or the Provider names an account marked for it in its parameter pipelineServiceAccount`}},
	} {
		err := refusal("workflows", "team-a/kfp", tc.account, tc.sa)
		if tc.says == nil {
			assert.NoError(t, err, name)
			continue
		}
		if !assert.ErrorIs(t, err, errServiceAccountNotAllowed, name) {
			continue
		}
		for _, s := range tc.says {
			assert.ErrorContains(t, err, s, name)
		}
		assert.NotContains(t, err.Error(), "team-b", "%s: other teams' Providers are not revealed", name)
	}
}

func TestCheckWorkflowServiceAccount(t *testing.T) {
	account := func(name, marks string) *corev1.ServiceAccount {
		return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "workflows", Name: name,
			Annotations: map[string]string{contract.AnnotationProviders: marks}}}
	}
	reader := fake.NewClientBuilder().WithObjects(
		account("kfp-provider", "team-a/kfp"),
		account("kfp-pipeline-runner", "team-a/kfp"),
		account("team-b-runner", "team-b/kfp"),
		account("default", ""),
	).Build()
	for name, tc := range map[string]struct {
		workflowNamespace string
		provider          *pipelinesv1beta1.Provider
		refuses           string // "": allowed
	}{
		"steps account marked":               {workflowNamespace: "workflows", provider: tenantProvider(false, `"kfp-pipeline-runner"`)},
		"another team's steps account":       {workflowNamespace: "workflows", provider: tenantProvider(false, `"team-b-runner"`), refuses: "workflows/team-b-runner"},
		"steps account missing":              {workflowNamespace: "workflows", provider: tenantProvider(false, `"nobody"`), refuses: "workflows/nobody"},
		"unset: default, unmarked":           {workflowNamespace: "workflows", provider: tenantProvider(false, ""), refuses: "workflows/default"},
		"provider service, unset":            {workflowNamespace: "workflows", provider: tenantProvider(true, "")},
		"provider service, another team's":   {workflowNamespace: "workflows", provider: tenantProvider(true, `"team-b-runner"`), refuses: "workflows/team-b-runner"},
		"no workflowNamespace: own accounts": {provider: tenantProvider(false, `"team-b-runner"`)},
		"Provider in the workflow namespace": {workflowNamespace: "team-a", provider: tenantProvider(false, `"team-b-runner"`)},
	} {
		err := checkWorkflowServiceAccount(context.Background(), reader, tc.workflowNamespace, tc.provider)
		if tc.refuses == "" {
			assert.NoError(t, err, name)
			continue
		}
		assert.ErrorIs(t, err, errServiceAccountNotAllowed, name)
		assert.ErrorContains(t, err, tc.refuses, name)
	}

	// The Provider's own account is checked first, and its refusal is the one reported.
	unmarkedOwn := tenantProvider(false, `"kfp-pipeline-runner"`)
	unmarkedOwn.Spec.ServiceAccount = "team-b-runner"
	err := checkWorkflowServiceAccount(context.Background(), reader, "workflows", unmarkedOwn)
	assert.ErrorContains(t, err, "workflows/team-b-runner (the Provider's own service account)")

	// Anything but a missing account is not a verdict: the reconcile backs off.
	failing := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return errors.New("the API server is down")
		},
	}).Build()
	err = checkWorkflowServiceAccount(context.Background(), failing, "workflows", tenantProvider(false, `"kfp-pipeline-runner"`))
	assert.Error(t, err)
	assert.False(t, errors.Is(err, errServiceAccountNotAllowed), "a failed read refuses nothing")
}
