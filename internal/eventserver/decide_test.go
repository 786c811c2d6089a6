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
	p := &pipelinesv1beta1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "kfp"}}
	ev := runcompletion.EventData{RunID: "b-1", Status: runcompletion.Succeeded, Provider: runcompletion.NamespacedName{Namespace: "team-a", Name: "kfp"}}
	type run struct {
		ns, spec, synced, id string
		state                pipelinesv1beta1.CompletionState
	}
	for _, tc := range []struct {
		name string
		run  run
		code int
		take take
	}{
		{"its backend run", run{ns: "team-a", spec: "kfp", synced: "team-a/kfp", id: "b-1"}, http.StatusOK, record},
		{"another backend run id (kfp-operator's services)", run{ns: "team-a", spec: "kfp", synced: "team-a/kfp", id: "b-0"}, http.StatusOK, record},
		{"before the create's id is recorded", run{ns: "team-a", spec: "kfp"}, http.StatusOK, record},
		{"spec names the provider by namespace", run{ns: "team-a", spec: "team-a/kfp"}, http.StatusOK, record},
		{"replayed", run{ns: "team-a", spec: "kfp", synced: "team-a/kfp", id: "b-1", state: pipelinesv1beta1.CompletionStateSucceeded}, http.StatusOK, replayed},
		{"replayed as another state", run{ns: "team-a", spec: "kfp", synced: "team-a/kfp", id: "b-1", state: pipelinesv1beta1.CompletionStateFailed}, http.StatusConflict, 0},
		{"another provider's run", run{ns: "team-a", spec: "other", id: "b-1"}, http.StatusForbidden, 0},
		{"synchronised with another provider", run{ns: "team-a", spec: "kfp", synced: "team-b/kfp", id: "b-1"}, http.StatusForbidden, 0},
		{"another namespace's run on a provider not admitting it", run{ns: "team-b", spec: "team-a/kfp"}, http.StatusForbidden, 0},
		{"another namespace's run of the same provider name", run{ns: "team-b", spec: "kfp"}, http.StatusForbidden, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &pipelinesv1beta1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: tc.run.ns, Name: "train"},
				Spec: pipelinesv1beta1.RunSpec{Provider: pipelinesv1beta1.ProviderReference(tc.run.spec)}}
			r.Status.Provider.Name, r.Status.Provider.ID, r.Status.CompletionState = tc.run.synced, tc.run.id, tc.run.state
			got, err := RunTakes(r, p, ev)
			assert.Equal(t, tc.code, code(err), err)
			assert.Equal(t, tc.take, got)
		})
	}
	admitting := p.DeepCopy()
	admitting.Spec.AllowedNamespaces = []string{"team-b"}
	r := &pipelinesv1beta1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b"}, Spec: pipelinesv1beta1.RunSpec{Provider: "team-a/kfp"}}
	_, err := RunTakes(r, admitting, ev)
	assert.NoError(t, err, "a namespace the provider admits")
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
