package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/kubeflow/pipelines/api/v2alpha1/go/pipelinespec"
)

// s3Fixture is an in-memory S3 server (gofakes3, a test fixture) with the
// bucket "artifacts", as the flags and credentials a task's steps get.
func s3Fixture(t *testing.T) ([]string, func(string) string) {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("artifacts"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	env := map[string]string{envAccessKey: "id", envSecretKey: "secret"}
	return []string{"--root", "s3://artifacts/kfp/team-a", "--endpoint", strings.TrimPrefix(srv.URL, "http://"),
		"--region", "us-east-1", "--insecure"}, func(k string) string { return env[k] }
}

func TestAnArtifactGoesThroughTheStore(t *testing.T) {
	flags, getenv := s3Fixture(t)
	producer, consumer := t.TempDir(), t.TempDir()
	uri := "s3://artifacts/kfp/team-a/run-1/train/model"
	if err := os.MkdirAll(producer+"/s3/artifacts/kfp/team-a/run-1/train", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(producer+"/s3/artifacts/kfp/team-a/run-1/train/model", []byte("w=1"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := storeCmd(append(append([]string{}, flags...), "--local-root", producer, uri), getenv); err != nil {
		t.Fatal(err)
	}
	out := consumer + "/s3/artifacts/kfp/team-a/run-1/eval"
	if err := fetchCmd(append(append([]string{}, flags...), "--local-root", consumer, "--mkdir", out, uri, ""), getenv); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(consumer + "/s3/artifacts/kfp/team-a/run-1/train/model")
	if err != nil || string(got) != "w=1" {
		t.Fatalf("fetched %q, %v", got, err)
	}
	if info, err := os.Stat(out); err != nil || info.Mode().Perm() != 0o777 {
		t.Fatalf("output directory: %v %v", info, err)
	}
}

// A URI of another namespace's part of the store (an importer's, or a
// pipeline input artifact's) is refused before anything is fetched.
func TestAnotherNamespacesArtifactIsRefused(t *testing.T) {
	flags, getenv := s3Fixture(t)
	local := t.TempDir()
	err := fetchCmd(append(append([]string{}, flags...), "--local-root", local,
		"s3://artifacts/kfp/team-a/run-1/train/model", "s3://artifacts/kfp/team-b/run-9/train/model"), getenv)
	if err == nil || !strings.Contains(err.Error(), "outside this run's pipeline root s3://artifacts/kfp/team-a") {
		t.Fatalf("fetch: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(local, "s3")); len(entries) > 0 {
		t.Fatal("something was fetched before the refusal")
	}
	for _, uri := range []string{"gs://artifacts/kfp/team-a/x", "file:///kfp/team-a/x"} {
		err := fetchCmd(append(append([]string{}, flags...), "--local-root", local, uri), getenv)
		if err == nil || !strings.Contains(err.Error(), "only s3:// and minio://") {
			t.Errorf("fetch %s: %v", uri, err)
		}
	}
}

// A URI is never a flag: a tenant's importer URI "--root=s3://bucket"
// would otherwise widen the step's root.
func TestAURIIsNeverAFlag(t *testing.T) {
	flags, getenv := s3Fixture(t)
	local := t.TempDir()
	for _, uri := range []string{"--root=s3://artifacts", "-local-root=/"} {
		err := fetchCmd(append(append([]string{}, flags...), "--local-root", local, "--", uri, "s3://artifacts/kfp/team-b/x"), getenv)
		if err == nil || !strings.Contains(err.Error(), "is not a URI") {
			t.Errorf("fetch -- %s: %v", uri, err)
		}
	}
}

// An output the component did not write is not stored, as with KFP's
// launcher: the step warns and succeeds.
func TestAnOutputNotWrittenIsNotStored(t *testing.T) {
	flags, getenv := s3Fixture(t)
	local := t.TempDir()
	if err := os.MkdirAll(local+"/s3/artifacts/kfp/team-a", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := storeCmd(append(append([]string{}, flags...), "--local-root", local, "--", "s3://artifacts/kfp/team-a/run-1/t/none"), getenv); err != nil {
		t.Fatal(err)
	}
	err := fetchCmd(append(append([]string{}, flags...), "--local-root", local, "--", "s3://artifacts/kfp/team-a/run-1/t/none"), getenv)
	if err == nil || !strings.Contains(err.Error(), "no such artifact") {
		t.Fatalf("fetch of what was not stored: %v", err)
	}
}

// The component's outputs become readable by all, so a store step running
// as another user reads them.
func TestOutputsAreSharedWithTheStoreStep(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(dir+"/model/sub", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/model/sub/w", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/metrics", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	ei := &pipelinespec.ExecutorInput{Outputs: &pipelinespec.ExecutorInput_Outputs{Artifacts: map[string]*pipelinespec.ArtifactList{
		"model":   {Artifacts: []*pipelinespec.RuntimeArtifact{{Uri: "file://" + dir + "/model"}}},
		"metrics": {Artifacts: []*pipelinespec.RuntimeArtifact{{Uri: "file://" + dir + "/metrics"}}},
		"absent":  {Artifacts: []*pipelinespec.RuntimeArtifact{{Uri: "file://" + dir + "/absent"}}},
	}}}
	shareOutputs(ei)
	for path, want := range map[string]os.FileMode{"/model": 0o755, "/model/sub": 0o755, "/model/sub/w": 0o644, "/metrics": 0o644} {
		info, err := os.Stat(dir + path)
		if err != nil || info.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want %v", path, info.Mode().Perm(), err, want)
		}
	}
}
