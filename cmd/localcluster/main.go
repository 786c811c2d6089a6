// Command localcluster runs the project's local control plane (kube-apiserver
// and etcd from bin/, with this project's and Tekton's CRDs) and a small image
// registry on 127.0.0.1 until it is signalled, and writes a cluster-admin
// kubeconfig so kubectl works against it.
// hack/cluster.sh starts and stops it in the background.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/hack/controlplane"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/hack/testregistry"
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

	host, stopRegistry, err := testregistry.Serve(demoImages...)
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
