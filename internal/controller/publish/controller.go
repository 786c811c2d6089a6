package publish

import (
	"context"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/outcome"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/runcompletion"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/seal"
)

// DefaultHTTPTimeout bounds one delivery when no HTTPClient is given.
const DefaultHTTPTimeout = 10 * time.Second

// Sink is an HTTP endpoint that receives run-completion CloudEvents; Name
// is what outboxes record.
type Sink struct {
	// Name identifies the sink in status, metrics and conditions.
	Name string `json:"name"`
	// URL is where events are POSTed (binary-mode CloudEvents over HTTP).
	URL string `json:"url"`
}

// Reconciler delivers the outboxes of Runs and RunConfigurations. Set its
// fields, then call SetupWithManager once; with no Sinks it still runs,
// moving events whose sinks were all removed to Published.
type Reconciler struct {
	Client client.Client // writes status, and reads unless APIReader is set
	// APIReader reads outboxes live: a cache lagging this controller's own
	// writes would make it send delivered events again.
	APIReader  client.Reader
	Recorder   events.EventRecorder
	Sinks      []Sink
	Backoff    Backoff          // DefaultBackoffBase and DefaultBackoffMax where zero
	HTTPClient *http.Client     // one with DefaultHTTPTimeout when nil
	Now        func() time.Time // time.Now when nil
	// Seal verifies that the operator queued each pending event: anyone who
	// may write the status could add one, and that one is never sent.
	Seal *seal.Key

	urls     map[string]string // by sink name
	names    []string          // in configured order
	sender   *sender
	failures *failures
}

// object is a resource with an outbox and conditions.
type object interface {
	client.Object
	CommonStatus() *pipelinesv1beta1.Status
}

// kind is what the reconciler needs of a kind with an outbox.
type kind struct {
	name       string // as in the kfpresource extension: "Run"
	controller string
	newObject  func() object
	outbox     func(object) *pipelinesv1beta1.CompletionEvents
}

var kinds = []kind{
	{
		name: "Run", controller: "publish-run",
		newObject: func() object { return &pipelinesv1beta1.Run{} },
		outbox: func(o object) *pipelinesv1beta1.CompletionEvents {
			return &o.(*pipelinesv1beta1.Run).Status.CompletionEvents
		},
	},
	{
		name: "RunConfiguration", controller: "publish-runconfiguration",
		newObject: func() object { return &pipelinesv1beta1.RunConfiguration{} },
		outbox: func(o object) *pipelinesv1beta1.CompletionEvents {
			return &o.(*pipelinesv1beta1.RunConfiguration).Status.CompletionEvents
		},
	},
}

// SetupWithManager adds the controllers publish-run and
// publish-runconfiguration, which watch only resources with pending events.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	if err := r.init(); err != nil {
		return err
	}
	for _, k := range kinds {
		hasPending := predicate.NewPredicateFuncs(func(o client.Object) bool {
			return len(k.outbox(o.(object)).Pending) > 0
		})
		err := ctrl.NewControllerManagedBy(mgr).Named(k.controller).
			For(k.newObject(), builder.WithPredicates(hasPending)).
			WithOptions(opts).
			Complete(reconcile.Func(func(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
				return r.reconcile(ctx, k, req)
			}))
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *Reconciler) init() error {
	if r.Backoff.Base <= 0 {
		r.Backoff.Base = DefaultBackoffBase
	}
	if r.Backoff.Max <= 0 {
		r.Backoff.Max = DefaultBackoffMax
	}
	if r.HTTPClient == nil {
		r.HTTPClient = &http.Client{Timeout: DefaultHTTPTimeout}
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.APIReader == nil {
		r.APIReader = r.Client
	}
	r.urls, r.names = map[string]string{}, make([]string, 0, len(r.Sinks))
	for _, s := range r.Sinks {
		r.urls[s.Name] = s.URL
		r.names = append(r.names, s.Name)
	}
	r.failures = newFailures()
	var err error
	r.sender, err = newSender(r.HTTPClient)
	return err
}

func (r *Reconciler) reconcile(ctx context.Context, k kind, req ctrl.Request) (ctrl.Result, error) {
	key := resourceKey{kind: k.name, NamespacedName: req.NamespacedName}
	obj := k.newObject()
	if err := r.APIReader.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.failures.forget(key)
		}
		return outcome.DoneOr(client.IgnoreNotFound(err)).Result()
	}
	var forged []pipelinesv1beta1.PendingCompletionEvent
	if err := r.patchStatus(ctx, obj, func() bool {
		forged = runcompletion.DropUnless(k.outbox(obj), func(ev *pipelinesv1beta1.PendingCompletionEvent) bool {
			return r.Seal.EventSealed(k.name, obj, ev)
		})
		return runcompletion.Retain(k.outbox(obj), r.names) || len(forged) > 0
	}); err != nil {
		return outcome.DoneOr(client.IgnoreNotFound(err)).Result()
	}
	for _, ev := range forged {
		forgedTotal.Inc()
		r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, "CompletionEventRefused", "Publish",
			"pending completion event %q (source %q) was not queued by the operator (its seal does not verify): dropped, not published",
			trimMessage(ev.ID, 128), trimMessage(ev.Source, 128))
	}
	if err := r.deliver(ctx, k, key, obj); err != nil {
		return outcome.DoneOr(client.IgnoreNotFound(err)).Result()
	}
	pending := k.outbox(obj).Pending
	if len(pending) == 0 {
		r.failures.forget(key)
	}
	failing := r.failures.current(key, obj.GetUID())
	if err := r.updateCondition(ctx, obj, failing, len(pending) == 0); err != nil {
		return outcome.DoneOr(client.IgnoreNotFound(err)).Result()
	}
	return ending(pending, failing, r.Now(), r.Backoff.Base).Result()
}

// deliver sends each pending event, oldest first, to each of its sinks
// that is due, and records each event's deliveries in the status. A sink
// that fails is not tried again this round, but the others are.
func (r *Reconciler) deliver(ctx context.Context, k kind, key resourceKey, obj object) error {
	log := ctrl.LoggerFrom(ctx)
	resource := k.name + " " + key.String()
	skip := backingOff(r.failures.current(key, obj.GetUID()), r.Now())
	for _, ev := range k.outbox(obj).DeepCopy().Pending {
		var took []string
		for _, sink := range ev.Sinks {
			if skip[sink] {
				continue
			}
			if err := r.sender.send(ctx, r.urls[sink], cloudEvent(ev, resource)); err != nil {
				skip[sink] = true
				deliveryFailuresTotal.WithLabelValues(sink).Inc()
				f := r.failures.failed(key, obj.GetUID(), sink, err, r.Now(), r.Backoff)
				log.Info("completion event not delivered", "sink", sink, "event", ev.ID, "failures", f.count, "error", err.Error())
				continue
			}
			deliveredTotal.WithLabelValues(sink).Inc()
			r.failures.succeeded(key, obj.GetUID(), sink)
			took = append(took, sink)
		}
		err := r.patchStatus(ctx, obj, func() bool {
			changed := false
			for _, sink := range took {
				changed = runcompletion.Delivered(k.outbox(obj), ev.ID, sink) || changed
			}
			return changed
		})
		if err != nil {
			// A conflict: the next round sends these again (at least once).
			return err
		}
	}
	return nil
}

// updateCondition writes CompletionEventsDelivered when it changes, with
// a Warning Event when it turns False.
func (r *Reconciler) updateCondition(ctx context.Context, obj object, failing map[string]sinkFailure, outboxEmpty bool) error {
	conditions := &obj.CommonStatus().Conditions
	current := meta.FindStatusCondition(*conditions, pipelinesv1beta1.ConditionCompletionEventsDelivered)
	turnsFalse := current == nil || current.Status != metav1.ConditionFalse
	want, write := deliveredCondition(current, r.names, failing, outboxEmpty, obj.GetGeneration())
	if !write {
		return nil
	}
	if err := r.patchStatus(ctx, obj, func() bool { return meta.SetStatusCondition(conditions, want) }); err != nil {
		return err
	}
	if want.Status == metav1.ConditionFalse && turnsFalse {
		r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, want.Reason, "Publish", "%s", want.Message)
	}
	return nil
}

// patchStatus writes what change did to obj's status, refused with a
// conflict if obj changed since it was read, so a concurrent writer's new
// event is never overwritten; nothing when change reports no change.
func (r *Reconciler) patchStatus(ctx context.Context, obj object, change func() bool) error {
	base := obj.DeepCopyObject().(client.Object)
	if !change() {
		return nil
	}
	return r.Client.Status().Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
}
