package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/kubeflow/pipelines/api/v2alpha1/go/pipelinespec"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/launcher"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/objectstore"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/objectstore/transfer"
)

// Environment variables holding a store's credentials: the steps that
// fetch and store artifacts get them from the Secret the Provider names;
// the component's own step never does.
const (
	envAccessKey = "AWS_ACCESS_KEY_ID"
	envSecretKey = "AWS_SECRET_ACCESS_KEY"
)

// objectsFlags are the flags fetch and store share.
type objectsFlags struct {
	root, endpoint, region string
	// local is where the /s3 and /minio trees are: "/" in a task.
	local    string
	insecure bool
	mkdirs   fileFlags
}

func parseObjectsFlags(name string, args []string) (objectsFlags, []string, error) {
	var f objectsFlags
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.StringVar(&f.root, "root", "", "the run's pipeline root, s3://bucket/prefix: no URI outside it is touched")
	fs.StringVar(&f.endpoint, "endpoint", "", "the store's host[:port] (empty: AWS S3)")
	fs.StringVar(&f.region, "region", "", "the bucket's region")
	fs.BoolVar(&f.insecure, "insecure", false, "plain HTTP to the endpoint")
	fs.StringVar(&f.local, "local-root", "/", "the directory holding KFP's /s3 and /minio trees")
	fs.Var(&f.mkdirs, "mkdir", "a directory to create, writable by the component (repeatable)")
	if err := fs.Parse(args); err != nil {
		return f, nil, err
	}
	if f.root == "" {
		return f, nil, fmt.Errorf("%s: --root is required", name)
	}
	return f, fs.Args(), nil
}

// fetchCmd is the first step of a task of a run whose pipeline root is
// an object store: each URI (an input artifact) is downloaded to its
// local path (/s3/bucket/key), and the --mkdir directories (the task's
// output directory) are made for the component to write in. An empty URI
// is an optional input left unset.
//
//	kfp-task fetch --root s3://bucket/prefix [--endpoint H:P --region R --insecure] [--mkdir DIR] -- URI...
func fetchCmd(args []string, getenv func(string) string) error {
	return objectsCmd("fetch", args, getenv, func(ctx context.Context, c *transfer.Client, m move) error {
		return c.Fetch(ctx, m.object, filepath.Join(m.rootDir, filepath.FromSlash(m.rel)))
	})
}

// storeCmd is the last step of such a task: each URI (an output
// artifact) is uploaded from its local path.
//
// The component may have written nothing for an output: as KFP's
// launcher, the step says so and stores nothing (a consumer fails to
// fetch it, naming it). Files are read through the root's directory, so
// no link leads the step (which holds the keys) outside it.
//
//	kfp-task store --root s3://bucket/prefix [--endpoint H:P --region R --insecure] -- URI...
func storeCmd(args []string, getenv func(string) string) error {
	return objectsCmd("store", args, getenv, func(ctx context.Context, c *transfer.Client, m move) error {
		root, err := os.OpenRoot(m.rootDir)
		if err != nil {
			return err
		}
		defer root.Close()
		err = c.Store(ctx, root, m.rel, m.object)
		if errors.Is(err, transfer.ErrNotWritten) {
			fmt.Fprintf(os.Stderr, "kfp-task store: warning: %v: not stored\n", err)
			return errSkipped
		}
		return err
	})
}

// errSkipped: nothing moved, and that is not a failure.
var errSkipped = errors.New("skipped")

// move is one object to move, and where the task has it: rel (slashed)
// under rootDir, the local directory standing for the pipeline root.
type move struct {
	object       objectstore.Object
	rootDir, rel string
}

func objectsCmd(name string, args []string, getenv func(string) string,
	do func(context.Context, *transfer.Client, move) error) error {
	f, uris, err := parseObjectsFlags(name, args)
	if err != nil {
		return err
	}
	root, err := objectstore.Parse(f.root)
	if err != nil {
		return fmt.Errorf("%s: --root: %w", name, err)
	}
	// Every URI is checked before anything moves: a refused one leaves no
	// half-done step.
	var objects []objectstore.Object
	for _, uri := range uris {
		if uri == "" {
			continue
		}
		if strings.HasPrefix(uri, "-") {
			return fmt.Errorf("%s: %q is not a URI (flags go before --)", name, uri)
		}
		o, err := objectstore.Allowed(uri, root)
		if err != nil {
			return fmt.Errorf("%s: %w (this backend reads artifacts of file:// roots on a volume and of s3:// and minio:// roots in the Provider's store)", name, err)
		}
		objects = append(objects, o)
	}
	for _, dir := range f.mkdirs {
		if !filepath.IsAbs(dir) {
			return fmt.Errorf("%s: --mkdir %q is not an absolute path", name, dir)
		}
		if err := mkdirAll(filepath.Clean(dir)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if len(objects) == 0 {
		return nil
	}
	client, err := transfer.New(transfer.Config{Endpoint: f.endpoint, Region: f.region, Insecure: f.insecure,
		AccessKey: getenv(envAccessKey), SecretKey: getenv(envSecretKey)})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	rootDir := filepath.Join(f.local, filepath.FromSlash(objectstore.LocalPath(root)))
	var errs []error
	for _, o := range objects {
		err := do(ctx, client, move{object: o, rootDir: rootDir, rel: objectstore.Rel(o, root)})
		switch {
		case errors.Is(err, errSkipped):
		case err != nil:
			errs = append(errs, err)
		default:
			fmt.Fprintf(os.Stderr, "kfp-task %s: %s\n", name, o)
		}
	}
	return errors.Join(errs...)
}

// shareOutputs makes the component's output artifacts readable by every
// user (files a+r, directories a+rx), as the component's own user: the
// store step uploading them may run as another. Links are left alone (the
// store step refuses them), an output not written is skipped, and a
// failure is a warning: the component's work is done.
func shareOutputs(ei *pipelinespec.ExecutorInput) {
	for name, list := range ei.GetOutputs().GetArtifacts() {
		for _, a := range list.GetArtifacts() {
			local, err := launcher.LocalPath(a.GetUri())
			if err == nil {
				err = filepath.WalkDir(local, func(p string, d fs.DirEntry, err error) error {
					if p == local && errors.Is(err, fs.ErrNotExist) {
						return nil
					}
					if err != nil || d.Type()&fs.ModeSymlink != 0 {
						return err
					}
					info, err := d.Info()
					if err != nil {
						return err
					}
					mode := info.Mode().Perm() | 0o444
					if d.IsDir() {
						mode |= 0o111
					}
					return os.Chmod(p, mode)
				})
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "kfp-task: warning: output artifact %q: making it readable for the store step: %v\n", name, err)
			}
		}
	}
}
