package eventserver

import (
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/runcompletion"
)

func code(err error) int {
	var a answer
	if err == nil {
		return http.StatusOK
	}
	if errors.As(err, &a) {
		return a.code
	}
	return 0
}

func TestServiceAccount(t *testing.T) {
	for user, want := range map[string]*types.NamespacedName{
		"system:serviceaccount:team-a:kfp-provider": {Namespace: "team-a", Name: "kfp-provider"},
		"system:serviceaccount:team-a":              nil,
		"system:serviceaccount::x":                  nil,
		"system:serviceaccount:a:b:c":               nil,
		"alice":                                     nil,
		"system:node:n1":                            nil,
	} {
		got, ok := ServiceAccount(user)
		if want == nil {
			assert.False(t, ok, user)
			continue
		}
		assert.True(t, ok, user)
		assert.Equal(t, *want, got, user)
	}
}

func TestAuthorised(t *testing.T) {
	p := &pipelinesv1beta1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "kfp"},
		Spec:   pipelinesv1beta1.ProviderSpec{ServiceAccount: "kfp-provider"},
		Status: pipelinesv1beta1.ProviderStatus{WorkflowNamespace: "workflows"}}
	for caller, want := range map[types.NamespacedName]int{
		{Namespace: "team-a", Name: "kfp-provider"}:    http.StatusOK,
		{Namespace: "workflows", Name: "kfp-provider"}: http.StatusOK,
		{Namespace: "team-b", Name: "kfp-provider"}:    http.StatusForbidden,
		{Namespace: "team-a", Name: "default"}:         http.StatusForbidden,
	} {
		assert.Equal(t, want, code(Authorised(caller, p)), caller.String())
	}
}

func TestRunTakes(t *testing.T) {
	ev := runcompletion.EventData{RunID: "b-1", Provider: runcompletion.NamespacedName{Namespace: "team-a", Name: "kfp"}}
	run := func(provider, id string) *pipelinesv1beta1.Run {
		r := &pipelinesv1beta1.Run{}
		r.Status.Provider.Name, r.Status.Provider.ID = provider, id
		return r
	}
	assert.Equal(t, http.StatusOK, code(RunTakes(run("team-a/kfp", "b-1"), ev)))
	assert.Equal(t, http.StatusForbidden, code(RunTakes(run("team-b/kfp", "b-1"), ev)), "another provider's run")
	assert.Equal(t, http.StatusConflict, code(RunTakes(run("team-a/kfp", ""), ev)), "no id yet: retry")
	assert.Equal(t, http.StatusGone, code(RunTakes(run("team-a/kfp", "b-0"), ev)), "another backend run")
}

func TestRunConfigurationTakes(t *testing.T) {
	ev := runcompletion.EventData{Provider: runcompletion.NamespacedName{Namespace: "team-a", Name: "kfp"}}
	p := &pipelinesv1beta1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "kfp"}}
	rc := func(ns, provider string) *pipelinesv1beta1.RunConfiguration {
		r := &pipelinesv1beta1.RunConfiguration{ObjectMeta: metav1.ObjectMeta{Namespace: ns}}
		r.Spec.Run.Provider = pipelinesv1beta1.ProviderReference(provider)
		return r
	}
	assert.Equal(t, http.StatusOK, code(RunConfigurationTakes(rc("team-a", "kfp"), p, ev)))
	assert.Equal(t, http.StatusOK, code(RunConfigurationTakes(rc("team-a", "team-a/kfp"), p, ev)))
	assert.Equal(t, http.StatusForbidden, code(RunConfigurationTakes(rc("team-a", "other"), p, ev)))
	assert.Equal(t, http.StatusForbidden, code(RunConfigurationTakes(rc("team-b", "team-a/kfp"), p, ev)), "team-b not allowed")
	p.Spec.AllowedNamespaces = []string{"team-b"}
	assert.Equal(t, http.StatusOK, code(RunConfigurationTakes(rc("team-b", "team-a/kfp"), p, ev)))
}
