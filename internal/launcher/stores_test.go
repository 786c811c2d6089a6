package launcher

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCheckInputStore(t *testing.T) {
	const root = "file:///kfp/artifacts"
	for _, tc := range []struct {
		uri, root, err string
	}{
		{uri: "file:///kfp/artifacts/run/task/data", root: root},
		{uri: "file:///kfp/artifacts", root: root},
		{uri: "file:///kfp/artifacts/x", root: "file:///kfp/artifacts/"},
		{uri: "gs://ml-pipeline-playground/shakespeare1.txt", root: root, err: "the gs:// store is not supported; the supported stores are file:// under a file:// pipeline root"},
		{uri: "s3://bucket/key", root: root, err: "the s3:// store is not supported"},
		{uri: "https://example.com/x", root: root, err: "the https:// store is not supported"},
		{uri: "/kfp/artifacts/x", root: root, err: "has no scheme"},
		{uri: "file:///etc/passwd", root: root, err: "not under the pipeline root file:///kfp/artifacts"},
		{uri: "file:///kfp/artifacts/../../etc/passwd", root: root, err: "not under the pipeline root"},
		{uri: "file:///kfp/artifactsX/y", root: root, err: "not under the pipeline root"},
		{uri: "file://host/kfp/artifacts/x", root: root, err: "must be an absolute path"},
		{uri: "file:///kfp/artifacts/x", root: "s3://bucket/kfp/team-a", err: "only s3:// and minio:// URIs"},
		{uri: "s3://bucket/kfp/team-a/run/task/data", root: "s3://bucket/kfp/team-a"},
		{uri: "minio://bucket/kfp/team-a/run/task/data", root: "s3://bucket/kfp/team-a", err: "name it s3://bucket/kfp/team-a/run/task/data"},
		{uri: "s3://bucket/kfp/team-b/run/task/data", root: "s3://bucket/kfp/team-a", err: "outside this run's pipeline root"},
		{uri: "gs://bucket/kfp/team-a/x", root: "s3://bucket/kfp/team-a", err: "the supported stores are file://"},
	} {
		err := CheckInputStore(tc.uri, tc.root)
		if tc.err == "" {
			assert.NoError(t, err, tc.uri)
		} else {
			assert.ErrorContains(t, err, tc.err, tc.uri)
		}
	}
}
