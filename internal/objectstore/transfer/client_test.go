package transfer

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/objectstore"
)

// fakeStore is a test fixture: an in-memory S3 server (gofakes3) with one
// bucket, and a Client of it.
func fakeStore(t *testing.T) *Client {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("artifacts"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	c, err := New(Config{Endpoint: strings.TrimPrefix(srv.URL, "http://"), Insecure: true, AccessKey: "a", SecretKey: "s", Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// rootOf opens dir as a Store root.
func rootOf(t *testing.T, dir string) *os.Root {
	t.Helper()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAFileAndADirectoryRoundTrip(t *testing.T) {
	c, ctx, dir := fakeStore(t), context.Background(), t.TempDir()
	write(t, dir+"/out/model", "weights \x00 bytes")
	write(t, dir+"/out/dataset/part-0", "a,b")
	write(t, dir+"/out/dataset/sub/part-1", "c,d")
	model := objectstore.Object{Scheme: "s3", Bucket: "artifacts", Key: "ns/run/train/model"}
	data := objectstore.Object{Scheme: "minio", Bucket: "artifacts", Key: "ns/run/train/dataset"}
	if err := c.Store(ctx, rootOf(t, dir), "out/model", model); err != nil {
		t.Fatal(err)
	}
	if err := c.Store(ctx, rootOf(t, dir), "out/dataset", data); err != nil {
		t.Fatal(err)
	}
	if err := c.Fetch(ctx, model, dir+"/in/model"); err != nil {
		t.Fatal(err)
	}
	if err := c.Fetch(ctx, data, dir+"/in/dataset"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, dir+"/in/model"); got != "weights \x00 bytes" {
		t.Errorf("model = %q", got)
	}
	if got := read(t, dir+"/in/dataset/part-0") + read(t, dir+"/in/dataset/sub/part-1"); got != "a,bc,d" {
		t.Errorf("dataset = %q", got)
	}
}

func TestAMissingArtifactIsAnError(t *testing.T) {
	c, ctx, dir := fakeStore(t), context.Background(), t.TempDir()
	err := c.Fetch(ctx, objectstore.Object{Scheme: "s3", Bucket: "artifacts", Key: "ns/run/none"}, dir+"/x")
	if err == nil || !strings.Contains(err.Error(), "no such artifact") {
		t.Fatalf("fetch of nothing: %v", err)
	}
	err = c.Store(ctx, rootOf(t, dir), "never-written", objectstore.Object{Scheme: "s3", Bucket: "artifacts", Key: "ns/run/t/a"})
	if !errors.Is(err, ErrNotWritten) {
		t.Fatalf("store of nothing: %v", err)
	}
}

// A component may leave a symbolic link as its artifact, pointing at a
// file only the uploading step can read (its credentials, a token).
func TestASymbolicLinkIsNotUploaded(t *testing.T) {
	c, ctx, dir := fakeStore(t), context.Background(), t.TempDir()
	write(t, dir+"/secret", "token")
	if err := os.Symlink(dir+"/secret", dir+"/model"); err != nil {
		t.Fatal(err)
	}
	write(t, dir+"/data/ok", "fine")
	if err := os.Symlink(dir+"/secret", dir+"/data/leak"); err != nil {
		t.Fatal(err)
	}
	for _, local := range []string{dir + "/model", dir + "/data"} {
		err := c.Store(ctx, rootOf(t, dir), filepath.Base(local), objectstore.Object{Scheme: "s3", Bucket: "artifacts", Key: "ns/run/t/" + filepath.Base(local)})
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("store of %s: %v", local, err)
		}
	}
	if err := c.Fetch(ctx, objectstore.Object{Scheme: "s3", Bucket: "artifacts", Key: "ns/run/t/model"}, dir+"/got"); err == nil {
		t.Error("the link's target was uploaded")
	}
}

// An object's key is any string: one that would climb out of the
// artifact's directory is refused, not written outside it.
func TestAKeyThatClimbsIsRefused(t *testing.T) {
	c, ctx, dir := fakeStore(t), context.Background(), t.TempDir()
	write(t, dir+"/f", "x")
	if err := c.put(ctx, rootOf(t, dir), "f", 1, "artifacts", "ns/run/t/a/../../../../escape"); err != nil {
		t.Fatal(err)
	}
	err := c.Fetch(ctx, objectstore.Object{Scheme: "s3", Bucket: "artifacts", Key: "ns/run/t/a"}, dir+"/in/a")
	if err == nil || !strings.Contains(err.Error(), "cannot be a local path") {
		t.Fatalf("fetch: %v", err)
	}
	if _, err := os.Stat(dir + "/escape"); err == nil {
		t.Fatal("a file was written outside the artifact's directory")
	}
}

// A directory on the artifact's path that is a link out of the task's
// copy of the root (the component may replace its task directory by one)
// is not followed.
func TestALinkedParentIsNotFollowed(t *testing.T) {
	c, ctx, dir := fakeStore(t), context.Background(), t.TempDir()
	outside := t.TempDir()
	write(t, outside+"/model", "not the component's")
	if err := os.Symlink(outside, dir+"/task"); err != nil {
		t.Fatal(err)
	}
	err := c.Store(ctx, rootOf(t, dir), "task/model", objectstore.Object{Scheme: "s3", Bucket: "artifacts", Key: "ns/run/task/model"})
	if err == nil {
		t.Fatal("a file outside the root was uploaded")
	}
}

// A fetched file is readable by another user than the fetching step's.
func TestAFetchedFileIsReadableByAll(t *testing.T) {
	c, ctx, dir := fakeStore(t), context.Background(), t.TempDir()
	write(t, dir+"/out/file", "x")
	if err := os.Chmod(dir+"/out/file", 0o600); err != nil {
		t.Fatal(err)
	}
	file := objectstore.Object{Scheme: "s3", Bucket: "artifacts", Key: "ns/run/t/file"}
	if err := c.Store(ctx, rootOf(t, dir), "out/file", file); err != nil {
		t.Fatal(err)
	}
	if err := c.Fetch(ctx, file, dir+"/in/file"); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(dir + "/in/file"); err != nil || info.Mode().Perm() != 0o644 {
		t.Fatalf("the fetched file: %v %v", info, err)
	}
}
