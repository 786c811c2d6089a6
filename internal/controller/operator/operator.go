// Package operator assembles the controller manager: its cache, clients and
// every controller. cmd/operator runs it; tests run the same assembly.
package operator

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	pipelinesv1alpha6 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1alpha6"
	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/completion"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/experiment"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/inflight"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/lifecycle"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/pipeline"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/provider"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/publish"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/run"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/runconfiguration"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/runschedule"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/scheme"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/conversionwebhook"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/eventserver"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/finalizerwebhook"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/seal"
)

// EventSink is an HTTP endpoint that receives run-completion CloudEvents.
type EventSink = publish.Sink

// NewManager builds a manager running every controller with cfg. version is
// recorded on what the operator applies.
func NewManager(restConfig *rest.Config, cfg Config, version string) (ctrl.Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	audience := cfg.EventsTokenAudience
	restConfig = rest.CopyConfig(restConfig)
	restConfig.QPS, restConfig.Burst = cfg.KubeAPIQPS, cfg.KubeAPIBurst
	operatorNamespace, err := namespaceOf(cfg)
	if err != nil {
		return nil, err
	}
	sealKey, err := loadSealKey(restConfig, operatorNamespace)
	if err != nil {
		return nil, err
	}
	served := &servedNamespaces{workflowNamespace: cfg.WorkflowNamespace}
	mgr, err := ctrl.NewManager(restConfig, managerOptions(cfg, served))
	if err != nil {
		return nil, err
	}
	providerReader := client.Reader(mgr.GetCache())
	served.providers.Store(&providerReader)
	opts := controller.Options{MaxConcurrentReconciles: cfg.MaxConcurrentReconciles, SkipNameValidation: &cfg.SkipNameValidation}
	if err := setupProviders(mgr, cfg, version, audience, opts); err != nil {
		return nil, err
	}
	ctx := context.Background()
	if err := lifecycle.IndexRunOwners(ctx, mgr); err != nil {
		return nil, err
	}
	engine, err := engineSettings(ctx, mgr, cfg, sealKey)
	if err != nil {
		return nil, err
	}
	completions := &completion.Recorder{Client: mgr.GetClient(), Events: engine.Recorder, Sinks: SinkNames(cfg.EventSinks), Seal: sealKey}
	if err := setupControllers(ctx, mgr, cfg, engine, completions, opts); err != nil {
		return nil, err
	}
	if err := addServers(mgr, cfg, operatorNamespace, audience, completions); err != nil {
		return nil, err
	}
	return mgr, nil
}

// setupProviders adds the Provider controller to mgr.
func setupProviders(mgr ctrl.Manager, cfg Config, version, audience string, opts controller.Options) error {
	providers := &provider.Reconciler{
		Client:            mgr.GetClient(),
		APIReader:         mgr.GetAPIReader(),
		Recorder:          mgr.GetEventRecorder("kfp-tekton-operator"),
		WorkflowNamespace: cfg.WorkflowNamespace,
		Version:           version,
		RetryAfter:        cfg.RetryAfter.Duration,
		TektonNamespace:   cfg.TektonNamespace,
		Service: provider.ServiceSettings{HelperImage: cfg.HelperImage, EventsURL: cfg.EventsURL,
			TokenAudience: audience},
	}
	return providers.SetupWithManager(mgr, opts)
}

// engineSettings is what every resource kind's controller shares: cfg's
// settings and, when cfg bounds the operations in flight, the limiter that
// does.
func engineSettings(ctx context.Context, mgr ctrl.Manager, cfg Config, sealKey *seal.Key) (lifecycle.Settings, error) {
	compileVolume, err := cfg.compileVolume()
	if err != nil {
		return lifecycle.Settings{}, err
	}
	var limiter *inflight.Limiter
	if cfg.MaxOperationsInFlight > 0 {
		if limiter, err = lifecycle.NewLimiter(ctx, mgr, cfg.MaxOperationsInFlight, cfg.OperationSlowdownLimit, cfg.WorkflowNamespace); err != nil {
			return lifecycle.Settings{}, err
		}
	}
	return lifecycle.Settings{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("kfp-tekton-operator"),
		WorkflowNamespace: cfg.WorkflowNamespace, HelperImage: cfg.HelperImage,
		Backoff: cfg.backoff(), RetryAfter: cfg.RetryAfter.Duration, ConfigMapTTL: cfg.ArtifactRepositoryTTL.Duration,
		OperationTimeout: cfg.OperationTimeout.Duration, KeepRunsPerOperation: cfg.KeepRunsPerOperation,
		CompileVolume: compileVolume, Limiter: limiter, Seal: sealKey,
	}, nil
}

// setupControllers adds, in turn, the controllers of the four resource
// kinds, of RunConfigurations, of completed Runs' retention (when cfg sets
// a TTL), of event publishing and of run completions.
func setupControllers(ctx context.Context, mgr ctrl.Manager, cfg Config, engine lifecycle.Settings,
	completions *completion.Recorder, opts controller.Options) error {
	for _, setup := range []func() error{
		func() error {
			return setupKind(ctx, mgr, engine, pipeline.Kind, func() client.ObjectList { return &pipelinesv1beta1.PipelineList{} }, opts)
		},
		func() error {
			return setupKind(ctx, mgr, engine, experiment.Kind, func() client.ObjectList { return &pipelinesv1beta1.ExperimentList{} }, opts)
		},
		func() error {
			return setupKind(ctx, mgr, engine, runschedule.Kind, func() client.ObjectList { return &pipelinesv1beta1.RunScheduleList{} }, opts)
		},
		func() error {
			return setupKind(ctx, mgr, engine, run.Kind, func() client.ObjectList { return &pipelinesv1beta1.RunList{} }, opts)
		},
		func() error {
			rc := &runconfiguration.Reconciler{Client: mgr.GetClient(), Recorder: engine.Recorder, RetryAfter: engine.RetryAfter, Seal: engine.Seal}
			return rc.SetupWithManager(ctx, mgr, opts)
		},
		func() error {
			if cfg.RunCompletionTTL.Duration <= 0 {
				return nil
			}
			retention := &completion.Retention{Client: mgr.GetClient(), TTL: cfg.RunCompletionTTL.Duration, Now: time.Now}
			return retention.SetupWithManager(mgr, opts)
		},
		func() error {
			p := &publish.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: engine.Recorder, Sinks: cfg.EventSinks, Seal: engine.Seal}
			return p.SetupWithManager(mgr, opts)
		},
		func() error {
			done := &completion.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: engine.Recorder, Completions: completions}
			return done.SetupWithManager(mgr, opts)
		},
	} {
		if err := setup(); err != nil {
			return err
		}
	}
	return nil
}

// addServers adds the conversion webhook (when cfg names its Service), the
// /events server (unless cfg disables it) and the health checks.
func addServers(mgr ctrl.Manager, cfg Config, operatorNamespace, audience string, completions *completion.Recorder) error {
	if w := cfg.ConversionWebhook; w.Service != "" {
		// Read by the conversions the webhook serves; set before it serves.
		pipelinesv1alpha6.ConversionDefaults.ProviderNamespace = w.ProviderNamespace
		o := conversionwebhook.Options{Namespace: operatorNamespace, Service: w.Service,
			Secret: w.Secret, CertDir: w.CertDir, Port: w.Port,
			CRDs: conversionwebhook.CRDs(mgr.GetScheme(), pipelinesv1alpha6.GroupVersion)}
		if w.FinalizerConfiguration != "" {
			o.Handlers = map[string]http.Handler{finalizerwebhook.Path: finalizerwebhook.HTTPHandler()}
			o.MutatingConfigurations = []string{w.FinalizerConfiguration}
		}
		if err := conversionwebhook.Add(mgr, o); err != nil {
			return err
		}
	}
	if cfg.EventsBindAddress != "" && cfg.EventsBindAddress != "0" {
		if err := mgr.Add(&eventserver.Server{BindAddress: cfg.EventsBindAddress, CertDir: cfg.EventsCertDir,
			Handler: &eventserver.Handler{Client: mgr.GetClient(), Audience: audience, Completions: completions}}); err != nil {
			return err
		}
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	return mgr.AddReadyzCheck("readyz", healthz.Ping)
}

// SealKeySecret names the Secret, in the operator's namespace, holding the
// key that seals the records the operator keeps in statuses.
const SealKeySecret = "kfp-tekton-operator-seal"

// serviceAccountNamespaceFile holds the namespace of a pod's service account.
const serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// namespaceOf is the operator's namespace: cfg's, else its pod's.
func namespaceOf(cfg Config) (string, error) {
	if cfg.Namespace != "" {
		return cfg.Namespace, nil
	}
	b, err := os.ReadFile(serviceAccountNamespaceFile)
	if err != nil {
		return "", fmt.Errorf("the operator's namespace (for its seal key Secret): set namespace, or run it in a pod: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// loadSealKey reads (or, the first time, creates) the seal key in namespace.
func loadSealKey(restConfig *rest.Config, namespace string) (*seal.Key, error) {
	c, err := client.New(restConfig, client.Options{})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return seal.LoadOrCreate(ctx, c, types.NamespacedName{Namespace: namespace, Name: SealKeySecret})
}

// metricsOptions serves /metrics over HTTPS to callers the API server
// authenticates (TokenReview) and authorises (SubjectAccessReview for
// `get` on the non-resource URL /metrics), unless MetricsInsecure.
func metricsOptions(cfg Config) metricsserver.Options {
	if cfg.MetricsInsecure {
		return metricsserver.Options{BindAddress: cfg.MetricsBindAddress}
	}
	return metricsserver.Options{
		BindAddress:    cfg.MetricsBindAddress,
		SecureServing:  true,
		FilterProvider: filters.WithAuthenticationAndAuthorization,
	}
}

// managerOptions: the cache holds only what the operator manages (Tasks,
// Deployments and PipelineRuns it labelled, in the namespaces it serves),
// only the fields it reads, and no managedFields; service accounts and
// secrets are read directly, never cached cluster-wide.
func managerOptions(cfg Config, served *servedNamespaces) ctrl.Options {
	managed := labels.SelectorFromSet(labels.Set{contract.LabelManagedBy: contract.ManagedByOperator})
	// The operator's PipelineRuns, and the Tekton provider's ML runs, whose
	// end completes their Runs.
	runs, err := labels.NewRequirement(contract.LabelManagedBy, selection.In, []string{contract.ManagedByOperator, contract.ManagedByTektonProvider})
	if err != nil {
		panic(err) // constant input
	}
	var syncPeriod *time.Duration
	if cfg.SyncPeriod.Duration > 0 {
		syncPeriod = &cfg.SyncPeriod.Duration
	}
	return ctrl.Options{
		Scheme:                  scheme.New(),
		Metrics:                 metricsOptions(cfg),
		HealthProbeBindAddress:  cfg.HealthProbeBindAddress,
		LeaderElection:          cfg.LeaderElection,
		LeaderElectionID:        "kfp-tekton-operator.pipelines.kubeflow.org",
		LeaderElectionNamespace: cfg.LeaderElectionNamespace,
		Cache: cache.Options{
			SyncPeriod:       syncPeriod,
			DefaultTransform: cache.TransformStripManagedFields(),
			ByObject: map[client.Object]cache.ByObject{
				&tektonv1.Task{}:        {Label: managed, Transform: served.transform(slimTask)},
				&appsv1.Deployment{}:    {Label: managed, Transform: served.transform(slimDeployment)}, // provider services
				&tektonv1.PipelineRun{}: {Label: labels.NewSelector().Add(*runs), Transform: served.transform(slimRun)},
			},
		},
		Client: client.Options{Cache: &client.CacheOptions{
			DisableFor: []client.Object{&corev1.Secret{}, &corev1.ServiceAccount{}},
		}},
	}
}

func setupKind[T lifecycle.Subject](ctx context.Context, mgr ctrl.Manager, s lifecycle.Settings, kind lifecycle.Kind[T],
	list func() client.ObjectList, opts controller.Options) error {
	r := &lifecycle.Reconciler[T]{Settings: s, Kind: kind}
	return r.SetupWithManager(ctx, mgr, list, opts)
}

// slimRun keeps in the cache only what the controllers read from a
// PipelineRun: metadata, spec.status, conditions, times, results and child
// references. The embedded pipelineSpec, params and Tekton's copy of the
// spec in status are most of each object, and 10,000 of them would be most
// of the operator's memory.
func slimRun(obj any) (any, error) {
	pr, ok := obj.(*tektonv1.PipelineRun)
	if !ok {
		return obj, nil
	}
	pr.ManagedFields = nil
	pr.Spec.PipelineSpec = nil
	pr.Spec.Params = nil
	pr.Spec.Workspaces = nil
	pr.Status.PipelineSpec = nil
	pr.Status.Provenance = nil
	pr.Status.SpanContext = nil
	return pr, nil
}
