// Package objectstore holds the decisions about artifacts in an
// S3-compatible object store (AWS S3, SeaweedFS, MinIO, ...), the Tekton
// provider's s3:// and minio:// pipeline roots: which URIs name an object,
// which a run may touch, where a task finds them, which key a file
// becomes. Pure: package transfer does the I/O.
package objectstore

import (
	"fmt"
	"net/url"
	"path"
	"strings"
)

// Schemes are the URI schemes of the stores this package reads and writes.
// KFP writes minio:// for its in-cluster MinIO; both name a bucket and a
// key of the one S3-compatible endpoint a Provider configures.
var Schemes = []string{"s3", "minio"}

// Object is one object, or one prefix standing for a directory, of a store.
type Object struct {
	Scheme, Bucket, Key string
}

// String is the object's URI.
func (o Object) String() string { return o.Scheme + "://" + o.Bucket + "/" + o.Key }

// Supported says uri names an object of a store this package handles.
func Supported(uri string) bool {
	scheme, _, ok := strings.Cut(uri, "://")
	if !ok {
		return false
	}
	for _, s := range Schemes {
		if scheme == s {
			return true
		}
	}
	return false
}

// Parse reads an s3:// or minio:// URI: a bucket and a clean key with no
// "." or ".." segments (an object store has no directories to climb, but
// the key becomes a local path too).
func Parse(uri string) (Object, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return Object{}, fmt.Errorf("artifact URI %q: %w", uri, err)
	}
	if strings.Contains(uri, "%") {
		// The key would be decoded, the local path (KFP's, from the text)
		// not: the task would find its artifact elsewhere than fetched.
		return Object{}, fmt.Errorf("artifact URI %q: percent-encoded keys are not supported", uri)
	}
	if !Supported(uri) {
		return Object{}, fmt.Errorf("artifact URI %q: only %s:// URIs name an object of an S3-compatible store", uri, strings.Join(Schemes, ":// and "))
	}
	if u.Host == "" || u.User != nil || u.Port() != "" || u.RawQuery != "" || u.Fragment != "" {
		return Object{}, fmt.Errorf("artifact URI %q: want %s://bucket/key", uri, u.Scheme)
	}
	key := strings.TrimPrefix(u.Path, "/")
	for _, seg := range strings.Split(key, "/") {
		if seg == "." || seg == ".." {
			return Object{}, fmt.Errorf("artifact URI %q: the key may not contain %q", uri, seg)
		}
	}
	if key != "" && path.Clean(key) != strings.TrimSuffix(key, "/") {
		return Object{}, fmt.Errorf("artifact URI %q: the key is not clean (empty segments)", uri)
	}
	return Object{Scheme: u.Scheme, Bucket: u.Host, Key: strings.TrimSuffix(key, "/")}, nil
}

// Within says o is root itself or lies under it: same bucket, and a key
// under root's key as a whole path segment ("runs" does not hold
// "runs-other/x"). Both schemes name the same store.
func Within(o, root Object) bool {
	if o.Bucket != root.Bucket {
		return false
	}
	return root.Key == "" || o.Key == root.Key || strings.HasPrefix(o.Key, root.Key+"/")
}

// Allowed parses uri and checks a run of root may touch it: the
// Provider's credentials read and write every namespace's artifacts, so a
// run is held to its own namespace's part of the store.
func Allowed(uri string, root Object) (Object, error) {
	o, err := Parse(uri)
	if err != nil {
		return o, err
	}
	if !Within(o, root) {
		return o, fmt.Errorf("artifact %s is outside this run's pipeline root %s: a run reads and writes only its namespace's artifacts", uri, root)
	}
	if o.Key == root.Key {
		return o, fmt.Errorf("artifact %s is this run's whole pipeline root, not an artifact", uri)
	}
	if o.Scheme != root.Scheme {
		// A task has the root's local copy at /<scheme>/...: a minio://
		// URI of an s3:// root would be fetched where it cannot see it.
		return o, fmt.Errorf("artifact %s: name it %s://%s/%s, as this run's pipeline root %s", uri, root.Scheme, o.Bucket, o.Key, root)
	}
	return o, nil
}

// LocalPath is where a task finds the object o: KFP's mapping of
// s3://bucket/key to /s3/bucket/key (minio:// to /minio/...), which the
// SDK's Artifact.path also computes.
func LocalPath(o Object) string {
	return "/" + o.Scheme + "/" + o.Bucket + "/" + o.Key
}

// Rel is o's key relative to root's (o must be Within root, and not root).
func Rel(o, root Object) string {
	if root.Key == "" {
		return o.Key
	}
	return strings.TrimPrefix(o.Key, root.Key+"/")
}

// KeyOf is the key a file at rel (slash-separated, relative to the local
// directory standing for dir) becomes.
func KeyOf(dir Object, rel string) string {
	if rel == "." || rel == "" {
		return dir.Key
	}
	return dir.Key + "/" + rel
}
