package operator

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/lifecycle"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/provider"
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
	// and the failed attempts the retry backoff counts. 0 keeps every run
	// (default 3). A released resource's runs are deleted whatever this
	// says.
	KeepRunsPerOperation int `json:"keepRunsPerOperation,omitempty"`
	// MaxOperationsInFlight bounds the operation PipelineRuns each Provider
	// has unfinished at once, across every kind; resources beyond it wait,
	// with Ready reason Queued, and start in turn as runs end: the
	// namespaces waiting take turns (one team's burst does not hold up
	// another's resource), then the kinds within a namespace, first in first
	// out within a namespace and kind. It keeps a burst (a
	// release applying thousands of resources) from flooding Tekton, which
	// slows down for everyone as its queue grows. 0 is no bound (default
	// 200).
	MaxOperationsInFlight int `json:"maxOperationsInFlight,omitempty"`
	// OperationSlowdownLimit adapts each Provider's bound to Tekton: the
	// bound starts at 10 and, while an operation run takes more than this
	// many times the fastest recent run of the same operation from creation
	// to completion (a deep Tekton queue, which every tenant's run waits
	// in), is halved; each run within it raises the bound by one while the
	// bound is what limits the Provider, up to MaxOperationsInFlight (never
	// under 10; 2 is a good value). 0 keeps the bound at MaxOperationsInFlight.
	// Default 0, opt-in: the chaos suite passes with 2 but recovers about
	// 1.5x slower, and a whole e2e run with it is still to come.
	OperationSlowdownLimit int `json:"operationSlowdownLimit,omitempty"`
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
	// FinalizerConfiguration names the MutatingWebhookConfiguration through
	// which the API server asks the same server to add the backend
	// finalizer at create (internal/finalizerwebhook): the operator keeps
	// its CA bundle current. Empty: the engine adds the finalizer itself,
	// one more write per resource.
	FinalizerConfiguration string `json:"finalizerConfiguration,omitempty"`
}

// DefaultEventsTokenAudience is the audience /events callers' tokens carry
// unless EventsTokenAudience says otherwise.
const DefaultEventsTokenAudience = "kfp-tekton-operator"

// Default is the operator's configuration when nothing is set: what the
// binary starts from before its file and flags, what the chart's values
// render, and what the in-process test operators run with unless a test
// says otherwise. HelperImage has no default here (cmd/operator takes it
// from $KFP_HELPER_IMAGE).
func Default() Config {
	return Config{
		MetricsBindAddress:      ":8443",
		HealthProbeBindAddress:  ":8081",
		KubeAPIQPS:              50,
		KubeAPIBurst:            100,
		MaxConcurrentReconciles: 4,
		SyncPeriod:              metav1.Duration{Duration: 10 * time.Hour},
		RetryAfter:              metav1.Duration{Duration: time.Minute},
		RetryBackoffBase:        metav1.Duration{Duration: 10 * time.Second},
		RetryBackoffMax:         metav1.Duration{Duration: 10 * time.Minute},
		OperationTimeout:        metav1.Duration{Duration: 15 * time.Minute},
		ArtifactRepositoryTTL:   metav1.Duration{Duration: 10 * time.Second},
		KeepRunsPerOperation:    3,
		MaxOperationsInFlight:   200,
		OperationSlowdownLimit:  0,
		CompileVolumeSize:       lifecycle.DefaultCompileVolumeSize.String(),
		EventsBindAddress:       ":8082",
		EventsTokenAudience:     DefaultEventsTokenAudience,
		ConversionWebhook:       ConversionWebhookConfig{Port: 9443},
		TektonNamespace:         provider.DefaultTektonNamespace,
	}
}

// Validate refuses settings out of range, before anything is built.
func (c Config) Validate() error {
	var errs []error
	check := func(bad bool, format string, args ...any) {
		if bad {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(c.KubeAPIQPS <= 0 || c.KubeAPIBurst <= 0, "kubeAPIQPS (%g) and kubeAPIBurst (%d) must be positive", c.KubeAPIQPS, c.KubeAPIBurst)
	check(c.MaxConcurrentReconciles <= 0, "maxConcurrentReconciles must be positive, got %d", c.MaxConcurrentReconciles)
	// Zero is refused too: a retry without a pause, or an operation with
	// no time bound, is never what was meant.
	for _, d := range []struct {
		name string
		d    time.Duration
	}{{"retryAfter", c.RetryAfter.Duration}, {"retryBackoffBase", c.RetryBackoffBase.Duration},
		{"retryBackoffMax", c.RetryBackoffMax.Duration}, {"operationTimeout", c.OperationTimeout.Duration},
		{"artifactRepositoryTTL", c.ArtifactRepositoryTTL.Duration}} {
		check(d.d <= 0, "%s must be positive, got %s", d.name, d.d)
	}
	check(c.KeepRunsPerOperation < 0, "keepRunsPerOperation must not be negative (0 keeps all), got %d", c.KeepRunsPerOperation)
	check(c.OperationSlowdownLimit < 0, "operationSlowdownLimit must not be negative (0 keeps the bound fixed), got %d", c.OperationSlowdownLimit)
	check(c.MaxOperationsInFlight < 0, "maxOperationsInFlight must not be negative (0 is no bound), got %d", c.MaxOperationsInFlight)
	check(c.RunCompletionTTL.Duration < 0, "runCompletionTTL must not be negative (0 keeps completed Runs), got %s", c.RunCompletionTTL.Duration)
	check(c.EventsTokenAudience == "", "eventsTokenAudience must not be empty")
	check(c.ConversionWebhook.Service != "" && (c.ConversionWebhook.Port <= 0 || c.ConversionWebhook.Port > 65535),
		"conversionWebhook.port must be a port number, got %d", c.ConversionWebhook.Port)
	if _, err := c.compileVolume(); err != nil {
		errs = append(errs, err)
	}
	if err := ValidateEventSinks(c.EventSinks); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// compileVolume is the compile claim c describes.
func (c Config) compileVolume() (lifecycle.CompileVolume, error) {
	v := lifecycle.CompileVolume{}
	if c.CompileStorageClass != "" {
		v.StorageClassName = &c.CompileStorageClass
	}
	if c.CompileVolumeSize == "" {
		return v, nil // the engine's default size
	}
	size, err := resource.ParseQuantity(c.CompileVolumeSize)
	if err != nil || size.Sign() <= 0 {
		return v, fmt.Errorf("compileVolumeSize %q is not a positive quantity such as 64Mi", c.CompileVolumeSize)
	}
	v.Size = size
	return v, nil
}

// backoff spaces the retries of a failed operation as c says.
func (c Config) backoff() lifecycle.Backoff {
	return lifecycle.Backoff{Base: c.RetryBackoffBase.Duration, Max: c.RetryBackoffMax.Duration}
}
