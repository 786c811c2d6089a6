package lifecycle

import (
	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// testKind is a Kind of T with traits and nothing else to say.
type testKind[T Subject] struct {
	traits Traits
	new    func() T
}

func (k testKind[T]) Traits() Traits    { return k.traits }
func (k testKind[T]) New() T            { return k.new() }
func (k testKind[T]) Inputs(T) Inputs   { return Inputs{} }
func (k testKind[T]) Record(T, Outputs) {}
func (k testKind[T]) Prepare(T, *pipelinesv1beta1.Provider) (Prepared, error) {
	return Prepared{}, nil
}
