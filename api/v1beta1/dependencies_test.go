package v1beta1

import (
	"slices"
	"testing"
)

func TestDependencyNames(t *testing.T) {
	from := func(rc string) *ValueFrom {
		return &ValueFrom{RunConfigurationRef: RunConfigurationRef{Name: rc, OutputArtifact: "out"}}
	}
	params := []RuntimeParameter{
		{Name: "a", ValueFrom: from("zeta")},
		{Name: "b", Value: "plain"},
		{Name: "c", ValueFrom: from("alpha")},
		{Name: "d", ValueFrom: from("zeta")},
	}
	if got, want := DependencyNames(params), []string{"alpha", "zeta"}; !slices.Equal(got, want) {
		t.Errorf("DependencyNames = %v, want %v (each once, sorted)", got, want)
	}
	if got := DependencyNames([]RuntimeParameter{{Name: "b", Value: "plain"}}); got != nil {
		t.Errorf("DependencyNames of plain values = %v, want nil", got)
	}
}
