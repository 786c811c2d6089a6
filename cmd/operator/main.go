// Command operator is the kfp-tekton-operator controller manager.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/operator"
)

// version is set at build time (-ldflags -X main.version=...).
var version = "dev"

func main() {
	zapOpts := zap.Options{}
	var kubeconfig string
	cfg, err := parseConfig(os.Args[1:], func(fs *flag.FlagSet) {
		zapOpts.BindFlags(fs)
		fs.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file; default: in-cluster, then $KUBECONFIG, then ~/.kube/config")
	})
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "operator:", err)
		os.Exit(2)
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName("operator")
	restConfig, err := restConfigFrom(kubeconfig)
	if err != nil {
		log.Error(err, "no Kubernetes configuration")
		os.Exit(1)
	}
	mgr, err := operator.NewManager(restConfig, cfg, version)
	if err != nil {
		log.Error(err, "setting up")
		os.Exit(1)
	}
	log.Info("starting", "version", version, "workflowNamespace", cfg.WorkflowNamespace, "leaderElection", cfg.LeaderElection)
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "stopped")
		os.Exit(1)
	}
}

func restConfigFrom(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		return clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	return ctrl.GetConfig()
}
