package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/operator"
)

// defaults are the operator's defaults, with the helper image from the
// environment (the operator's own image, as its Deployment says).
func defaults() operator.Config {
	cfg := operator.Default()
	cfg.HelperImage = os.Getenv("KFP_HELPER_IMAGE")
	return cfg
}

// bind registers a flag for every field of cfg, defaulting to its value.
func bind(fs *flag.FlagSet, cfg *operator.Config, file *string) {
	fs.StringVar(file, "config", *file, "operator configuration file (YAML, fields as in internal/controller/operator.Config); flags override it")
	fs.StringVar(&cfg.Namespace, "namespace", cfg.Namespace, "the operator's namespace, where the Secret of the key sealing its status records lives (default: its service account's, in a pod)")
	fs.StringVar(&cfg.WorkflowNamespace, "workflow-namespace", cfg.WorkflowNamespace, "namespace of every Provider's Tasks and PipelineRuns; empty: each Provider's own namespace")
	fs.StringVar(&cfg.HelperImage, "helper-image", cfg.HelperImage, "image with /kfp-task for the shared Tasks (default $KFP_HELPER_IMAGE)")
	fs.BoolVar(&cfg.LeaderElection, "leader-elect", cfg.LeaderElection, "elect a leader, for more than one replica")
	fs.StringVar(&cfg.LeaderElectionNamespace, "leader-election-namespace", cfg.LeaderElectionNamespace, "namespace of the leader election lease (default: the operator's)")
	fs.StringVar(&cfg.MetricsBindAddress, "metrics-bind-address", cfg.MetricsBindAddress, "Prometheus metrics address; 0 disables")
	fs.BoolVar(&cfg.MetricsInsecure, "metrics-insecure", cfg.MetricsInsecure, "serve metrics over plain HTTP without authentication")
	fs.StringVar(&cfg.HealthProbeBindAddress, "health-probe-bind-address", cfg.HealthProbeBindAddress, "address of /healthz and /readyz")
	fs.Func("kube-api-qps", fmt.Sprintf("client-side limit of requests per second to the API server (default %g)", cfg.KubeAPIQPS), func(v string) error {
		_, err := fmt.Sscan(v, &cfg.KubeAPIQPS)
		return err
	})
	fs.IntVar(&cfg.KubeAPIBurst, "kube-api-burst", cfg.KubeAPIBurst, "client-side burst of requests to the API server")
	fs.IntVar(&cfg.MaxConcurrentReconciles, "max-concurrent-reconciles", cfg.MaxConcurrentReconciles, "reconciles run at once, per controller")
	fs.DurationVar(&cfg.SyncPeriod.Duration, "sync-period", cfg.SyncPeriod.Duration, "how often everything is reconciled even without changes")
	fs.DurationVar(&cfg.RetryBackoffBase.Duration, "retry-backoff-base", cfg.RetryBackoffBase.Duration, "wait before the first retry of a failed operation; doubled per failure")
	fs.DurationVar(&cfg.OperationTimeout.Duration, "operation-timeout", cfg.OperationTimeout.Duration, "how long one operation's PipelineRun may take before it fails and is retried")
	fs.DurationVar(&cfg.RetryBackoffMax.Duration, "retry-backoff-max", cfg.RetryBackoffMax.Duration, "longest wait between retries of a failed operation")
	fs.DurationVar(&cfg.ArtifactRepositoryTTL.Duration, "artifact-repository-ttl", cfg.ArtifactRepositoryTTL.Duration, "how stale a namespace's artifact-repositories ConfigMap may be when a run is built")
	fs.IntVar(&cfg.KeepRunsPerOperation, "keep-runs-per-operation", cfg.KeepRunsPerOperation, "finished PipelineRuns of each operation a resource keeps (besides those the operator needs: the newest succeeded create or update, retried failures); 0 keeps all")
	fs.IntVar(&cfg.OperationSlowdownLimit, "operation-slowdown-limit", cfg.OperationSlowdownLimit, "while a Provider's operation run takes more than this many times the fastest recent run of its operation, the Provider's bound (starting at 10) is halved; each run within it raises the bound by one, up to max-operations-in-flight; 0 keeps it at max-operations-in-flight")
	fs.IntVar(&cfg.MaxOperationsInFlight, "max-operations-in-flight", cfg.MaxOperationsInFlight, "operation PipelineRuns each Provider may have unfinished at once; more wait (Ready reason Queued); 0 is no bound")
	fs.StringVar(&cfg.CompileStorageClass, "compile-storage-class", cfg.CompileStorageClass, "storage class of the claim a pipeline compile hands its definition over in; empty: the cluster's default")
	fs.StringVar(&cfg.CompileVolumeSize, "compile-volume-size", cfg.CompileVolumeSize, "size of that claim")
	fs.DurationVar(&cfg.RunCompletionTTL.Duration, "run-completion-ttl", cfg.RunCompletionTTL.Duration, "delete a Run this long after it completed; 0 keeps completed Runs")
	fs.StringVar(&cfg.TektonNamespace, "tekton-namespace", cfg.TektonNamespace, "namespace of Tekton's feature-flags ConfigMap (default tekton-pipelines)")
	fs.Func("event-sink", "NAME=URL of an HTTP sink for run-completion CloudEvents; repeat for more (adds to the config file's)", func(v string) error {
		name, u, ok := strings.Cut(v, "=")
		if !ok {
			return fmt.Errorf("%q: want NAME=URL", v)
		}
		cfg.EventSinks = append(cfg.EventSinks, operator.EventSink{Name: name, URL: u})
		return nil
	})
	fs.StringVar(&cfg.EventsBindAddress, "events-bind-address", cfg.EventsBindAddress, "address of /events, where provider services report run completions; 0 disables")
	fs.StringVar(&cfg.EventsCertDir, "events-cert-dir", cfg.EventsCertDir, "directory with tls.crt and tls.key to serve /events over HTTPS; empty: plain HTTP")
	fs.StringVar(&cfg.EventsURL, "events-url", cfg.EventsURL, "URL at which provider services' relays reach /events (needed by Providers with spec.serviceImage)")
	fs.StringVar(&cfg.EventsTokenAudience, "events-token-audience", cfg.EventsTokenAudience, "audience a /events caller's service-account token must carry")
	fs.StringVar(&cfg.ConversionWebhook.Service, "conversion-webhook-service", cfg.ConversionWebhook.Service, "Service (in the operator's namespace, port 443) of the CRDs' conversion webhook; empty: not served")
	fs.StringVar(&cfg.ConversionWebhook.Secret, "conversion-webhook-secret", cfg.ConversionWebhook.Secret, "Secret (in the operator's namespace) where the operator keeps the conversion webhook's CA and certificate")
	fs.StringVar(&cfg.ConversionWebhook.CertDir, "conversion-webhook-cert-dir", cfg.ConversionWebhook.CertDir, "directory where that Secret is mounted")
	fs.IntVar(&cfg.ConversionWebhook.Port, "conversion-webhook-port", cfg.ConversionWebhook.Port, "port of the conversion webhook")
	fs.StringVar(&cfg.ConversionWebhook.ProviderNamespace, "conversion-webhook-provider-namespace", cfg.ConversionWebhook.ProviderNamespace, "namespace a v1alpha6 object's provider name refers to; empty: the object's own")
	fs.StringVar(&cfg.ConversionWebhook.FinalizerConfiguration, "finalizer-webhook-configuration", cfg.ConversionWebhook.FinalizerConfiguration, "MutatingWebhookConfiguration through which the API server asks the webhook server to add the backend finalizer at create; empty: the operator adds it itself")
	fs.DurationVar(&cfg.RetryAfter.Duration, "retry-after", cfg.RetryAfter.Duration, "how soon a resource waiting on something outside the operator is looked at again")
}

// parseConfig reads the defaults, then the --config file over them, then
// the flags given over that. extra registers flags owned elsewhere (logging).
func parseConfig(args []string, extra func(*flag.FlagSet)) (operator.Config, error) {
	// First pass: only to find --config.
	var file string
	probe := flag.NewFlagSet("operator", flag.ContinueOnError)
	probe.SetOutput(io.Discard)
	scratch := defaults()
	bind(probe, &scratch, &file)
	extra(probe)
	_ = probe.Parse(args) // errors are reported by the second pass

	cfg := defaults()
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return cfg, err
		}
		if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
			return cfg, fmt.Errorf("%s: %w", file, err)
		}
	}
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	bind(fs, &cfg, &file)
	extra(fs)
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}
