// Package operator assembles the controller manager: its cache, clients and
// every controller. cmd/operator runs it; tests run the same assembly.
package operator

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
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
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/seal"
)

// Config is the operator's configuration: a YAML file (--config), each
// field overridable by the flag of the same name.
type Config struct {
	// Namespace is the operator's own: the Secret holding the key that
	// seals its records in statuses lives there (default: its service
	// account's namespace, as mounted in its pod).
	Namespace string `json:"namespace,omitempty"`
	// WorkflowNamespace, when set, holds every Provider's shared Tasks and
	// PipelineRuns; empty runs each Provider's in its own namespace.
	WorkflowNamespace string `json:"workflowNamespace,omitempty"`
	// HelperImage holds /kfp-task for the shared Tasks; normally the
	// operator's own image.
	HelperImage string `json:"helperImage,omitempty"`

	LeaderElection          bool   `json:"leaderElection,omitempty"`
	LeaderElectionNamespace string `json:"leaderElectionNamespace,omitempty"`
	MetricsBindAddress      string `json:"metricsBindAddress,omitempty"`
	// MetricsInsecure serves metrics over plain HTTP to anyone; by default
	// they are HTTPS for authenticated and authorised callers only.
	MetricsInsecure        bool   `json:"metricsInsecure,omitempty"`
	HealthProbeBindAddress string `json:"healthProbeBindAddress,omitempty"`

	// KubeAPIQPS and KubeAPIBurst limit the operator's requests to the API server.
	KubeAPIQPS   float32 `json:"kubeAPIQPS,omitempty"`
	KubeAPIBurst int     `json:"kubeAPIBurst,omitempty"`
	// MaxConcurrentReconciles per controller.
	MaxConcurrentReconciles int `json:"maxConcurrentReconciles,omitempty"`
	// SyncPeriod re-reconciles everything this often, catching drift that
	// no watch reports.
	SyncPeriod metav1.Duration `json:"syncPeriod,omitempty"`
	// RetryAfter is how soon a resource waiting on something outside the
	// operator (a service account, an image) is looked at again.
	RetryAfter metav1.Duration `json:"retryAfter,omitempty"`

	// RetryBackoffBase and RetryBackoffMax space the retries of a failed
	// operation: doubled per failure, capped.
	RetryBackoffBase metav1.Duration `json:"retryBackoffBase,omitempty"`
	RetryBackoffMax  metav1.Duration `json:"retryBackoffMax,omitempty"`
	// OperationTimeout bounds each operation's PipelineRun: one that has not
	// ended by then fails (Tekton's timeout) and is retried as a failed
	// attempt, so no run holds its resource forever (default 15m).
	OperationTimeout metav1.Duration `json:"operationTimeout,omitempty"`
	// KeepRunsPerOperation is how many finished PipelineRuns of each
	// operation (create, update, delete) a resource keeps; older ones are
	// deleted. Runs the operator still needs are always kept: unfinished
	// ones, the newest succeeded create or update (the record of the
	// backend id), the newest succeeded delete of a resource being deleted,
	// and the failed attempts the retry backoff counts. 0 (the zero value)
	// keeps every run; cmd/operator and the chart default to 3. A released
	// resource's runs are deleted whatever this says.
	KeepRunsPerOperation int `json:"keepRunsPerOperation,omitempty"`
	// MaxOperationsInFlight bounds the operation PipelineRuns each Provider
	// has unfinished at once, across every kind; resources beyond it wait,
	// with Ready reason Queued, and start in turn as runs end: the
	// namespaces waiting take turns (one team's burst does not hold up
	// another's resource), then the kinds within a namespace, first in first
	// out within a namespace and kind. It keeps a burst (a
	// release applying thousands of resources) from flooding Tekton, which
	// slows down for everyone as its queue grows. 0 (the zero value) is no
	// bound; cmd/operator and the chart default to 200.
	MaxOperationsInFlight int `json:"maxOperationsInFlight,omitempty"`
	// CompileStorageClass is the storage class of the claim each pipeline
	// compile makes to hand its definition to the provider's pod; empty uses
	// the cluster's default class.
	CompileStorageClass string `json:"compileStorageClass,omitempty"`
	// CompileVolumeSize is that claim's size (default 64Mi).
	CompileVolumeSize string `json:"compileVolumeSize,omitempty"`
	// RunCompletionTTL deletes a Run this long after it completed (its
	// backend run with it); 0 (the default) keeps completed Runs.
	RunCompletionTTL metav1.Duration `json:"runCompletionTTL,omitempty"`
	// ArtifactRepositoryTTL bounds how stale a namespace's
	// artifact-repositories ConfigMap may be when a run is built (default 10 s).
	ArtifactRepositoryTTL metav1.Duration `json:"artifactRepositoryTTL,omitempty"`

	// EventSinks receive every run completion as a CloudEvent, at least once.
	EventSinks []EventSink `json:"eventSinks,omitempty"`
	// EventsBindAddress serves /events, where provider services report run
	// completions (default :8082; "0" disables).
	EventsBindAddress string `json:"eventsBindAddress,omitempty"`
	// EventsCertDir holds tls.crt and tls.key for /events; empty serves
	// plain HTTP (callers are authenticated by their token either way).
	EventsCertDir string `json:"eventsCertDir,omitempty"`
	// EventsTokenAudience is the audience a caller's service-account token
	// must be issued for (default kfp-tekton-operator).
	EventsTokenAudience string `json:"eventsTokenAudience,omitempty"`
	// EventsURL is where provider services' relays reach /events, e.g.
	// http://kfp-tekton-operator-events.kfp-tekton-operator.svc/events (the
	// chart sets it); a Provider with spec.serviceImage needs it.
	EventsURL string `json:"eventsURL,omitempty"`

	// ConversionWebhook serves the CRDs' conversion webhook (kfp-operator's
	// v1alpha6 to and from the storage version v1beta1); off unless its
	// Service is named (the chart names it).
	ConversionWebhook ConversionWebhookConfig `json:"conversionWebhook,omitempty"`

	// TektonNamespace is where Tekton's feature-flags ConfigMap lives
	// (default tekton-pipelines); read to warn about Pod Security.
	TektonNamespace string `json:"tektonNamespace,omitempty"`

	// SkipNameValidation lets tests start several managers in one process.
	SkipNameValidation bool `json:"-"`
}

// ConversionWebhookConfig says where the conversion webhook is served and
// reached.
type ConversionWebhookConfig struct {
	// Service in the operator's namespace in front of the webhook (port 443).
	Service string `json:"service,omitempty"`
	// Secret, in the operator's namespace, where the operator keeps the
	// webhook's CA and certificate; mounted at CertDir.
	Secret string `json:"secret,omitempty"`
	// CertDir is where Secret is mounted.
	CertDir string `json:"certDir,omitempty"`
	// Port the webhook listens on (default 9443).
	Port int `json:"port,omitempty"`
	// ProviderNamespace is the namespace a v1alpha6 object's provider name
	// refers to (kfp-operator's DefaultProviderNamespace, its workflow
	// namespace). Empty: the object's own namespace.
	ProviderNamespace string `json:"providerNamespace,omitempty"`
}

// DefaultEventsTokenAudience is the audience /events callers' tokens carry
// unless EventsTokenAudience says otherwise.
const DefaultEventsTokenAudience = "kfp-tekton-operator"

// EventSink is an HTTP endpoint that receives run-completion CloudEvents.
type EventSink = publish.Sink

// NewManager builds a manager running every controller with cfg. version is
// recorded on what the operator applies.
func NewManager(restConfig *rest.Config, cfg Config, version string) (ctrl.Manager, error) {
	if err := validateConfig(cfg); err != nil {
		return nil, err
	}
	compileVolume, err := compileVolume(cfg)
	if err != nil {
		return nil, err
	}
	audience := orDefaultString(cfg.EventsTokenAudience, DefaultEventsTokenAudience)
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
	engine, err := newEngineSettings(ctx, mgr, cfg, compileVolume, sealKey)
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

// validateConfig refuses settings out of range before anything is built.
func validateConfig(cfg Config) error {
	if cfg.KeepRunsPerOperation < 0 {
		return fmt.Errorf("keepRunsPerOperation must not be negative, got %d", cfg.KeepRunsPerOperation)
	}
	if cfg.MaxOperationsInFlight < 0 {
		return fmt.Errorf("maxOperationsInFlight must not be negative (0 is no bound), got %d", cfg.MaxOperationsInFlight)
	}
	return ValidateEventSinks(cfg.EventSinks)
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

// newEngineSettings is what every resource kind's controller shares, with
// cfg's defaults applied and, when cfg bounds the operations in flight, the
// limiter that does.
func newEngineSettings(ctx context.Context, mgr ctrl.Manager, cfg Config, compileVolume lifecycle.CompileVolume,
	sealKey *seal.Key) (engineSettings, error) {
	var limiter *inflight.Limiter
	if cfg.MaxOperationsInFlight > 0 {
		var err error
		if limiter, err = lifecycle.NewLimiter(ctx, mgr, cfg.MaxOperationsInFlight, cfg.WorkflowNamespace); err != nil {
			return engineSettings{}, err
		}
	}
	return engineSettings{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("kfp-tekton-operator"),
		WorkflowNamespace: cfg.WorkflowNamespace, HelperImage: cfg.HelperImage,
		Backoff:          lifecycle.Backoff{Base: orDefault(cfg.RetryBackoffBase.Duration, 10*time.Second), Max: orDefault(cfg.RetryBackoffMax.Duration, 10*time.Minute)},
		RetryAfter:       orDefault(cfg.RetryAfter.Duration, time.Minute),
		ConfigMapTTL:     cfg.ArtifactRepositoryTTL.Duration,
		OperationTimeout: orDefault(cfg.OperationTimeout.Duration, 15*time.Minute),
		KeepRuns:         cfg.KeepRunsPerOperation,
		CompileVolume:    compileVolume,
		Limiter:          limiter,
		Seal:             sealKey,
	}, nil
}

// setupControllers adds, in turn, the controllers of the four resource
// kinds, of RunConfigurations, of completed Runs' retention (when cfg sets
// a TTL), of event publishing and of run completions.
func setupControllers(ctx context.Context, mgr ctrl.Manager, cfg Config, engine engineSettings,
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
		if err := conversionwebhook.Add(mgr, conversionwebhook.Options{Namespace: operatorNamespace, Service: w.Service,
			Secret: w.Secret, CertDir: w.CertDir, Port: cmp.Or(w.Port, 9443),
			CRDs: conversionwebhook.CRDs(mgr.GetScheme(), pipelinesv1alpha6.GroupVersion)}); err != nil {
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

// engineSettings are what every lifecycle controller shares.
type engineSettings struct {
	Client            client.Client
	APIReader         client.Reader
	Recorder          events.EventRecorder
	WorkflowNamespace string
	HelperImage       string
	Backoff           lifecycle.Backoff
	OperationTimeout  time.Duration
	RetryAfter        time.Duration
	ConfigMapTTL      time.Duration
	KeepRuns          int
	CompileVolume     lifecycle.CompileVolume
	Limiter           *inflight.Limiter
	Seal              *seal.Key
}

func setupKind[T lifecycle.Subject](ctx context.Context, mgr ctrl.Manager, s engineSettings, kind lifecycle.Kind[T],
	list func() client.ObjectList, opts controller.Options) error {
	r := &lifecycle.Reconciler[T]{
		Kind: kind, Client: s.Client, APIReader: s.APIReader, Recorder: s.Recorder,
		WorkflowNamespace: s.WorkflowNamespace, HelperImage: s.HelperImage, Backoff: s.Backoff, RetryAfter: s.RetryAfter,
		ConfigMapTTL: s.ConfigMapTTL, OperationTimeout: s.OperationTimeout, KeepRunsPerOperation: s.KeepRuns,
		CompileVolume: s.CompileVolume, Limiter: s.Limiter, Seal: s.Seal,
	}
	return r.SetupWithManager(ctx, mgr, list, opts)
}

func orDefaultString(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
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

// compileVolume is the compile claim cfg describes.
func compileVolume(cfg Config) (lifecycle.CompileVolume, error) {
	v := lifecycle.CompileVolume{Size: lifecycle.DefaultCompileVolumeSize}
	if cfg.CompileStorageClass != "" {
		v.StorageClassName = &cfg.CompileStorageClass
	}
	if cfg.CompileVolumeSize != "" {
		size, err := resource.ParseQuantity(cfg.CompileVolumeSize)
		if err != nil || size.Sign() <= 0 {
			return v, fmt.Errorf("compileVolumeSize %q is not a positive quantity such as 64Mi", cfg.CompileVolumeSize)
		}
		v.Size = size
	}
	return v, nil
}
