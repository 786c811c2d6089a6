// Command gen adds the conversion webhook to each generated CRD that
// serves more than one version (controller-gen writes none): the chart's
// Service in the chart's default namespace, which the operator corrects
// at start when installed elsewhere, and whose CA bundle it injects.
//
//	go run ./internal/conversionwebhook/gen DIR
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/conversionwebhook"
)

// The chart's defaults (config/helm/kfp-tekton-operator).
const (
	namespace = "kfp-tekton-operator"
	service   = "kfp-tekton-operator-webhook"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen DIR (the generated CRDs)")
		os.Exit(2)
	}
	files, err := filepath.Glob(filepath.Join(os.Args[1], "*.yaml"))
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("no CRDs in %s", os.Args[1])
	}
	for _, f := range files {
		if err != nil {
			break
		}
		err = addConversion(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "conversionwebhook/gen:", err)
		os.Exit(1)
	}
}

func addConversion(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if len(crd.Spec.Versions) < 2 || crd.Spec.Conversion != nil {
		return nil
	}
	stanza, err := yaml.Marshal(map[string]any{"conversion": conversionwebhook.Conversion(conversionwebhook.Service(namespace, service), nil)})
	if err != nil {
		return err
	}
	// Inserted as text under spec:, so the rest stays as controller-gen wrote it.
	i := bytes.Index(data, []byte("\nspec:\n"))
	if i < 0 {
		return fmt.Errorf("%s: no top-level spec", file)
	}
	i += len("\nspec:\n")
	var indented strings.Builder
	for _, line := range strings.SplitAfter(strings.TrimRight(string(stanza), "\n")+"\n", "\n") {
		if line != "" {
			indented.WriteString("  " + line)
		}
	}
	out := append(append(append([]byte{}, data[:i]...), indented.String()...), data[i:]...)
	return os.WriteFile(file, out, 0o644)
}
