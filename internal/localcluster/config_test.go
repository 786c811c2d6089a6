package localcluster

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

var testLayout = Layout{Dir: "/state", Bin: "/bin-dir"}

// Every listener a component opens is on loopback or the node IP, which
// lives only inside the cluster's namespace.
func TestComponentsListenOnlyInsideTheNamespace(t *testing.T) {
	n := DefaultNetwork
	allowed := func(hostport string) bool {
		host, _, err := net.SplitHostPort(hostport)
		if err != nil {
			host = hostport
		}
		ip := net.ParseIP(host)
		return host == "0.0.0.0" /* apiserver, inside the namespace */ || (ip != nil && (ip.IsLoopback() || ip.Equal(n.NodeIP)))
	}
	listenFlags := map[string][]string{
		"etcd":                    {"listen-client-urls", "listen-peer-urls"},
		"kube-apiserver":          {"bind-address"},
		"kube-controller-manager": {"bind-address"},
		"kube-scheduler":          {"bind-address"},
	}
	for _, c := range Components(testLayout, n) {
		for _, f := range listenFlags[c.Name] {
			v, ok := flagValue(c.Args, f)
			require.True(t, ok, "%s sets --%s", c.Name, f)
			for _, u := range strings.Split(v, ",") {
				u = strings.TrimPrefix(strings.TrimPrefix(u, "http://"), "https://")
				assert.True(t, allowed(u), "%s --%s=%s", c.Name, f, v)
			}
		}
		assert.True(t, strings.HasPrefix(c.Args[0], testLayout.Bin) || c.Name == "containerd", "%s runs from bin/", c.Name)
	}

	// Parsed strictly into the kubelet's own configuration type: a misspelt field fails here.
	var kubelet kubeletv1beta1.KubeletConfiguration
	require.NoError(t, yaml.UnmarshalStrict([]byte(KubeletConfig(testLayout, n)), &kubelet), "the kubelet config parses")
	assert.True(t, allowed(kubelet.Address) && allowed(kubelet.HealthzBindAddress))
	assert.Zero(t, kubelet.ReadOnlyPort, "no unauthenticated kubelet port")
	assert.Equal(t, CgroupRoot, kubelet.CgroupRoot, "every cgroup under one root that down removes")
	require.NotNil(t, kubelet.FailCgroupV1)
	assert.False(t, *kubelet.FailCgroupV1, "this machine has cgroup v1")
	require.NotNil(t, kubelet.OOMScoreAdj)
	assert.Zero(t, *kubelet.OOMScoreAdj, "root lacks CAP_SYS_RESOURCE here")
	assert.False(t, *kubelet.Authentication.Anonymous.Enabled)
	assert.Equal(t, kubeletv1beta1.KubeletAuthorizationModeWebhook, kubelet.Authorization.Mode)

	var proxy kubeproxyv1alpha1.KubeProxyConfiguration
	require.NoError(t, yaml.UnmarshalStrict([]byte(KubeProxyConfig(testLayout, n)), &proxy), "the kube-proxy config parses")
	assert.True(t, allowed(proxy.HealthzBindAddress) && allowed(proxy.MetricsBindAddress))
	require.NotNil(t, proxy.Conntrack.MaxPerCore)
	assert.Zero(t, *proxy.Conntrack.MaxPerCore, "kube-proxy leaves the machine-wide conntrack table size alone")
	assert.EqualValues(t, "iptables", proxy.Mode)
}

func TestContainerdAndCNIConfig(t *testing.T) {
	c := ContainerdConfig(testLayout, DefaultNetwork)
	for _, want := range []string{
		`restrict_oom_score_adj = true`,
		`sandbox_image = "10.200.0.1:5000/pause:3.10"`,
		`endpoint = ["http://10.200.0.1:5000"]`,
		`conf_dir = "/state/cni"`,
		`root = "/var/lib/containerd"`, // the namespace's private /var/lib
	} {
		assert.Contains(t, c, want)
	}
	var cni struct {
		Plugins []struct {
			Type   string `json:"type"`
			IPMasq bool   `json:"ipMasq"`
			IPAM   struct {
				Ranges [][]struct {
					Subnet string `json:"subnet"`
				} `json:"ranges"`
			} `json:"ipam"`
		} `json:"plugins"`
	}
	require.NoError(t, json.Unmarshal([]byte(CNIConfig(DefaultNetwork)), &cni))
	require.Len(t, cni.Plugins, 1)
	assert.Equal(t, "bridge", cni.Plugins[0].Type)
	assert.False(t, cni.Plugins[0].IPMasq, "nothing outside the namespace to masquerade to")
	assert.Equal(t, DefaultNetwork.PodCIDR, cni.Plugins[0].IPAM.Ranges[0][0].Subnet)
}

// The certificates carry the identities RBAC and the Node authorizer
// expect, and the apiserver's serves every name pods and tools use.
func TestPKI(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, writePKI(dir, DefaultNetwork))
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	require.NoError(t, err)
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(caPEM))
	load := func(name string) *x509.Certificate {
		data, err := os.ReadFile(filepath.Join(dir, name+".crt"))
		require.NoError(t, err)
		block, _ := pem.Decode(data)
		cert, err := x509.ParseCertificate(block.Bytes)
		require.NoError(t, err)
		return cert
	}
	api := load("apiserver")
	for _, host := range []string{"10.96.0.1", "10.200.0.1", "127.0.0.1", "kubernetes.default.svc"} {
		_, err := api.Verify(x509.VerifyOptions{DNSName: host, Roots: roots})
		assert.NoError(t, err, "apiserver certificate valid for %s", host)
	}
	kubelet := load("kubelet")
	assert.Equal(t, "system:node:kfp-node", kubelet.Subject.CommonName)
	assert.Equal(t, []string{"system:nodes"}, kubelet.Subject.Organization)
	_, err = kubelet.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	assert.NoError(t, err)
	assert.Equal(t, []string{"system:masters"}, load("apiserver-kubelet-client").Subject.Organization, "the apiserver may read logs and exec")
	info, err := os.Stat(filepath.Join(dir, "sa.key"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "keys are private")
}

func TestRefuseHostNamespace(t *testing.T) {
	self, err := os.Readlink("/proc/self/ns/net")
	require.NoError(t, err)
	mnt, err := os.Readlink("/proc/self/ns/mnt")
	require.NoError(t, err)
	assert.ErrorContains(t, refuseHostNamespace(HostNamespaces{Net: self, Mnt: mnt}), "refusing to run in the host's")
	assert.ErrorContains(t, refuseHostNamespace(HostNamespaces{}), "unknown")
	assert.NoError(t, refuseHostNamespace(HostNamespaces{Net: "net:[1]", Mnt: "mnt:[1]"}), "another namespace is fine")
}
