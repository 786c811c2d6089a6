//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	operatorNamespace = "kfp-tekton-operator"
	leaseName         = "kfp-tekton-operator.pipelines.kubeflow.org"
)

func currentLease(t *testing.T) coordinationv1.Lease {
	t.Helper()
	var lease coordinationv1.Lease
	require.NoError(t, cl.Get(context.Background(), client.ObjectKey{Namespace: operatorNamespace, Name: leaseName}, &lease))
	return lease
}

func holder(l coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// podUID is the UID of the operator pod a lease holder identity names.
func podUID(t *testing.T, identity string) string {
	t.Helper()
	podName, _, _ := strings.Cut(identity, "_")
	var pod corev1.Pod
	require.NoError(t, cl.Get(context.Background(), client.ObjectKey{Namespace: operatorNamespace, Name: podName}, &pod))
	return string(pod.UID)
}

// leaderPID is the process ID of the operator's leader on the node.
func leaderPID(t *testing.T) int {
	t.Helper()
	uid := podUID(t, holder(currentLease(t)))
	return findProcess(t, "operator", "cgroup", uid, strings.ReplaceAll(uid, "-", "_"))
}

// rssKiB is the resident memory of process pid, in KiB.
func rssKiB(t *testing.T, pid int) int64 {
	t.Helper()
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	require.NoError(t, err)
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			require.NoError(t, err)
			return kib
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

// findProcess is the process named comm whose /proc file (cgroup: a pod's
// names its UID; cmdline) holds one of marks.
func findProcess(t *testing.T, comm, file string, marks ...string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		name, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if strings.TrimSpace(string(name)) != comm {
			continue
		}
		text, err := os.ReadFile(filepath.Join("/proc", e.Name(), file))
		if err != nil || !slices.ContainsFunc(marks, func(m string) bool { return strings.Contains(string(text), m) }) {
			continue
		}
		return pid
	}
	t.Fatalf("no %s process with %q in its %s", comm, marks, file)
	return 0
}

// killProcess sends SIGKILL to the process findProcess finds.
func killProcess(t *testing.T, comm, file string, marks ...string) {
	t.Helper()
	require.NoError(t, syscall.Kill(findProcess(t, comm, file, marks...), syscall.SIGKILL))
}

// envInt is the number in environment variable name, or def.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
