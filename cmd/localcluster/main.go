// Command localcluster runs the project's local control plane (kube-apiserver
// and etcd from bin/, with this project's and Tekton's CRDs) and a small image
// registry on 127.0.0.1 until it is signalled, and writes a cluster-admin
// kubeconfig so kubectl works against it.
// hack/cluster.sh starts and stops it in the background.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/hack/controlplane"
)

func main() {
	kubeconfig := flag.String("kubeconfig-out", filepath.Join("bin", "kubeconfig"), "where to write the cluster-admin kubeconfig")
	registryOut := flag.String("registry-out", filepath.Join("bin", "registry"), "where to write the host of the local image registry")
	flag.Parse()
	if err := run(*kubeconfig, *registryOut); err != nil {
		fmt.Fprintln(os.Stderr, "localcluster:", err)
		os.Exit(1)
	}
}

func run(kubeconfigPath, registryPath string) error {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)

	host, stopRegistry, err := startRegistry()
	if err != nil {
		return err
	}
	defer stopRegistry()
	defer os.Remove(registryPath)
	if err := os.WriteFile(registryPath, []byte(host), 0o644); err != nil {
		return err
	}

	cp, err := controlplane.Start()
	if err != nil {
		return err
	}
	defer func() {
		_ = os.Remove(kubeconfigPath)
		if err := cp.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "localcluster: stopping:", err)
		}
	}()
	kubeconfig, err := cp.AdminKubeconfig()
	if err != nil {
		return err
	}
	// Written last and atomically: its presence tells hack/cluster.sh the cluster is ready.
	tmp := kubeconfigPath + ".tmp"
	if err := os.WriteFile(tmp, kubeconfig, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, kubeconfigPath); err != nil {
		return err
	}
	fmt.Printf("control plane at %s; kubeconfig %s; image registry %s\n", cp.Config.Host, kubeconfigPath, host)
	<-signals
	return nil
}

// demoImages are pushed to the local registry so Providers on the local
// control plane can resolve their images to digests without the internet.
var demoImages = []string{"demo/provider:0.1.0", "demo/compiler-tfx:0.1.0", "demo/operator:0.1.0"}

// startRegistry serves an OCI registry on 127.0.0.1 holding demoImages.
func startRegistry() (string, func(), error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: registry.New(registry.Logger(log.New(io.Discard, "", 0))), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(listener) }()
	host := listener.Addr().String()
	for _, ref := range demoImages {
		img, err := random.Image(1024, 1)
		if err == nil {
			err = crane.Push(img, host+"/"+ref)
		}
		if err != nil {
			_ = srv.Close()
			return "", nil, fmt.Errorf("pushing %s to the local registry: %w", ref, err)
		}
	}
	return host, func() { _ = srv.Close() }, nil
}
