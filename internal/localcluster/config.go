// Package localcluster runs the project's local default cluster: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy, a
// kubelet with Debian's containerd, runc and CNI plugins, and an OCI
// registry, all inside one private network + mount namespace that
// hack/cluster.sh creates (DESIGN §9). The functions here that build
// configuration are pure; the supervisor starts and stops the processes.
package localcluster

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
)

// Network is the addressing inside the cluster's private network namespace.
// None of it is reachable from outside the namespace.
type Network struct {
	NodeName      string
	NodeIP        net.IP // on a veth inside the namespace: the kubelet refuses a loopback node IP
	PodCIDR       string
	ServiceCIDR   string
	APIServiceIP  net.IP // the first address of ServiceCIDR: the `kubernetes` Service
	APIServerPort int
	RegistryPort  int
}

// DefaultNetwork is the only addressing the local cluster uses.
var DefaultNetwork = Network{
	NodeName:      "kfp-node",
	NodeIP:        net.ParseIP("10.200.0.1"),
	PodCIDR:       "10.244.0.0/24",
	ServiceCIDR:   "10.96.0.0/16",
	APIServiceIP:  net.ParseIP("10.96.0.1"),
	APIServerPort: 6443,
	RegistryPort:  5000,
}

// Registry is the host:port of the local image registry, as pods, the
// kubelet and the tools in the namespace reach it (plain HTTP: a private
// address is insecure to go-containerregistry and configured so in containerd).
func (n Network) Registry() string { return fmt.Sprintf("%s:%d", n.NodeIP, n.RegistryPort) }

// APIServer is the apiserver's URL inside the namespace.
func (n Network) APIServer() string { return fmt.Sprintf("https://%s:%d", n.NodeIP, n.APIServerPort) }

// Layout names the files of one cluster under its state directory.
type Layout struct {
	Dir string // state directory, removed by `hack/cluster.sh down`
	Bin string // where the Kubernetes binaries are
}

// PKI is the path of the certificate or key name in the state directory.
func (l Layout) PKI(name string) string { return filepath.Join(l.Dir, "pki", name) }

// Path is the path of parts under the state directory.
func (l Layout) Path(parts ...string) string {
	return filepath.Join(append([]string{l.Dir}, parts...)...)
}

// Kubeconfig is the path of user's kubeconfig in the state directory.
func (l Layout) Kubeconfig(user string) string { return l.Path("kubeconfig", user) }

// CgroupRoot holds every cgroup the kubelet and containerd create, so
// `down` can remove them all and leave the host's cgroup tree as it was.
const CgroupRoot = "/kfp-tekton-local"

// containerdSocket is on the namespace's private /run.
const containerdSocket = "/run/containerd/containerd.sock"

// Component is one process of the cluster.
type Component struct {
	Name string
	Args []string
	// Ready is an HTTPS or HTTP URL that answers 200 once the component
	// serves; ReadySocket a unix socket that exists once it serves; with
	// neither, the process being alive is enough.
	Ready       string
	ReadySocket string
}

// Components lists the cluster's processes in start order (stopped in reverse).
func Components(l Layout, n Network) []Component {
	bin := func(name string) string { return filepath.Join(l.Bin, name) }
	return []Component{
		{Name: "etcd", Args: []string{bin("etcd"),
			"--name=local", "--data-dir=" + l.Path("etcd"),
			"--listen-client-urls=http://127.0.0.1:2379", "--advertise-client-urls=http://127.0.0.1:2379",
			"--listen-peer-urls=http://127.0.0.1:2380", "--initial-advertise-peer-urls=http://127.0.0.1:2380",
			"--initial-cluster=local=http://127.0.0.1:2380",
			// A throwaway cluster: losing the last writes on a crash is fine, fsync latency is not.
			"--unsafe-no-fsync", "--log-level=warn",
		}, Ready: "http://127.0.0.1:2379/health"},
		{Name: "kube-apiserver", Args: []string{bin("kube-apiserver"),
			"--etcd-servers=http://127.0.0.1:2379",
			"--bind-address=0.0.0.0", fmt.Sprintf("--secure-port=%d", n.APIServerPort), "--advertise-address=" + n.NodeIP.String(),
			"--tls-cert-file=" + l.PKI("apiserver.crt"), "--tls-private-key-file=" + l.PKI("apiserver.key"),
			"--client-ca-file=" + l.PKI("ca.crt"),
			"--service-cluster-ip-range=" + n.ServiceCIDR,
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file=" + l.PKI("sa.pub"), "--service-account-signing-key-file=" + l.PKI("sa.key"),
			"--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
			"--kubelet-client-certificate=" + l.PKI("apiserver-kubelet-client.crt"), "--kubelet-client-key=" + l.PKI("apiserver-kubelet-client.key"),
			// Webhooks are called at their endpoints, not through a Service IP.
			"--enable-aggregator-routing=true",
			// The node name resolves nowhere here; its IP is the only way in.
			"--kubelet-preferred-address-types=InternalIP",
			"--allow-privileged=true", "--profiling=false",
		}, Ready: fmt.Sprintf("https://127.0.0.1:%d/readyz", n.APIServerPort)},
		{Name: "kube-controller-manager", Args: []string{bin("kube-controller-manager"),
			"--kubeconfig=" + l.Kubeconfig("controller-manager"),
			"--authentication-kubeconfig=" + l.Kubeconfig("controller-manager"), "--authorization-kubeconfig=" + l.Kubeconfig("controller-manager"),
			"--bind-address=127.0.0.1", "--secure-port=10257",
			"--service-account-private-key-file=" + l.PKI("sa.key"), "--root-ca-file=" + l.PKI("ca.crt"),
			"--use-service-account-credentials=true",
			"--cluster-signing-cert-file=" + l.PKI("ca.crt"), "--cluster-signing-key-file=" + l.PKI("ca.key"),
			"--service-cluster-ip-range=" + n.ServiceCIDR, "--allocate-node-cidrs=false",
			"--leader-elect=false", "--profiling=false",
		}, Ready: "https://127.0.0.1:10257/healthz"},
		// The supervisor's own binary, serving the local StorageClass (provisioner.go).
		{Name: "volume-provisioner", Args: []string{bin("localcluster"), "provision-volumes",
			"--kubeconfig=" + l.Kubeconfig("admin"), "--dir=" + l.Path("volumes", "provisioned"), "--node=" + n.NodeName}},
		{Name: "kube-scheduler", Args: []string{bin("kube-scheduler"),
			"--kubeconfig=" + l.Kubeconfig("scheduler"),
			"--authentication-kubeconfig=" + l.Kubeconfig("scheduler"), "--authorization-kubeconfig=" + l.Kubeconfig("scheduler"),
			"--bind-address=127.0.0.1", "--secure-port=10259", "--leader-elect=false", "--profiling=false",
		}, Ready: "https://127.0.0.1:10259/healthz"},
		{Name: "containerd", Args: []string{"containerd", "--config=" + l.Path("containerd.toml")},
			ReadySocket: containerdSocket},
		{Name: "kubelet", Args: []string{bin("kubelet"),
			"--config=" + l.Path("kubelet.yaml"), "--kubeconfig=" + l.Kubeconfig("kubelet"),
			"--node-ip=" + n.NodeIP.String(), "--hostname-override=" + n.NodeName,
		}, Ready: "http://127.0.0.1:10248/healthz"},
		{Name: "kube-proxy", Args: []string{bin("kube-proxy"), "--config=" + l.Path("kube-proxy.yaml")},
			Ready: "http://127.0.0.1:10256/healthz"},
	}
}

// ContainerdConfig is containerd's configuration: state on the namespace's
// private /var/lib and /run, the local registry over plain HTTP, and the
// settings a root without CAP_SYS_RESOURCE needs.
func ContainerdConfig(l Layout, n Network) string {
	return fmt.Sprintf(`version = 2
root = "/var/lib/containerd"
state = "/run/containerd"
oom_score = 0
[grpc]
  address = "%[3]s"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "%[1]s/pause:3.10"
  # Lowering oom_score_adj needs CAP_SYS_RESOURCE, which root lacks here.
  restrict_oom_score_adj = true
  enable_cdi = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "%[2]s"
  [plugins."io.containerd.grpc.v1.cri".registry.mirrors."%[1]s"]
    endpoint = ["http://%[1]s"]
`, n.Registry(), l.Path("cni"), containerdSocket)
}

// CNIConfig is one bridge network for pods, without masquerading: there is
// nowhere outside the namespace to go.
func CNIConfig(n Network) string {
	return fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": "kfp-local",
  "plugins": [{
    "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
    "ipam": {"type": "host-local", "ranges": [[{"subnet": %q}]], "routes": [{"dst": "0.0.0.0/0"}]}
  }]
}
`, n.PodCIDR)
}

// KubeletConfig is the kubelet's configuration: cgroup v1 with cgroupfs
// under CgroupRoot, webhook authn/authz, no swap or OOM-score demands, and
// eviction thresholds that a shared build machine does not trip.
func KubeletConfig(l Layout, n Network) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %s
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: %s}
authorization: {mode: Webhook}
tlsCertFile: %s
tlsPrivateKeyFile: %s
containerRuntimeEndpoint: unix://%[6]s
cgroupDriver: cgroupfs
cgroupRoot: %[5]s
failCgroupV1: false
failSwapOn: false
oomScoreAdj: 0
clusterDomain: cluster.local
resolvConf: ""
serializeImagePulls: false
registerNode: true
maxPods: 110
evictionHard: {memory.available: "100Mi", nodefs.available: "1%%", imagefs.available: "1%%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
`, n.NodeIP, l.PKI("ca.crt"), l.PKI("kubelet-serving.crt"), l.PKI("kubelet-serving.key"), CgroupRoot, containerdSocket)
}

// KubeProxyConfig is kube-proxy in iptables mode, in the namespace's own
// netfilter tables; it leaves every conntrack sysctl as it is (those are
// machine-wide).
func KubeProxyConfig(l Layout, n Network) string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: %s}
hostnameOverride: %s
bindAddress: %s
clusterCIDR: %s
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
iptables: {localhostNodePorts: false}
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`, l.Kubeconfig("kube-proxy"), n.NodeName, n.NodeIP, n.PodCIDR)
}

// Kubeconfig is a kubeconfig for one certificate of clusterCerts.
func Kubeconfig(l Layout, server, cert string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: kfp-local
  cluster: {server: %q, certificate-authority: %q}
users:
- name: %s
  user: {client-certificate: %q, client-key: %q}
contexts:
- name: kfp-local
  context: {cluster: kfp-local, user: %s}
current-context: kfp-local
`, server, l.PKI("ca.crt"), cert, l.PKI(cert+".crt"), l.PKI(cert+".key"), cert)
}

// ProtectedSysctls are machine-wide settings the kubelet rewrites at
// start; the supervisor bind-mounts private copies over them so the host's
// values never change.
var ProtectedSysctls = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
}

// flagValue returns the value of --name=value in args, for tests.
func flagValue(args []string, name string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}
