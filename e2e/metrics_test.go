//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestMetricsNeedAnAuthorisedToken: the operator's /metrics answer only a
// caller whose token the API server authenticates and whom RBAC lets `get`
// /metrics (the chart's metrics-reader ClusterRole).
func TestMetricsNeedAnAuthorisedToken(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t, "e2e-metrics")
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(root, "bin", "kubeconfig"))
	require.NoError(t, err)
	clientset, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)

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
	url := fmt.Sprintf("https://%s:8443/metrics", pods.Items[0].Status.PodIP)
	httpClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the operator's self-signed certificate
	}}
	get := func(bearer string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, url, nil)
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
	// RBAC for a new binding can take a moment to reach the authorizer.
	waitFor(t, time.Minute, "metrics for the scraper", func() (bool, string) {
		code, body := get(scraper)
		return code == http.StatusOK, fmt.Sprintf("%d %.200s", code, body)
	})
	_, body := get(scraper)
	assert.Contains(t, body, "controller_runtime_reconcile_total")
	code, _ := get("")
	assert.Equal(t, http.StatusUnauthorized, code, "no token")
	code, _ = get(stranger)
	assert.Equal(t, http.StatusForbidden, code, "a token without the metrics-reader role")
	code, _ = get("not-a-token")
	assert.Equal(t, http.StatusUnauthorized, code, "a token the API server does not know")
}
