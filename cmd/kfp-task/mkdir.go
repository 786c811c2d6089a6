package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// mkdirCmd is the launcher contract's prepare step (package kfpir, "Glue:
// the launcher contract"): each DIR, absolute, is created with its missing
// parents, or accepted if it is already a directory.
//
//	kfp-task mkdir DIR...
func mkdirCmd(dirs []string) error {
	if len(dirs) == 0 {
		return errors.New("mkdir: no directory given")
	}
	for _, dir := range dirs {
		// A relative path would depend on the image's working directory.
		if !filepath.IsAbs(dir) {
			return fmt.Errorf("mkdir: %q is not an absolute path", dir)
		}
	}
	for _, dir := range dirs {
		if err := mkdirAll(filepath.Clean(dir)); err != nil {
			return fmt.Errorf("mkdir: %w", err)
		}
	}
	return nil
}

// mkdirAll is os.MkdirAll, except that every directory it creates is made
// writable by all whatever the umask: the component's step, which writes
// the artifacts, may run as another user than this one. Directories that
// exist are left as they are, symbolic links to directories included.
func mkdirAll(dir string) error {
	info, err := os.Stat(dir)
	switch {
	case err == nil && info.IsDir():
		return nil
	case err == nil:
		return fmt.Errorf("%s exists and is not a directory", dir)
	case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return err
	}
	// Missing, or a parent is not a directory: the parent says which.
	if parent := filepath.Dir(dir); parent != dir {
		if err := mkdirAll(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o777); err != nil {
		// Tasks of one run create their common parents at the same time.
		if errors.Is(err, fs.ErrExist) {
			if info, serr := os.Stat(dir); serr == nil && info.IsDir() {
				return nil
			}
			return fmt.Errorf("%s exists and is not a directory", dir)
		}
		return err
	}
	return os.Chmod(dir, 0o777)
}
