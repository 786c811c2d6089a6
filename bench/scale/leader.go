package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/bench/internal/measure"
)

// The operator's leader process, its metrics and Tekton's controller
// process, which the bench reads figures from.

// leader is the operator process holding the leader lease.
func (b *bench) leader(ctx context.Context) (*process, error) {
	lease := &coordinationv1.Lease{}
	if err := b.c.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: leaseName}, lease); err != nil {
		return nil, err
	}
	if lease.Spec.HolderIdentity == nil {
		return nil, errors.New("the operator has no leader")
	}
	pod, _, _ := strings.Cut(*lease.Spec.HolderIdentity, "_") // controller-runtime: hostname_uuid
	p, err := findProcess(operatorNamespace, pod)
	if err != nil {
		return nil, err
	}
	podObj := &corev1.Pod{}
	if err := b.c.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: pod}, podObj); err != nil {
		return nil, err
	}
	p.podIP = podObj.Status.PodIP
	return p, nil
}

// metricsReader binds a service account to the chart's metrics-reader role
// and returns a scraper of the leader's /metrics with its token.
func (b *bench) metricsReader(ctx context.Context, leader *process) (*scraper, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: b.ns, Name: "metrics-scraper"}}
	if err := b.c.Create(ctx, sa); err != nil {
		return nil, err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: b.ns + "-metrics"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "kfp-tekton-operator-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: b.ns, Name: sa.Name}},
	}
	if err := b.c.Create(ctx, binding); err != nil {
		return nil, err
	}
	unbind := func() { _ = b.c.Delete(context.Background(), binding) }
	tr, err := b.clientset.CoreV1().ServiceAccounts(b.ns).CreateToken(ctx, sa.Name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](int64((4 * b.limit).Seconds()))}},
		metav1.CreateOptions{})
	if err != nil {
		unbind()
		return nil, err
	}
	s := &scraper{url: "https://" + leader.podIP + ":8443/metrics", token: tr.Status.Token, cleanUp: unbind, http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the operator's self-signed certificate
	}}}
	// A new binding takes a moment to reach the authorizer.
	if err := b.waitFor(ctx, time.Minute, "the operator's metrics", func() (bool, error) {
		_, err := s.requests()
		return err == nil, nil
	}); err != nil {
		s.cleanUp()
		return nil, err
	}
	return s, nil
}

// scraper reads client-go's request counters from the operator's metrics.
type scraper struct {
	url, token string
	http       *http.Client
	cleanUp    func()
}

// requests are the operator's API requests so far by HTTP method
// (rest_client_requests_total: every attempt, any answer).
func (s *scraper) requests() (map[string]float64, error) {
	req, err := http.NewRequest(http.MethodGet, s.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("metrics: %s", resp.Status)
	}
	return measure.RequestsByMethod(resp.Body)
}

// process is a container's main process on the real node, found through
// /proc (the local cluster shares the host's PID namespace).
type process struct {
	pid   int
	podIP string
}

func (p *process) cpuSeconds() float64 { return measure.CPUSeconds(p.pid) }

// findProcess finds a container's process whose pod's name starts with
// podPrefix.
func findProcess(ns, podPrefix string) (*process, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			continue
		}
		if pod, ok := measure.PodOf(string(environ)); ok && strings.HasPrefix(pod, podPrefix) {
			return &process{pid: pid}, nil
		}
	}
	return nil, fmt.Errorf("no process of a pod %s* (namespace %s) on this node", podPrefix, ns)
}

// boundSettings are the operator's settings that shape a burst, as its
// running configuration has them (the chart's ConfigMap), so a figure
// printed says what it was measured with.
func (b *bench) boundSettings(ctx context.Context) string {
	cm := &corev1.ConfigMap{}
	if err := b.c.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: operatorNamespace + "-config"}, cm); err != nil {
		return "operator configuration unread: " + err.Error()
	}
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(cm.Data["config.yaml"]), &cfg); err != nil {
		return "operator configuration unread: " + err.Error()
	}
	var out []string
	for _, key := range []string{"maxOperationsInFlight", "operationSlowdownLimit", "maxConcurrentReconciles", "kubeAPIQPS"} {
		out = append(out, fmt.Sprintf("%s %v", key, cfg[key]))
	}
	return "operator: " + strings.Join(out, ", ")
}
