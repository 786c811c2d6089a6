package localcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

func sleep(ms int) { time.Sleep(time.Duration(ms) * time.Millisecond) }

// Supervisor runs the cluster's processes.
type Supervisor struct {
	Layout  Layout
	Network Network
	Log     *log.Logger
	Host    HostNamespaces

	mu      sync.Mutex
	running []*process
}

type process struct {
	Component
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Run prepares the namespace, writes every configuration, starts the
// registry and the components in order, writes the `ready` file, and then
// runs until ctx ends or a component dies; it always stops what it started.
func (s *Supervisor) Run(ctx context.Context, images BaseImages) (err error) {
	l, n := s.Layout, s.Network
	if err := enterPrivateNamespace(l, n, s.Host); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.stopAll()) }()
	if err := s.writeConfig(); err != nil {
		return err
	}
	started := time.Now()
	stopRegistry, err := serveRegistry(l.Path("registry"), n)
	if err != nil {
		return err
	}
	defer stopRegistry()
	if err := pushBaseImages(n.Registry(), images); err != nil {
		return fmt.Errorf("pushing base images: %w", err)
	}
	died := make(chan *process, 16)
	for _, c := range Components(l, n) {
		p, err := s.start(c, died)
		if err != nil {
			return err
		}
		if err := s.waitReady(ctx, p, 120*time.Second); err != nil {
			return err
		}
		s.Log.Printf("%s ready after %.1fs", c.Name, time.Since(started).Seconds())
	}
	if err := os.WriteFile(l.Path("ready"), []byte(time.Since(started).String()+"\n"), 0o644); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case p := <-died:
			if !s.restartRequested(p.Name) {
				return fmt.Errorf("%s exited (%w); see %s", p.Name, p.err, s.logPath(p.Name))
			}
			if err := s.restart(ctx, p, died); err != nil {
				return err
			}
		}
	}
}

// RestartRequest is the file that makes the supervisor start component
// name again when it next exits, instead of stopping the cluster: how the
// chaos suite restarts kube-apiserver. Each request serves one exit.
func (l Layout) RestartRequest(name string) string { return l.Path("restart", name) }

func (s *Supervisor) restartRequested(name string) bool {
	return os.Remove(s.Layout.RestartRequest(name)) == nil
}

// restart starts p's component again in p's place (stop order is kept) and
// waits until it is ready.
func (s *Supervisor) restart(ctx context.Context, p *process, died chan<- *process) error {
	started := time.Now()
	q, err := s.start(p.Component, died)
	if err != nil {
		return err
	}
	s.mu.Lock()
	for i, r := range s.running {
		if r == p {
			s.running[i] = q
			s.running = s.running[:len(s.running)-1] // start appended q
			break
		}
	}
	s.mu.Unlock()
	if err := s.waitReady(ctx, q, 120*time.Second); err != nil {
		if ctx.Err() != nil {
			return nil // stopping: not a failed restart
		}
		return err
	}
	s.Log.Printf("%s exited (%v) and was restarted as asked; ready after %.1fs", p.Name, p.err, time.Since(started).Seconds())
	return nil
}

func (s *Supervisor) writeConfig() error {
	l, n := s.Layout, s.Network
	for _, d := range []string{"logs", "kubeconfig", "cni", "registry"} {
		if err := os.MkdirAll(l.Path(d), 0o755); err != nil {
			return err
		}
	}
	if err := writePKI(l.Path("pki"), n); err != nil {
		return err
	}
	local := fmt.Sprintf("https://127.0.0.1:%d", n.APIServerPort)
	files := map[string]string{
		l.Path("containerd.toml"):              ContainerdConfig(l, n),
		l.Path("cni", "10-kfp-local.conflist"): CNIConfig(n),
		l.Path("kubelet.yaml"):                 KubeletConfig(l, n),
		l.Path("kube-proxy.yaml"):              KubeProxyConfig(l, n),
		l.Kubeconfig("admin"):                  Kubeconfig(l, n.APIServer(), "admin"),
		l.Kubeconfig("controller-manager"):     Kubeconfig(l, local, "controller-manager"),
		l.Kubeconfig("scheduler"):              Kubeconfig(l, local, "scheduler"),
		l.Kubeconfig("kubelet"):                Kubeconfig(l, local, "kubelet"),
		l.Kubeconfig("kube-proxy"):             Kubeconfig(l, local, "kube-proxy"),
	}
	for path, content := range files {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			return err
		}
	}
	return nil
}

func (s *Supervisor) logPath(name string) string { return s.Layout.Path("logs", name+".log") }

func (s *Supervisor) start(c Component, died chan<- *process) (*process, error) {
	out, err := os.OpenFile(s.logPath(c.Name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(c.Args[0], c.Args[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("starting %s: %w", c.Name, err)
	}
	p := &process{Component: c, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		out.Close()
		close(p.done)
		select {
		case died <- p:
		default:
		}
	}()
	s.mu.Lock()
	s.running = append(s.running, p)
	s.mu.Unlock()
	return p, nil
}

func (s *Supervisor) waitReady(ctx context.Context, p *process, timeout time.Duration) error {
	if p.ReadySocket != "" {
		return waitFor(ctx, p, timeout, func() error {
			_, err := os.Stat(p.ReadySocket)
			return err
		})
	}
	if p.Ready == "" {
		return nil
	}
	client, err := s.httpClient()
	if err != nil {
		return err
	}
	return waitFor(ctx, p, timeout, func() error {
		resp, err := client.Get(p.Ready)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s answered %s", p.Ready, resp.Status)
		}
		return nil
	})
}

func waitFor(ctx context.Context, p *process, timeout time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited while starting (%w)", p.Name, p.err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s: %w", p.Name, timeout, err)
		}
	}
}

func (s *Supervisor) httpClient() (*http.Client, error) {
	caPEM, err := os.ReadFile(s.Layout.PKI("ca.crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	cert, err := tls.LoadX509KeyPair(s.Layout.PKI("admin.crt"), s.Layout.PKI("admin.key"))
	if err != nil {
		return nil, err
	}
	// kube-controller-manager and kube-scheduler serve self-signed
	// certificates; their health endpoints carry no secrets.
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: pool, Certificates: []tls.Certificate{cert}, InsecureSkipVerify: true, //nolint:gosec // local health checks only
	}}}, nil
}

// stopAll stops the kubelet first (so nothing restarts containers), then
// every container, containerd and its shims, then the control plane in
// reverse start order, and removes the cluster's cgroups.
func (s *Supervisor) stopAll() error {
	s.mu.Lock()
	running := s.running
	s.running = nil
	s.mu.Unlock()
	var errs []error
	for i := len(running) - 1; i >= 0; i-- {
		p := running[i]
		if p.Name == "containerd" {
			// Containers live in the kubelet's cgroups; the shims in this namespace.
			errs = append(errs, RemoveCgroups())
		}
		stopProcess(p)
		if p.Name == "containerd" {
			if self, err := os.Readlink("/proc/self/ns/net"); err == nil {
				for _, pid := range ProcessesInNetns(self) {
					if !isChildOf(pid, running) {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			}
		}
	}
	errs = append(errs, RemoveCgroups())
	return errors.Join(errs...)
}

func isChildOf(pid int, running []*process) bool {
	for _, p := range running {
		if p.cmd.Process != nil && p.cmd.Process.Pid == pid {
			select {
			case <-p.done:
				return false
			default:
				return true
			}
		}
	}
	return false
}

func stopProcess(p *process) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// LogDir is where the components' logs are.
func (l Layout) LogDir() string { return filepath.Join(l.Dir, "logs") }
