//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestMetricsNeedAnAuthorisedToken: the operator's /metrics answer only a
// caller whose token the API server authenticates and whom RBAC lets `get`
// /metrics (the chart's metrics-reader ClusterRole).
func TestMetricsNeedAnAuthorisedToken(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "e2e-metrics")

	token := func(sa string) string {
		require.NoError(t, client.IgnoreAlreadyExists(cl.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}})))
		tr, err := clientset.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa,
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
		require.NoError(t, err)
		return tr.Status.Token
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-scraper"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "kfp-tekton-operator-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: "scraper"}},
	}
	require.NoError(t, cl.Create(ctx, binding))
	t.Cleanup(func() { _ = cl.Delete(ctx, binding) })
	scraper, stranger := token("scraper"), token("stranger")

	pods := &corev1.PodList{}
	require.NoError(t, cl.List(ctx, pods, client.InNamespace("kfp-tekton-operator"), client.MatchingLabels{"app.kubernetes.io/name": "kfp-tekton-operator"}))
	require.NotEmpty(t, pods.Items)
	url := func(pod corev1.Pod) string { return fmt.Sprintf("https://%s:8443/metrics", pod.Status.PodIP) }
	httpClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the operator's self-signed certificate
	}}
	getFrom := func(pod corev1.Pod, bearer string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, url(pod), nil)
		require.NoError(t, err)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := httpClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	get := func(bearer string) (int, string) { return getFrom(pods.Items[0], bearer) }
	// RBAC for a new binding can take a moment to reach the authorizer.
	waitFor(t, time.Minute, "metrics for the scraper", func() (bool, string) {
		code, body := get(scraper)
		return code == http.StatusOK, fmt.Sprintf("%d %.200s", code, body)
	})
	// The leader runs the controllers; the other replica serves its metrics too.
	reconciles := false
	for _, pod := range pods.Items {
		code, body := getFrom(pod, scraper)
		assert.Equal(t, http.StatusOK, code, pod.Name)
		reconciles = reconciles || strings.Contains(body, "controller_runtime_reconcile_total")
	}
	assert.True(t, reconciles, "the leader's metrics count its reconciles")
	code, _ := get("")
	assert.Equal(t, http.StatusUnauthorized, code, "no token")
	code, body := get(stranger)
	assert.Equal(t, http.StatusForbidden, code, "a token without the metrics-reader role: %s", body)
	// controller-runtime's filter answers 500 when the TokenReview rejects a
	// token outright (its behaviour, not ours): what matters is no metrics.
	code, body = get("not-a-token")
	assert.Contains(t, []int{http.StatusUnauthorized, http.StatusInternalServerError}, code, "a token the API server does not know")
	assert.NotContains(t, body, "controller_runtime")
}
