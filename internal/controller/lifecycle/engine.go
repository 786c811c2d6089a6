// Package lifecycle is the engine every user-resource controller shares: it
// turns create, update and delete of a resource into PipelineRuns of the
// operation's shape in the provider's workflow namespace, waits for them, and
// carries their results into the resource's status.
//
// Each reconcile is observe → decide → apply: observe (observe.go) reads
// everything a decision needs into one Observation; decide (decide.go) is a
// pure function from it to one action and the complete status; apply
// (apply.go) makes that change and writes that status. Each kind contributes
// only a Kind: what its operations take and where their outputs go.
package lifecycle

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/inflight"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/outcome"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/status"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/seal"
)

// Subject is a user resource the engine reconciles.
type Subject interface {
	client.Object
	CommonStatus() *pipelinesv1beta1.Status
	ProviderReference() pipelinesv1beta1.ProviderReference
}

// Kind adapts one resource kind to the engine: what its operations take
// (Inputs, Prepare) and where what they report goes (Record). Every method
// is required; a kind with nothing to say returns the zero value.
type Kind[T Subject] interface {
	// Traits are the kind's name and what decide and setup need to know
	// of it.
	Traits() Traits
	New() T
	// Inputs are what obj's operations take from obj itself.
	Inputs(obj T) Inputs
	// Prepare is what a create or update of obj with provider p takes. It
	// errs only for specs p cannot serve.
	Prepare(obj T, p *pipelinesv1beta1.Provider) (Prepared, error)
	// Record stores what an operation reported in obj's status.
	Record(obj T, out Outputs)
}

// Inputs are what a resource's operations take from it.
type Inputs struct {
	// Spec is the resource's spec, as the provider is given it.
	Spec any
	// Pipeline is the Pipeline it runs (Traits.RunsPipeline).
	Pipeline pipelinesv1beta1.PipelineReference
	// Parameters are its run parameters whose valueFrom the engine resolves
	// (Traits.ResolvesParameters).
	Parameters []pipelinesv1beta1.RuntimeParameter
	// ArtifactRepository is its explicit artifact repository, if any
	// (Traits.UsesArtifacts).
	ArtifactRepository *pipelinesv1beta1.ArtifactRepositoryRef
}

// Prepared is what a create or update of a resource takes with its
// Provider.
type Prepared struct {
	// Version identifies the resource's desired state with the Provider; a
	// change means an update operation. It must be a label value: the runs
	// carry it whole in their version label, and status.version is read
	// back from there (checkVersion refuses any other).
	Version string
	// Compile is what a kind whose operations compile compiles.
	Compile *Compile
}

// Compile is what a compiling operation compiles, with which compiler.
type Compile struct {
	// Config is the pipeline's compile configuration; the engine sets its
	// PipelineRoot from the resolved artifact repository.
	Config contract.CompileConfig
	// CompilerImage is the provider's pinned compiler for the framework.
	CompilerImage string
}

// Outputs are what a resource's operations reported, for its status. A
// zero field reports nothing.
type Outputs struct {
	// PipelineVersion is the pipeline version a succeeded create ran with.
	PipelineVersion string
	// Dependencies are the upstream runs a create or update resolved its
	// parameters from.
	Dependencies *pipelinesv1beta1.Dependencies
}

// Traits are what decide and setup need to know of a kind.
type Traits struct {
	// Name is the kind as the shared Tasks and labels name it ("pipeline").
	Name string
	// CreateOnly kinds never update in the backend (a Run's spec is immutable).
	CreateOnly bool
	// CancelOnDelete cancels an unfinished create when the resource is deleted.
	CancelOnDelete bool
	// RunsPipeline: the resource runs a Pipeline (Inputs.Pipeline). Its
	// create and update wait for that Pipeline to be synchronised with the
	// same provider, and pass its backend id.
	RunsPipeline bool
	// ResolvesParameters: the engine resolves the valueFrom of its
	// parameters (Inputs.Parameters). A create waits while a required one
	// cannot be resolved; the RunConfiguration watch wakes it.
	ResolvesParameters bool
	// UsesArtifacts: its create and update are given an artifact
	// repository (Inputs.ArtifactRepository, else the namespace's default).
	UsesArtifacts bool
}

// Backoff spaces retries of a failed operation: Base, doubled per failure,
// at most Max.
type Backoff struct{ Base, Max time.Duration }

func (b Backoff) after(failures int) time.Duration {
	d := b.Base
	for i := 1; i < failures && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
}

// Settings are what the Reconcilers of every kind share: the operator's
// clients and configuration.
type Settings struct {
	Client    client.Client
	APIReader client.Reader
	Recorder  events.EventRecorder
	// WorkflowNamespace, when set, overrides the provider's namespace.
	WorkflowNamespace string
	// HelperImage holds /kfp-task for the shared Tasks.
	HelperImage string
	Backoff     Backoff
	// OperationTimeout bounds each operation's PipelineRun (Tekton fails it
	// then, and the operation is retried as a failed attempt); Tekton's
	// default (one hour) when zero.
	OperationTimeout time.Duration
	// RetryAfter is how soon a resource blocked on something the operator
	// does not watch (an artifact repository ConfigMap) is looked at again.
	RetryAfter time.Duration
	// ConfigMapTTL bounds how stale an artifact repository ConfigMap may be
	// (default 10 s): edits reach new operations within it.
	ConfigMapTTL time.Duration
	// KeepRunsPerOperation is how many finished runs of each operation a
	// resource keeps (beyond those decide needs, see prune.go); 0 keeps all.
	KeepRunsPerOperation int
	// CompileVolume is the claim a compiling run's definition travels in.
	CompileVolume CompileVolume
	// Seal tells the upstream latest runs the operator recorded from those
	// a status write could have put there: only the former resolve a
	// valueFrom parameter.
	Seal *seal.Key
	// Limiter bounds the operations each Provider has in flight, across
	// kinds (NewLimiter); nil for no bound.
	Limiter *inflight.Limiter
	Now     func() time.Time
}

// Reconciler reconciles one kind.
type Reconciler[T Subject] struct {
	Settings
	Kind Kind[T]

	// builders build the runs, remembering Tekton's verdicts per shape.
	builders builders

	// queue is the controller's work queue once it runs: the limiter wakes
	// a queued resource through it.
	queue atomic.Pointer[workqueue.TypedRateLimitingInterface[reconcile.Request]]

	configMapsOnce sync.Once
	configMapCache *configMapReader

	// expected holds, per resource UID, the run this controller created and
	// the cache has not shown yet: until it does, the resource waits rather
	// than acting on a view without it (which could start a second run or
	// release a resource whose create is under way).
	expected sync.Map

	// written holds, per resource UID, the resourceVersions this
	// controller's own writes to it (finalizer, status) left behind, until
	// the cache shows the newest (ownWrites).
	written      sync.Map
	writtenSwept atomic.Int64

	// shares gives new resources of each namespace their turn in the work
	// queue (fairqueue.go).
	shares namespaceShares

	// failures remembers why each failed run failed, by run UID.
	failures     sync.Map
	failureCount atomic.Int64
}

// Reconcile synchronises one resource with its backend.
func (r *Reconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, err error) {
	r.shares.started(req.NamespacedName)
	queued := false
	defer func() {
		// A priority belongs to the event that queued this reconcile (see
		// PriorityProgress), not to the resource: what it queues next, a
		// recheck or a retry, takes its turn at the default.
		result.Priority = ptr.To(0)
	}()
	defer func() {
		// A resource stays in the limiter's queue only while its reconciles
		// end there; one that went, needs no run now, or failed before it
		// asked (an error), must not hold the place of those behind it.
		if !queued {
			r.forgetWaiter(ctx, req.NamespacedName)
		}
	}()
	obj := r.Kind.New()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			resourceGone(r.Kind.Traits().Name, req.NamespacedName)
		}
		return outcome.DoneOr(client.IgnoreNotFound(err)).Result()
	}
	gvk, err := apiutil.GVKForObject(obj, r.Client.Scheme())
	if err != nil {
		return outcome.Retry(err).Result()
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	if r.behindOwnWrite(obj) {
		// What the cache holds predates this controller's own last write
		// (its watch event is on the way): deciding on it would write that
		// status (and its Event) a second time. Look again shortly, keeping
		// the resource's place in the limiter's queue if it has one.
		queued = true
		return outcome.WaitFor(ownWriteRecheck).Result()
	}
	if obj.GetDeletionTimestamp().IsZero() {
		before := obj.GetResourceVersion()
		if err := status.AddFinalizer(ctx, r.Client, obj, pipelinesv1beta1.FinalizerBackend); err != nil {
			return outcome.Retry(err).Result()
		}
		r.wrote(obj, before)
	} else if !controllerutil.ContainsFinalizer(obj, pipelinesv1beta1.FinalizerBackend) {
		return outcome.DoneOutcome().Result()
	}
	o, err := r.observe(ctx, obj)
	if err != nil {
		return outcome.Retry(err).Result()
	}
	d := decide(o)
	if d.Action.Kind == StartRun {
		admission, err := r.admit(ctx, obj, o, runKey(o, d.Action))
		if err != nil {
			return outcome.Retry(fmt.Errorf("counting the operations in flight for provider %s: %w", o.ProviderKey, err)).Result()
		}
		if queued = !admission.Admitted; queued {
			d = waitForRoom(o, d, r.Limiter.Limit())
		}
	}
	return r.apply(ctx, obj, o, d).Result()
}

// statusWriter writes a resource's status and records its transitions,
// but for those into work under way (Progressing, Queued): the Ready
// condition says so, an operation's PipelineRun is its own record, and an
// Event for each would be a write per resource per operation that tells
// nothing the condition does not. Reaching Ready (Synchronized), every
// failure (a Warning) and every other wait (on the Provider, the Pipeline,
// a dependency) still record one.
func (r *Reconciler[T]) statusWriter() status.Writer {
	return status.Writer{Client: r.Client, Recorder: r.Recorder, Conditions: func(o client.Object) []metav1.Condition {
		return o.(Subject).CommonStatus().Conditions
	}, Quiet: underWay}
}

// underWay: the report is of an operation running or waiting its turn.
func underWay(r status.Report) bool {
	return r.Ready == metav1.ConditionUnknown &&
		(r.Reason == pipelinesv1beta1.ReasonProgressing || r.Reason == pipelinesv1beta1.ReasonQueued)
}

func (r *Reconciler[T]) configMapTTL() time.Duration {
	if r.ConfigMapTTL > 0 {
		return r.ConfigMapTTL
	}
	return defaultConfigMapTTL
}

// workflowNamespace is where the runs for the Provider in namespace live.
func (r *Reconciler[T]) workflowNamespace(providerNamespace string) string {
	if r.WorkflowNamespace != "" {
		return r.WorkflowNamespace
	}
	return providerNamespace
}

func (r *Reconciler[T]) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// checkVersion refuses a version that is not a label value. Every kind's
// version is one by construction (a short hash, or a tag and hash compacted
// to 63 characters); were one not, shortening it for the label would make
// status.version differ from the version the resource asked for.
func checkVersion(v string) error {
	if errs := validation.IsValidLabelValue(v); v == "" || len(errs) > 0 {
		return fmt.Errorf("the operator computed version %q, which is not a label value (%s): please report this", v, strings.Join(errs, "; "))
	}
	return nil
}
