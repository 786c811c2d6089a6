package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

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
//	kfp-task fetch --root s3://bucket/prefix [--endpoint H:P --region R --insecure] [--mkdir DIR] URI...
func fetchCmd(args []string, getenv func(string) string) error {
	return objectsCmd("fetch", args, getenv, func(ctx context.Context, c *transfer.Client, o objectstore.Object, local string) error {
		return c.Fetch(ctx, o, local)
	})
}

// storeCmd is the last step of such a task: each URI (an output
// artifact) is uploaded from its local path.
//
//	kfp-task store --root s3://bucket/prefix [--endpoint H:P --region R --insecure] URI...
func storeCmd(args []string, getenv func(string) string) error {
	return objectsCmd("store", args, getenv, func(ctx context.Context, c *transfer.Client, o objectstore.Object, local string) error {
		return c.Store(ctx, local, o)
	})
}

func objectsCmd(name string, args []string, getenv func(string) string,
	move func(context.Context, *transfer.Client, objectstore.Object, string) error) error {
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
	var errs []error
	for _, o := range objects {
		if err := move(ctx, client, o, filepath.Join(f.local, objectstore.LocalPath(o))); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(os.Stderr, "kfp-task %s: %s\n", name, o)
	}
	return errors.Join(errs...)
}
