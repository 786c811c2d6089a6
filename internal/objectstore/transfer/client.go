// Package transfer moves artifacts between a task's local files and an
// S3-compatible object store with minio-go: the I/O beside the pure
// decisions of package objectstore.
package transfer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/objectstore"
)

// Config says how to reach a store: what a Provider's S3 artifact
// repository gives, with the credentials read from its Secret.
type Config struct {
	// Endpoint is host[:port]; empty means AWS S3 of Region.
	Endpoint string
	Region   string
	// Insecure uses plain HTTP.
	Insecure             bool
	AccessKey, SecretKey string
}

// Client reads and writes the objects of one store.
type Client struct {
	s3 *minio.Client
}

// New connects to the store cfg names (no request is made yet).
func New(cfg Config) (*Client, error) {
	endpoint := cfg.Endpoint
	if endpoint == "" {
		endpoint = "s3.amazonaws.com"
		if cfg.Region != "" {
			endpoint = "s3." + cfg.Region + ".amazonaws.com"
		}
	}
	creds := credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, "")
	if cfg.AccessKey == "" && cfg.SecretKey == "" {
		creds = credentials.NewStatic("", "", "", credentials.SignatureAnonymous)
	}
	mc, err := minio.New(endpoint, &minio.Options{Creds: creds, Secure: !cfg.Insecure, Region: cfg.Region,
		// SeaweedFS and MinIO serve buckets as paths, not as host names.
		BucketLookup: minio.BucketLookupPath})
	if err != nil {
		return nil, fmt.Errorf("object store %s: %w", endpoint, err)
	}
	return &Client{s3: mc}, nil
}

// Fetch downloads o to the local path local: one object, or every object
// under o's key as a directory (KFP artifacts may be either).
func (c *Client) Fetch(ctx context.Context, o objectstore.Object, local string) error {
	if o.Key == "" {
		return fmt.Errorf("fetch %s: a whole bucket is not an artifact", o)
	}
	if _, err := c.s3.StatObject(ctx, o.Bucket, o.Key, minio.StatObjectOptions{}); err == nil {
		return c.get(ctx, o.Bucket, o.Key, local)
	} else if minio.ToErrorResponse(err).Code != minio.NoSuchKey {
		return fmt.Errorf("fetch %s: %w", o, err)
	}
	found := false
	for info := range c.s3.ListObjects(ctx, o.Bucket, minio.ListObjectsOptions{Prefix: o.Key + "/", Recursive: true}) {
		if info.Err != nil {
			return fmt.Errorf("fetch %s: %w", o, info.Err)
		}
		rel := strings.TrimPrefix(info.Key, o.Key+"/")
		if rel == "" {
			// The marker of an empty directory (some stores' consoles write one).
			if err := os.MkdirAll(local, 0o755); err != nil {
				return err
			}
			found = true
			continue
		}
		if strings.HasSuffix(rel, "/") {
			continue // another store's marker of a directory with files
		}
		target, err := under(local, rel)
		if err != nil {
			return fmt.Errorf("fetch %s: %w", o, err)
		}
		if err := c.get(ctx, o.Bucket, info.Key, target); err != nil {
			return err
		}
		found = true
	}
	if !found {
		return fmt.Errorf("fetch %s: no such artifact in the store (no object and no objects under it)", o)
	}
	return nil
}

func (c *Client) get(ctx context.Context, bucket, key, local string) error {
	if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
		return err
	}
	if err := c.s3.FGetObject(ctx, bucket, key, local, minio.GetObjectOptions{}); err != nil {
		return fmt.Errorf("fetch s3://%s/%s: %w", bucket, key, err)
	}
	// minio-go writes 0600: the component may run as another user.
	return os.Chmod(local, 0o644)
}

// under joins a key's relative part to dir, refusing one that would leave
// it (a key is any string: "a/../../etc" is a valid key).
func under(dir, rel string) (string, error) {
	for _, seg := range strings.Split(rel, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", fmt.Errorf("object key part %q cannot be a local path", rel)
		}
	}
	return filepath.Join(dir, filepath.FromSlash(rel)), nil
}

// ErrNotWritten says the component left nothing where its output artifact
// goes; KFP's launcher then stores nothing either (components may choose
// not to write an output), and a consumer fails to fetch it.
var ErrNotWritten = errors.New("the component wrote nothing there")

// Store uploads the file or directory rel of root to o. Files are read
// through root, so no symbolic link (the artifact, or a directory on its
// path) leads outside the task's copy of the pipeline root, and a link
// inside the artifact is refused: this step holds the store's keys and
// must not read what the component pointed at. An empty directory
// stores nothing (as with KFP's launcher).
func (c *Client) Store(ctx context.Context, root *os.Root, rel string, o objectstore.Object) error {
	info, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("output artifact %s: %w (%s)", o, ErrNotWritten, rel)
	}
	if err != nil {
		return fmt.Errorf("output artifact %s: %w", o, err)
	}
	if !info.IsDir() {
		if !info.Mode().IsRegular() {
			return fmt.Errorf("output artifact %s: %s is not a regular file or a directory", o, rel)
		}
		return c.put(ctx, root, rel, info.Size(), o.Bucket, o.Key)
	}
	return fs.WalkDir(root.FS(), rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("output artifact %s: %s is not a regular file or a directory", o, p)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return c.put(ctx, root, p, info.Size(), o.Bucket, objectstore.KeyOf(o, strings.TrimPrefix(p, rel+"/")))
	})
}

func (c *Client) put(ctx context.Context, root *os.Root, name string, size int64, bucket, key string) error {
	f, err := root.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := c.s3.PutObject(ctx, bucket, key, f, size, minio.PutObjectOptions{}); err != nil {
		return fmt.Errorf("store s3://%s/%s: %w", bucket, key, err)
	}
	return nil
}
