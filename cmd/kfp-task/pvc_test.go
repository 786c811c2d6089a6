package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

func TestClaimFor(t *testing.T) {
	base := pvcFlags{owner: "team-a", run: "run-1", result: "/tekton/results/name", accessModes: `["ReadWriteOnce"]`, size: "5Mi"}
	with := func(edit func(f *pvcFlags)) pvcFlags { f := base; edit(&f); return f }
	cases := []struct {
		name  string
		flags pvcFlags
		want  string // the claim's name
		err   string
	}{
		{name: "suffix: the run's name plus it", flags: with(func(f *pvcFlags) { f.suffix = "-scratch" }), want: "run-1-scratch"},
		{name: "fixed name", flags: with(func(f *pvcFlags) { f.name = "shared" }), want: "shared"},
		{name: "both", flags: with(func(f *pvcFlags) { f.name, f.suffix = "a", "-b" }), err: "not both"},
		{name: "neither", flags: base, err: "give pvc_name or pvc_name_suffix"},
		{name: "no DNS-1123 name", flags: with(func(f *pvcFlags) { f.name = "../Other_Team" }), err: "claim name"},
		{name: "suffix making no DNS-1123 name", flags: with(func(f *pvcFlags) { f.suffix = "_X" }), err: "claim name"},
		{name: "huge", flags: with(func(f *pvcFlags) { f.name, f.size = "a", "2Pi" }), err: "at most 1Pi"},
		{name: "negative", flags: with(func(f *pvcFlags) { f.name, f.size = "a", "-1Gi" }), err: "positive quantity"},
		{name: "no quantity", flags: with(func(f *pvcFlags) { f.name, f.size = "a", "lots" }), err: "positive quantity"},
		{name: "no access mode", flags: with(func(f *pvcFlags) { f.name, f.accessModes = "a", `[]` }), err: "non-empty JSON list"},
		{name: "unknown access mode", flags: with(func(f *pvcFlags) { f.name, f.accessModes = "a", `["ReadWriteAll"]` }), err: "access mode"},
		{name: "volume name", flags: with(func(f *pvcFlags) { f.name, f.volumeName = "a", "pv-of-team-b" }), err: "volume_name"},
		{name: "reserved annotation", flags: with(func(f *pvcFlags) {
			f.name, f.annotations = "a", `{"volume.beta.kubernetes.io/storage-provisioner":"x"}`
		}), err: "kubernetes.io"},
		{name: "annotations", flags: with(func(f *pvcFlags) { f.name, f.annotations = "a", `{"team":"ml"}` }), want: "a"},
		{name: "no owner", flags: with(func(f *pvcFlags) { f.name, f.owner = "a", "" }), err: "--owner"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := claimFor(tc.flags)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, c.Name)
			assert.Equal(t, map[string]string{contract.LabelManagedBy: contract.ManagedByTektonProvider, contract.LabelPVCOwner: "team-a", contract.LabelPVCRun: "run-1"}, c.Labels)
			assert.Equal(t, "5Mi", c.Spec.Resources.Requests.Storage().String())
			assert.Equal(t, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, c.Spec.AccessModes)
			assert.Nil(t, c.Spec.StorageClassName, "empty: the cluster's default class")
		})
	}
}

// fakeClaims is an API server's claims in one namespace.
type fakeClaims struct {
	claims map[string]*corev1.PersistentVolumeClaim
}

func (f *fakeClaims) create(_ context.Context, c *corev1.PersistentVolumeClaim) error {
	if _, ok := f.claims[c.Name]; ok {
		return errAlreadyExists
	}
	c = c.DeepCopy()
	c.UID = types.UID("uid-" + c.Name)
	f.claims[c.Name] = c
	return nil
}

func (f *fakeClaims) get(_ context.Context, name string) (*corev1.PersistentVolumeClaim, error) {
	if c, ok := f.claims[name]; ok {
		return c.DeepCopy(), nil
	}
	return nil, errNotFound
}

func (f *fakeClaims) delete(_ context.Context, name, uid string) error {
	c, ok := f.claims[name]
	if !ok {
		return errNotFound
	}
	if string(c.UID) != uid {
		return io.ErrUnexpectedEOF
	}
	delete(f.claims, name)
	return nil
}

func TestCreateAndDeletePVC(t *testing.T) {
	ctx := context.Background()
	foreign := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "team-b-data", UID: "b"}}
	otherOwner := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "team-c-scratch", UID: "c",
		Labels: map[string]string{contract.LabelManagedBy: contract.ManagedByTektonProvider, contract.LabelPVCOwner: "team-c"}}}
	api := &fakeClaims{claims: map[string]*corev1.PersistentVolumeClaim{foreign.Name: foreign, otherOwner.Name: otherOwner}}
	claim, err := claimFor(pvcFlags{owner: "team-a", run: "run-1", result: "r", accessModes: `["ReadWriteOnce"]`, size: "1Gi", suffix: "-s"})
	require.NoError(t, err)

	require.NoError(t, createPVC(ctx, api, claim, io.Discard))
	require.Contains(t, api.claims, "run-1-s")
	require.NoError(t, createPVC(ctx, api, claim, io.Discard), "run twice: the claim this namespace made is taken")

	for _, name := range []string{foreign.Name, otherOwner.Name} {
		c := claim.DeepCopy()
		c.Name = name
		assert.ErrorContains(t, createPVC(ctx, api, c, io.Discard), "was not made by a pipeline of namespace team-a", name)
		assert.ErrorContains(t, deletePVC(ctx, api, "team-a", name, io.Discard), "refused", name)
		assert.Contains(t, api.claims, name, "never deleted")
	}
	assert.ErrorContains(t, deletePVC(ctx, api, "team-a", "Not/A-Name", io.Discard), "claim name")

	require.NoError(t, deletePVC(ctx, api, "team-a", "run-1-s", io.Discard))
	assert.NotContains(t, api.claims, "run-1-s")
	require.NoError(t, deletePVC(ctx, api, "team-a", "run-1-s", io.Discard), "deleting twice is fine")
}

// TestRESTClaims: the requests the in-cluster client makes, and how it
// reads the answers.
func TestRESTClaims(t *testing.T) {
	var seen []string
	var deleted metav1.DeleteOptions
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/api/v1/namespaces/runs/persistentvolumeclaims":
			var c corev1.PersistentVolumeClaim
			require.NoError(t, json.NewDecoder(r.Body).Decode(&c))
			if c.Name == "taken" {
				w.WriteHeader(http.StatusConflict)
				return
			}
			w.WriteHeader(http.StatusCreated)
		case r.Method == http.MethodGet && r.URL.Path == "/api/v1/namespaces/runs/persistentvolumeclaims/taken":
			_ = json.NewEncoder(w).Encode(corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "taken", UID: "u1"}})
		case r.Method == http.MethodDelete:
			require.NoError(t, json.NewDecoder(r.Body).Decode(&deleted))
		case r.Method == http.MethodGet:
			w.WriteHeader(http.StatusNotFound)
		default:
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"kind":"Status","message":"forbidden: no rights"}`))
		}
	}))
	defer srv.Close()
	token := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(token, []byte("tok\n"), 0o600))
	api := newRESTClaims(srv.Client(), srv.URL, "runs", token)
	ctx := context.Background()

	require.NoError(t, api.create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "new"}}))
	assert.ErrorIs(t, api.create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "taken"}}), errAlreadyExists)
	c, err := api.get(ctx, "taken")
	require.NoError(t, err)
	assert.Equal(t, types.UID("u1"), c.UID)
	_, err = api.get(ctx, "missing")
	assert.ErrorIs(t, err, errNotFound)
	require.NoError(t, api.delete(ctx, "taken", "u1"))
	require.NotNil(t, deleted.Preconditions)
	assert.Equal(t, types.UID("u1"), *deleted.Preconditions.UID, "deletes only the claim it checked")
	assert.Equal(t, "POST /api/v1/namespaces/runs/persistentvolumeclaims Bearer tok", seen[0])

	srvForbid := newRESTClaims(srv.Client(), srv.URL, "other", token)
	assert.ErrorContains(t, srvForbid.create(ctx, &corev1.PersistentVolumeClaim{}), "forbidden: no rights")
}
