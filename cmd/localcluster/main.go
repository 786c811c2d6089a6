// Command localcluster runs the project's local control plane (kube-apiserver
// and etcd from bin/, with this project's and Tekton's CRDs) until it is
// signalled, and writes a cluster-admin kubeconfig so kubectl works against it.
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
)

func main() {
	kubeconfig := flag.String("kubeconfig-out", filepath.Join("bin", "kubeconfig"), "where to write the cluster-admin kubeconfig")
	flag.Parse()
	if err := run(*kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, "localcluster:", err)
		os.Exit(1)
	}
}

func run(kubeconfigPath string) error {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)

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
	fmt.Printf("control plane at %s; kubeconfig %s\n", cp.Config.Host, kubeconfigPath)
	<-signals
	return nil
}
