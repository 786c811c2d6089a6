// Package scheme is the one runtime.Scheme every controller, test and
// tool of this project uses.
package scheme

import (
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	pipelinesv1alpha6 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1alpha6"
	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// New knows the built-in kinds, this project's kinds, Tekton v1 and
// CustomResourceDefinitions (the conversion webhook keeps its CRDs').
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, pipelinesv1beta1.AddToScheme, pipelinesv1alpha6.AddToScheme, tektonv1.AddToScheme,
		apiextensionsv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err) // only on conflicting registrations: a programming error
		}
	}
	return s
}
