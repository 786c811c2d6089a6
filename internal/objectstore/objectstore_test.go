package objectstore

import (
	"strings"
	"testing"
)

func TestParseAndAllowed(t *testing.T) {
	root := Object{Scheme: "s3", Bucket: "artifacts", Key: "kfp/team-a"}
	for _, tc := range []struct {
		uri, err string
	}{
		{uri: "s3://artifacts/kfp/team-a/run-1/train/model"},
		{uri: "minio://artifacts/kfp/team-a/run-1/train/model", err: "name it s3://artifacts/kfp/team-a/run-1/train/model"},
		{uri: "s3://artifacts/kfp/team-a", err: "whole pipeline root"},
		{uri: "s3://artifacts/kfp/team-a/a%20b", err: "percent-encoded"},
		{uri: "s3://artifacts/kfp/team-a/%2e%2e/team-b/x", err: "percent-encoded"},
		{uri: "s3://artifacts/kfp/team-b/run-1/x", err: "outside this run's pipeline root"},
		{uri: "s3://artifacts/kfp/team-a-other/x", err: "outside this run's pipeline root"},
		{uri: "s3://other/kfp/team-a/x", err: "outside this run's pipeline root"},
		{uri: "s3://artifacts/kfp/team-a/../team-b/x", err: `may not contain ".."`},
		{uri: "s3://artifacts/kfp/team-a//x", err: "not clean"},
		{uri: "gs://artifacts/kfp/team-a/x", err: "only s3:// and minio:// URIs"},
		{uri: "file:///kfp/team-a/x", err: "only s3:// and minio:// URIs"},
		{uri: "s3://user@artifacts/kfp/team-a/x", err: "want s3://bucket/key"},
		{uri: "s3://artifacts:9000/kfp/team-a/x", err: "want s3://bucket/key"},
		{uri: "s3://artifacts/kfp/team-a/x?versionId=1", err: "want s3://bucket/key"},
	} {
		t.Run(tc.uri, func(t *testing.T) {
			_, err := Allowed(tc.uri, root)
			if tc.err == "" && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
}

func TestLocalPathIsKFPs(t *testing.T) {
	for uri, want := range map[string]string{
		"s3://b/run/task/a":    "/s3/b/run/task/a",
		"minio://b/run/task/a": "/minio/b/run/task/a",
	} {
		o, err := Parse(uri)
		if err != nil {
			t.Fatal(err)
		}
		if got := LocalPath(o); got != want {
			t.Errorf("LocalPath(%s) = %s, want %s", uri, got, want)
		}
	}
}
