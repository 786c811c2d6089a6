package release

import (
	"encoding/json"
	"fmt"
	"io"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Write prints runs as a YAML stream ("yaml") or a v1 List ("json").
func Write(w io.Writer, runs []*tektonv1.PipelineRun, format string) error {
	switch format {
	case "yaml":
		for _, pr := range runs {
			data, err := yaml.Marshal(printable(pr))
			if err != nil {
				return err
			}
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
			if _, err := w.Write(data); err != nil {
				return err
			}
		}
		return nil
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		items := make([]printed, len(runs))
		for i, pr := range runs {
			items[i] = printable(pr)
		}
		return enc.Encode(struct {
			APIVersion string    `json:"apiVersion"`
			Kind       string    `json:"kind"`
			Items      []printed `json:"items"`
		}{"v1", "List", items})
	default:
		return fmt.Errorf("unknown output format %q", format)
	}
}

// printed is a PipelineRun without status: a new run has none, and an empty
// "status: {}" would only be noise in what users pipe to kubectl.
type printed struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta        `json:"metadata"`
	Spec            tektonv1.PipelineRunSpec `json:"spec"`
}

func printable(pr *tektonv1.PipelineRun) printed {
	return printed{TypeMeta: pr.TypeMeta, Metadata: pr.ObjectMeta, Spec: pr.Spec}
}
