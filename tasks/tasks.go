// Package tasks embeds the shared Tasks (tasks/*.yaml, generated from
// tasks/taskdef) that the operator applies once per workflow namespace.
// README.md beside this file specifies the provider contract they implement.
package tasks

import (
	"embed"
	"fmt"
	"io/fs"
	"sync"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"sigs.k8s.io/yaml"
)

//go:embed kfp-*.yaml
var files embed.FS

var (
	loadOnce sync.Once
	loaded   []*tektonv1.Task
	loadErr  error
)

// All returns the shared Tasks, sorted by name. They are shared: copy
// before modifying.
func All() ([]*tektonv1.Task, error) {
	loadOnce.Do(func() { loaded, loadErr = load() })
	return loaded, loadErr
}

// Names of the shared Tasks, sorted.
func Names() ([]string, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	names := make([]string, len(all))
	for i, t := range all {
		names[i] = t.Name
	}
	return names, nil
}

func load() ([]*tektonv1.Task, error) {
	paths, err := fs.Glob(files, "kfp-*.yaml")
	if err != nil {
		return nil, err
	}
	out := make([]*tektonv1.Task, 0, len(paths))
	for _, p := range paths {
		data, err := files.ReadFile(p)
		if err != nil {
			return nil, err
		}
		task := &tektonv1.Task{}
		if err := yaml.UnmarshalStrict(data, task); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, task)
	}
	return out, nil
}
