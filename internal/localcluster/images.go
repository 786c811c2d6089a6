package localcluster

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path"
	"sort"
	"time"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// NonRootUID is the user every image of the local cluster runs as, as
// distroless and Tekton's release images do.
const NonRootUID = "65532"

// BaseImages are the host files the supervisor turns into the cluster's
// base images at start.
type BaseImages struct {
	Pause   string // a static binary that sleeps until signalled
	Busybox string // a static busybox, for Tekton's shell image
}

// Base image names in the local registry.
const (
	StaticBase = "base/static:latest"  // ko's and the project's base: passwd, group, /tmp, nothing to run
	ShellImage = "base/busybox:latest" // Tekton's -shell-image (script steps)
	PauseImage = "pause:3.10"          // containerd's sandbox image
)

// File is one file of an image layer.
type File struct {
	Path    string
	Mode    int64
	Content []byte
	Link    string // a symlink target instead of content
}

// staticFiles is what a static Go binary expects of a root filesystem.
func staticFiles() []File {
	return []File{
		{Path: "etc/passwd", Mode: 0o644, Content: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{Path: "etc/group", Mode: 0o644, Content: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{Path: "tmp/", Mode: 0o1777},
		{Path: "home/nonroot/", Mode: 0o755},
	}
}

// busyboxApplets are linked to busybox in the shell image: what Tekton's
// script steps and its place-scripts init container call.
var busyboxApplets = []string{"sh", "ash", "cat", "cp", "mv", "rm", "ls", "mkdir", "chmod", "touch", "echo", "base64", "printf", "sleep", "env", "test", "[", "grep", "sed", "wc", "head", "tail", "tr", "date", "id", "true", "false"}

// Layer builds a tar layer of files, in path order so images are reproducible.
func Layer(files []File) (v1.Layer, error) {
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		hdr := &tar.Header{Name: f.Path, Mode: f.Mode, ModTime: time.Unix(0, 0), Uid: 0, Gid: 0}
		switch {
		case f.Link != "":
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, f.Link
		case len(f.Path) > 0 && f.Path[len(f.Path)-1] == '/':
			hdr.Typeflag = tar.TypeDir
		default:
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(f.Content))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if hdr.Typeflag == tar.TypeReg {
			if _, err := tw.Write(f.Content); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
}

// Build returns base with one layer of files and the given entrypoint and user.
func Build(base v1.Image, files []File, entrypoint []string, user string) (v1.Image, error) {
	layer, err := Layer(files)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(base, layer)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", "amd64"
	cfg.Config.Entrypoint, cfg.Config.User = entrypoint, user
	cfg.Config.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin:/ko-app"}
	return mutate.ConfigFile(img, cfg)
}

// Push pushes img as ref and returns ref pinned by digest.
func Push(img v1.Image, ref string) (string, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return "", err
	}
	if err := remote.Write(r, img); err != nil {
		return "", err
	}
	d, err := img.Digest()
	if err != nil {
		return "", err
	}
	return r.Context().Digest(d.String()).String(), nil
}

// Pull fetches ref from the local registry.
func Pull(ref string) (v1.Image, error) { return crane.Pull(ref) }

func pushBaseImages(reg string, b BaseImages) error {
	static, err := Build(empty.Image, staticFiles(), nil, NonRootUID)
	if err != nil {
		return err
	}
	if _, err := Push(static, reg+"/"+StaticBase); err != nil {
		return err
	}
	readBin := func(p string) ([]byte, error) {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		return data, nil
	}
	pause, err := readBin(b.Pause)
	if err != nil {
		return err
	}
	pauseImg, err := Build(static, []File{{Path: "pause", Mode: 0o755, Content: pause}}, []string{"/pause"}, NonRootUID)
	if err != nil {
		return err
	}
	if _, err := Push(pauseImg, reg+"/"+PauseImage); err != nil {
		return err
	}
	bb, err := readBin(b.Busybox)
	if err != nil {
		return err
	}
	files := []File{{Path: "bin/busybox", Mode: 0o755, Content: bb}}
	for _, a := range busyboxApplets {
		files = append(files, File{Path: path.Join("bin", a), Mode: 0o777, Link: "/bin/busybox"})
	}
	// Tekton's shell image runs as root (it prepares directories for any step user).
	shell, err := Build(static, files, []string{"/bin/sh"}, "")
	if err != nil {
		return err
	}
	_, err = Push(shell, reg+"/"+ShellImage)
	return err
}

// serveRegistry serves an OCI registry on the node IP (reachable from pods,
// containerd and the namespace's tools, nothing outside), blobs on disk.
func serveRegistry(dir string, n Network) (stop func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", n.Registry())
	if err != nil {
		return nil, err
	}
	h := registry.New(registry.WithBlobHandler(registry.NewDiskBlobHandler(dir)), registry.Logger(log.New(io.Discard, "", 0)))
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return func() { _ = srv.Close() }, nil
}
