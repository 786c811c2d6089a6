package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kubeflow/pipelines/api/v2alpha1/go/pipelinespec"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/launcher"
)

// The execution cache of launched tasks (launcher.Fingerprint): one
// directory per fingerprint under the cache directory (on the namespace's
// artifacts volume, so only that namespace's runs share it), holding
// entry.json (a launcher.CacheEntry) and a copy of each output artifact
// under artifacts/NAME. An entry is written whole into a temporary
// directory and renamed into place, so a reader never sees half of one;
// of two runs storing the same fingerprint at once, the first rename
// wins and the other is dropped.

const cacheEntryFile = "entry.json"

// cacheFlags are launch's caching flags.
type cacheFlags struct {
	dir, enabled, image, cachedResult string
}

func (c *cacheFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.dir, "cache-dir", "", "the execution cache's directory (none: no caching)")
	fs.StringVar(&c.enabled, "caching", "true", "the run's caching switch: true reuses and stores executions, false runs and stores nothing")
	fs.StringVar(&c.image, "image", "", "the component's image, part of the cache fingerprint")
	fs.StringVar(&c.cachedResult, "cached-result", "", "where true (outputs reused) or false goes (a Tekton result)")
}

// active says the task may reuse and store executions.
func (c cacheFlags) active() bool { return c.dir != "" && c.enabled == "true" }

// fingerprint is the execution's cache key, input artifacts by content.
func (c cacheFlags) fingerprint(spec launcher.Spec, ei *pipelinespec.ExecutorInput) (string, error) {
	digests := map[string]string{}
	for name, list := range ei.GetInputs().GetArtifacts() {
		var each []string // an artifact list's items in order
		for _, a := range list.GetArtifacts() {
			local, err := launcher.LocalPath(a.GetUri())
			if err != nil {
				return "", err
			}
			d, err := treeDigest(local)
			if err != nil {
				return "", fmt.Errorf("input artifact %q: %w", name, err)
			}
			each = append(each, d)
		}
		digests[name] = strings.Join(each, ",")
	}
	return launcher.Fingerprint(spec, c.image, ei, digests)
}

// treeDigest is the SHA-256 of a file's content, or of a directory's
// files' relative paths and contents in order; a missing artifact has
// the digest "absent".
func treeDigest(root string) (string, error) {
	info, err := os.Stat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return "absent", nil
	}
	if err != nil {
		return "", err
	}
	h := sha256.New()
	if !info.IsDir() {
		if err := hashFile(h, root); err != nil {
			return "", err
		}
		return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
	}
	var files []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		fmt.Fprintf(h, "%d:%s", len(rel), rel)
		if err := hashFile(h, f); err != nil {
			return "", err
		}
	}
	return "dir-sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

func hashFile(h io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	fmt.Fprintf(h, "%d:", info.Size())
	_, err = io.Copy(h, f)
	return err
}

// lookup returns the entry stored for fingerprint, if any.
func (c cacheFlags) lookup(fingerprint string) (*launcher.CacheEntry, bool) {
	data, err := os.ReadFile(filepath.Join(c.dir, fingerprint, cacheEntryFile))
	if err != nil {
		return nil, false
	}
	var e launcher.CacheEntry
	if json.Unmarshal(data, &e) != nil || e.Fingerprint != fingerprint {
		return nil, false // not an entry of ours: run, and do not trust it
	}
	return &e, true
}

// restore puts a cached execution's artifacts where this task's go.
func (c cacheFlags) restore(e *launcher.CacheEntry, ei *pipelinespec.ExecutorInput) error {
	for name, list := range ei.GetOutputs().GetArtifacts() {
		local, err := launcher.LocalPath(list.GetArtifacts()[0].GetUri())
		if err != nil {
			return err
		}
		src := filepath.Join(c.dir, e.Fingerprint, "artifacts", name)
		if _, err := os.Lstat(src); errors.Is(err, fs.ErrNotExist) {
			continue // the execution wrote nothing there
		}
		if err := copyTree(src, local); err != nil {
			return fmt.Errorf("output artifact %q: %w", name, err)
		}
	}
	return nil
}

// store keeps a finished execution.
func (c cacheFlags) store(e launcher.CacheEntry, ei *pipelinespec.ExecutorInput) error {
	// Writable by any user (tasks may run as different users), as the
	// artifact directories are; an entry, once in place, readable by all.
	if err := mkdirAll(c.dir); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(c.dir, ".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	for name, list := range ei.GetOutputs().GetArtifacts() {
		local, err := launcher.LocalPath(list.GetArtifacts()[0].GetUri())
		if err != nil {
			return err
		}
		if _, err := os.Lstat(local); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := copyTree(local, filepath.Join(tmp, "artifacts", name)); err != nil {
			return fmt.Errorf("output artifact %q: %w", name, err)
		}
	}
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, cacheEntryFile), data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(c.dir, e.Fingerprint)); err != nil {
		if _, stored := c.lookup(e.Fingerprint); stored {
			return nil // another run stored it first
		}
		return err
	}
	return nil
}

// copyTree copies a file or a directory of regular files and directories
// (symbolic links and other special files are refused: an artifact is
// data).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o777)
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is not a regular file", path)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o777); err != nil {
			return err
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}
