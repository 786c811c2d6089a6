package localcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// enterPrivateNamespace prepares the network and mount namespace the
// supervisor was started in (by `unshare -n -m --propagation private`):
// loopback, a veth carrying the node IP, a route to Service IPs, and
// private /run, /var/lib, /var/log and copies of the sysctls the kubelet
// rewrites. It refuses to run in the host's namespaces.
func enterPrivateNamespace(l Layout, n Network, host HostNamespaces) error {
	if err := refuseHostNamespace(host); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"link", "add", "kfp0", "type", "veth", "peer", "name", "kfp1"},
		{"addr", "add", n.NodeIP.String() + "/24", "dev", "kfp0"},
		{"link", "set", "kfp0", "up"},
		{"link", "set", "kfp1", "up"},
		// Service IPs are DNATed by kube-proxy; locally generated packets need a route first.
		{"route", "add", n.ServiceCIDR, "dev", "kfp0"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, out)
		}
	}
	// Per network namespace: pods' traffic to Service IPs is routed through here.
	if err := os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1"), 0o644); err != nil {
		return err
	}
	if err := syscall.Mount("tmpfs", "/run", "tmpfs", 0, "mode=755"); err != nil {
		return fmt.Errorf("mounting a private /run: %w", err)
	}
	for _, dir := range []string{"var-lib", "var-log"} {
		src := l.Path(dir)
		if err := os.MkdirAll(src, 0o755); err != nil {
			return err
		}
		dst := "/" + strings.ReplaceAll(dir, "-", "/")
		if err := syscall.Mount(src, dst, "", syscall.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind-mounting %s over %s: %w", src, dst, err)
		}
	}
	for _, name := range ProtectedSysctls {
		target := filepath.Join("/proc/sys", name)
		value, err := os.ReadFile(target)
		if err != nil {
			return err
		}
		copyPath := l.Path("sysctl", strings.ReplaceAll(name, "/", "."))
		if err := os.MkdirAll(filepath.Dir(copyPath), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(copyPath, value, 0o644); err != nil {
			return err
		}
		if err := syscall.Mount(copyPath, target, "", syscall.MS_BIND, ""); err != nil {
			return fmt.Errorf("shadowing %s: %w", target, err)
		}
	}
	return createCgroupRoot()
}

func refuseHostNamespace(host HostNamespaces) error {
	if host.Net == "" || host.Mnt == "" {
		return errors.New("the host's namespaces are unknown: start the cluster with hack/cluster.sh up")
	}
	self, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		return err
	}
	selfMnt, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return err
	}
	if self == host.Net || selfMnt == host.Mnt {
		return errors.New("refusing to run in the host's network or mount namespace: start it with hack/cluster.sh up")
	}
	return nil
}

// HostNamespaces are the namespaces the cluster must not run in, as
// /proc/self/ns/{net,mnt} read outside it (e.g. "net:[4026531840]").
type HostNamespaces struct{ Net, Mnt string }

// cgroupHierarchies are the mounted cgroup hierarchies (v1 controllers,
// named hierarchies and the v2 unified mount).
func cgroupHierarchies() ([]string, error) {
	entries, err := os.ReadDir("/sys/fs/cgroup")
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, e := range entries {
		p := filepath.Join("/sys/fs/cgroup", e.Name())
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			dirs = append(dirs, p)
		}
	}
	if len(dirs) == 0 {
		dirs = []string{"/sys/fs/cgroup"}
	}
	return dirs, nil
}

// createCgroupRoot makes CgroupRoot in every hierarchy (the kubelet checks
// it exists); cpuset needs its parent's CPUs and memory nodes to take tasks.
func createCgroupRoot() error {
	hierarchies, err := cgroupHierarchies()
	if err != nil {
		return err
	}
	for _, h := range hierarchies {
		dir := filepath.Join(h, CgroupRoot)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating cgroup %s: %w", dir, err)
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if v, err := os.ReadFile(filepath.Join(h, f)); err == nil {
				if err := os.WriteFile(filepath.Join(dir, f), v, 0o644); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// RemoveCgroups kills every process left in CgroupRoot and removes it from
// every hierarchy, deepest first. It reports what it could not remove.
func RemoveCgroups() error {
	hierarchies, err := cgroupHierarchies()
	if err != nil {
		return err
	}
	var errs []error
	for _, h := range hierarchies {
		root := filepath.Join(h, CgroupRoot)
		if _, err := os.Stat(root); err != nil {
			continue
		}
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for _, d := range dirs {
			killProcs(filepath.Join(d, "cgroup.procs"))
		}
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := rmdirRetry(dirs[i]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func killProcs(procsFile string) {
	data, err := os.ReadFile(procsFile)
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func rmdirRetry(dir string) error {
	var err error
	for i := 0; i < 50; i++ {
		if err = syscall.Rmdir(dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		killProcs(filepath.Join(dir, "cgroup.procs"))
		sleep(100)
	}
	return fmt.Errorf("removing cgroup %s: %w", dir, err)
}

// ProcessesInNetns lists the processes whose network namespace is netns
// (a /proc/PID/ns/net link target such as "net:[4026532]"), except self.
func ProcessesInNetns(netns string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if link, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "net")); err == nil && link == netns {
			pids = append(pids, pid)
		}
	}
	return pids
}
