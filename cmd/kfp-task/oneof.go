package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// oneof carries a dsl.OneOf output past Tekton's skipping: a task that
// takes a result of a task skipped by its when expressions is skipped
// too, so the value cannot go from the branches to the consumer as
// results. Each branch's producer publishes its result on the artifacts
// volume (a path of its own, in the run's directory); a selector task,
// after every branch (runAfter runs it whether they ran or were skipped),
// takes the one value published and gives it as its own result.
//
//	kfp-task oneof publish SRC DST [SRC DST ...]
//	kfp-task oneof select RESULT CANDIDATE...
func oneof(args []string) error {
	switch {
	case len(args) >= 3 && len(args)%2 == 1 && args[0] == "publish":
		for i := 1; i < len(args); i += 2 {
			if err := publishValue(args[i], args[i+1]); err != nil {
				return err
			}
		}
		return nil
	case len(args) >= 3 && args[0] == "select":
		return selectValue(args[1], args[2:])
	}
	return errors.New("oneof: want publish SRC DST [SRC DST ...], or select RESULT CANDIDATE [CANDIDATE ...]")
}

// publishValue copies a result file to the volume, whole or not at all.
func publishValue(src, dst string) error {
	if !filepath.IsAbs(dst) {
		return fmt.Errorf("oneof publish: %q is not an absolute path", dst)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("oneof publish: the task's result: %w", err)
	}
	if err := mkdirAll(filepath.Dir(dst)); err != nil {
		return fmt.Errorf("oneof publish: %w", err)
	}
	tmp := dst + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("oneof publish: %w", err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return fmt.Errorf("oneof publish: %w", err)
	}
	return nil
}

// selectValue writes to result the value of the one candidate published:
// exactly one branch of an if/elif/else runs.
func selectValue(result string, candidates []string) error {
	var found []string
	var value []byte
	for _, c := range candidates {
		data, err := os.ReadFile(c)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return fmt.Errorf("oneof select: %w", err)
		}
		found, value = append(found, c), data
	}
	switch len(found) {
	case 0:
		return fmt.Errorf("oneof select: no branch produced the dsl.OneOf value (none of %s exists)", strings.Join(candidates, ", "))
	case 1:
		return os.WriteFile(result, value, 0o644)
	}
	return fmt.Errorf("oneof select: more than one branch produced the dsl.OneOf value (%s)", strings.Join(found, ", "))
}
