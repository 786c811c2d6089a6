package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"reflect"
	"sort"
	"strings"
	"time"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/cmd/prgen/release"
)

// The targets of issue 28, item 5.
const (
	ratioRuns   = 1000                   // runs at which prgen is compared with kustomize
	minRatio    = 200                    // kustomize's time over prgen's, at least
	timeRuns    = 10000                  // runs prgen alone must print within maxTime
	maxTime     = 250 * time.Millisecond // for timeRuns
	baseRunName = "release"              // kustomize cannot use generateName
)

// matrix is a release matrix of apps × versions of the shape release
// engineers write.
func matrix(apps, versions int) []byte {
	var b bytes.Buffer
	b.WriteString("namespace: ci\nmanifestsRepo: https://example.com/org/manifests.git\napplications:\n")
	for i := 0; i < apps; i++ {
		fmt.Fprintf(&b, "  - name: app-%d\n    repo: https://example.com/org/app-%d.git\n    context: components/app-%d\n    image: registry.example.com/org/app-%d\n    manifests: apps/app-%d\n", i, i, i, i, i)
	}
	b.WriteString("versions:\n")
	for i := 0; i < versions; i++ {
		fmt.Fprintf(&b, "  - name: v0.%d\n    revision: release-0.%d\n    manifestsBranch: release-0.%d\n", i, i, i)
	}
	return b.Bytes()
}

// kustomizeLayout is the kustomize equivalent of runs, as files by relative
// path: the first run as a base with a fixed name, one overlay per
// (application, version) pair that renames it and replaces the labels and
// params that differ, and a root that includes every overlay (a bulk
// trigger). The overlays are what a release engineer would write by hand.
func kustomizeLayout(runs []*release.Run) (map[string][]byte, error) {
	if len(runs) == 0 {
		return nil, errors.New("no runs")
	}
	base := runs[0]
	var printed bytes.Buffer
	if err := release.Write(&printed, []*release.Run{base}, "yaml"); err != nil {
		return nil, err
	}
	// kustomize cannot use generateName: the base gets a fixed name.
	generated := "\n  generateName: " + base.GenerateName + "\n"
	if !bytes.Contains(printed.Bytes(), []byte(generated)) {
		return nil, fmt.Errorf("the base run has no line %q", strings.TrimSpace(generated))
	}
	baseYAML := bytes.Replace(printed.Bytes(), []byte(generated), []byte("\n  name: "+baseRunName+"\n"), 1)
	files := map[string][]byte{
		"base/kustomization.yaml": []byte("resources: [pipelinerun.yaml]\n"),
		"base/pipelinerun.yaml":   baseYAML,
	}
	root := []byte("resources:\n")
	for _, pr := range runs {
		suffix := "-" + strings.TrimSuffix(pr.GenerateName, "-")
		dir := path.Join("overlays", suffix[1:])
		overlay, err := overlay(base, pr, suffix)
		if err != nil {
			return nil, err
		}
		files[dir+"/kustomization.yaml"] = overlay
		root = append(root, "  - "+dir+"\n"...)
	}
	files["kustomization.yaml"] = root
	return files, nil
}

// overlay is the kustomization that turns base into pr (but for its name).
func overlay(base, pr *release.Run, nameSuffix string) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "resources: [../../base]\nnameSuffix: %s\n", quote(nameSuffix))
	var labels []string
	for _, kv := range pr.Labels {
		if base.Labels.Get(kv.Key) != kv.Value {
			labels = append(labels, quote(kv.Key)+": "+quote(kv.Value))
		}
	}
	sort.Strings(labels)
	if len(labels) > 0 {
		fmt.Fprintf(&b, "labels:\n  - pairs: {%s}\n", strings.Join(labels, ", "))
	}
	if len(pr.Params) != len(base.Params) {
		return nil, fmt.Errorf("%s: %d params, the base has %d", pr.GenerateName, len(pr.Params), len(base.Params))
	}
	var ops []string
	for i, p := range pr.Params {
		if p.Name != base.Params[i].Name {
			return nil, fmt.Errorf("%s: param %d is %q, the base's %q (params in one order expected)", pr.GenerateName, i, p.Name, base.Params[i].Name)
		}
		if p.Value != base.Params[i].Value {
			ops = append(ops, fmt.Sprintf("      - {op: replace, path: /spec/params/%d/value, value: %s}\n", i, quote(p.Value)))
		}
	}
	if len(ops) > 0 {
		b.WriteString("patches:\n  - target: {kind: PipelineRun}\n    patch: |-\n")
		b.WriteString(strings.Join(ops, ""))
	}
	return b.Bytes(), nil
}

// quote is s as a double-quoted YAML scalar.
func quote(s string) string {
	data, _ := json.Marshal(s) // a string always marshals
	return string(data)
}

// equivalent checks that two YAML streams hold the same PipelineRuns, whole,
// but for their names: prgen's have generateName, kustomize's fixed names.
// Runs are matched by their app and version labels; order does not matter.
func equivalent(prgen, kustomize []byte) (int, error) {
	want, err := runsByPair(prgen)
	if err != nil {
		return 0, fmt.Errorf("prgen's output: %w", err)
	}
	got, err := runsByPair(kustomize)
	if err != nil {
		return 0, fmt.Errorf("kustomize's output: %w", err)
	}
	if len(got) != len(want) {
		return 0, fmt.Errorf("prgen printed %d runs, kustomize %d", len(want), len(got))
	}
	for pair, w := range want {
		g, ok := got[pair]
		if !ok {
			return 0, fmt.Errorf("kustomize printed no run for %s", pair)
		}
		if where := firstDifference(w, g, ""); where != "" {
			return 0, fmt.Errorf("the runs for %s differ at %s", pair, where)
		}
	}
	return len(want), nil
}

// runsByPair parses a YAML stream of PipelineRuns, drops their names and
// keys them by APP/VERSION.
func runsByPair(stream []byte) (map[string]map[string]any, error) {
	out := map[string]map[string]any{}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(stream)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		var run map[string]any
		if err := yaml.Unmarshal(doc, &run); err != nil {
			return nil, err
		}
		if run == nil {
			continue // an empty document
		}
		meta, _ := run["metadata"].(map[string]any)
		labels, _ := meta["labels"].(map[string]any)
		pair := fmt.Sprintf("%v/%v", labels[release.LabelApp], labels[release.LabelVersion])
		if _, dup := out[pair]; dup {
			return nil, fmt.Errorf("two runs for %s", pair)
		}
		delete(meta, "name")
		delete(meta, "generateName")
		out[pair] = run
	}
}

// firstDifference is the path of a difference between two decoded JSON
// values, or "" when they are equal.
func firstDifference(a, b any, at string) string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := make([]string, 0, len(am)+len(bm))
		for k := range am {
			keys = append(keys, k)
		}
		for k := range bm {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			if d := firstDifference(am[k], bm[k], at+"."+k); d != "" {
				return d
			}
		}
		return ""
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && len(al) == len(bl) {
		for i := range al {
			if d := firstDifference(al[i], bl[i], fmt.Sprintf("%s[%d]", at, i)); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(a, b) {
		return fmt.Sprintf("%s (prgen %v, kustomize %v)", at, a, b)
	}
	return ""
}
