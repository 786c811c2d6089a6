package namespaces

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func TestTerminating(t *testing.T) {
	now := metav1.Now()
	c := fake.NewClientBuilder().WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "live"}},
		// The fake client, like the API server, keeps a deleted object only
		// while a finalizer holds it.
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "deleting", DeletionTimestamp: &now, Finalizers: []string{"kubernetes"}}},
	).Build()
	for ns, want := range map[string]bool{"live": false, "deleting": true, "gone": true} {
		got, err := Terminating(context.Background(), c, ns)
		if err != nil || got != want {
			t.Errorf("Terminating(%s) = %v, %v; want %v, nil", ns, got, err, want)
		}
	}
}

func TestTerminatingPassesOtherErrorsOn(t *testing.T) {
	failed := errors.New("unavailable")
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return failed
		},
	}).Build()
	if got, err := Terminating(context.Background(), c, "live"); got || !errors.Is(err, failed) {
		t.Errorf("Terminating = %v, %v; want false, %v", got, err, failed)
	}
}
