// Package pipelines holds the pipelineSpec shapes the generator embeds in
// PipelineRuns (the files in package shapes), decoded as Tekton's types and
// defaulted as Tekton's admission webhook would.
package pipelines

import (
	"context"
	"fmt"
	"strings"
	"sync"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"sigs.k8s.io/yaml"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/pipelines/shapes"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
)

// Release is the shape prgen uses: build-push, then update-manifests.
const Release = shapes.Release

var (
	loadOnce sync.Once
	loaded   map[string]*tektonv1.PipelineSpec
	loadErr  error
)

// Get returns the named shape. It is shared: callers must not modify it
// (generator.Build copies it).
func Get(name string) (*tektonv1.PipelineSpec, error) {
	loadOnce.Do(func() { loaded, loadErr = load() })
	if loadErr != nil {
		return nil, loadErr
	}
	spec, ok := loaded[name]
	if !ok {
		return nil, fmt.Errorf("no pipeline shape %q (have: %s)", name, strings.Join(Names(), ", "))
	}
	return spec, nil
}

// ForOperation is the one lookup of an operation: what it is (the shared
// Task it runs, whether it calls the provider) and the shape its
// PipelineRuns embed.
func ForOperation(kind contract.Kind, operation contract.Operation) (taskdef.Operation, *tektonv1.PipelineSpec, error) {
	op, ok := taskdef.Find(kind, operation)
	if !ok {
		return op, nil, fmt.Errorf("no %s operation for kind %s", operation, kind)
	}
	shape, err := Get(op.TaskName())
	return op, shape, err
}

// Names lists the shapes, sorted.
func Names() []string { return shapes.Names() }

func load() (map[string]*tektonv1.PipelineSpec, error) {
	out := map[string]*tektonv1.PipelineSpec{}
	for _, name := range Names() {
		data, err := shapes.Read(name)
		if err != nil {
			return nil, err
		}
		spec := &tektonv1.PipelineSpec{}
		if err := yaml.UnmarshalStrict(data, spec); err != nil {
			return nil, fmt.Errorf("pipeline shape %s.yaml: %w", name, err)
		}
		// Tekton's admission webhook would default types and kinds; doing it
		// once here makes the embedded spec complete and valid as written.
		spec.SetDefaults(context.Background())
		out[name] = spec
	}
	return out, nil
}
