package lifecycle

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// A burst of reads of one account costs one request; an answer, "not
// found" included, is kept for the TTL and then asked again; a copy is
// handed out, so a caller's change never reaches the cache.
func TestTTLReaderKeepsAnswersForItsTTL(t *testing.T) {
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "kfp-provider"},
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "regcred"}}}
	gets := map[string]int{}
	c := fake.NewClientBuilder().WithObjects(sa).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			gets[key.Name]++
			return c.Get(ctx, key, obj, opts...)
		},
	}).Build()
	now := time.Unix(1000, 0)
	r := newTTLReader[corev1.ServiceAccount](c, corev1.Resource("serviceaccounts"), 10*time.Second, func() time.Time { return now })

	for range 5 {
		got := &corev1.ServiceAccount{}
		require.NoError(t, r.Get(ctx, client.ObjectKeyFromObject(sa), got))
		assert.Equal(t, sa.ImagePullSecrets, got.ImagePullSecrets)
		got.ImagePullSecrets[0].Name = "changed by a caller"
	}
	assert.Equal(t, 1, gets["kfp-provider"], "one request within the TTL")

	for range 3 {
		err := r.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "missing"}, &corev1.ServiceAccount{})
		assert.True(t, apierrors.IsNotFound(err), "%v", err)
	}
	assert.Equal(t, 1, gets["missing"], "not found is remembered too")

	sa.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "rotated"}}
	require.NoError(t, c.Update(ctx, sa))
	now = now.Add(11 * time.Second)
	got := &corev1.ServiceAccount{}
	require.NoError(t, r.Get(ctx, client.ObjectKeyFromObject(sa), got))
	assert.Equal(t, "rotated", got.ImagePullSecrets[0].Name, "asked again after the TTL")
	assert.Equal(t, 2, gets["kfp-provider"])

	err := r.Get(ctx, client.ObjectKeyFromObject(sa), &corev1.ConfigMap{})
	assert.True(t, apierrors.IsNotFound(err), "other kinds pass through: %v", err)
	assert.Equal(t, 3, gets["kfp-provider"])
}
