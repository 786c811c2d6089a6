package lifecycle

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/namespaces"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/spechash"
)

// Observation is everything decide needs to know about one resource.
type Observation struct {
	Now    time.Time
	Traits Traits
	// Subject is the resource as read (decide reads only its identity).
	Subject    Subject
	Namespace  string
	Generation int64
	Deleting   bool
	// SkipBackendDeletion: the resource asks to be let go without a
	// backend delete.
	SkipBackendDeletion bool
	// Status is the resource's status as stored. It is writable by anyone
	// with access to the status subresource, so decide never acts on a
	// backend id from it.
	Status pipelinesv1beta1.Status
	// ProviderKey is the Provider the spec references (the one the status
	// names, for a resource being deleted).
	ProviderKey types.NamespacedName
	// Provider is that Provider; nil when it does not exist.
	Provider *pipelinesv1beta1.Provider
	// WorkflowNamespace is where the Provider's runs live.
	WorkflowNamespace string
	// WorkflowNamespaceTerminating: that namespace is being deleted (looked
	// at only for a resource being deleted). No run can be created there
	// any more, and the runs recording backend ids go with it.
	WorkflowNamespaceTerminating bool
	// Version is the spec's version with Provider, or why it has none.
	Version    string
	VersionErr error
	// Pipeline is the Pipeline the spec runs; nil for kinds that run none
	// and for a resource being deleted.
	Pipeline *PipelineView
	// Compile is what a create or update compiles, for kinds that compile
	// (set with Version).
	Compile *Compile
	// Resolved are the run parameters with valueFrom resolved; nil for
	// kinds that resolve none and for a resource being deleted.
	Resolved *Resolved
	// Runs are the resource's runs made for ProviderKey, oldest first.
	Runs []*RunRecord
	// AwaitingCache: a run this controller created is not in Runs yet.
	AwaitingCache    bool
	HelperConfigured bool
	Backoff          Backoff
	RetryAfter       time.Duration
}

// observe reads what decide needs about obj: its Provider, its runs, and why
// each failed run failed.
func (r *Reconciler[T]) observe(ctx context.Context, obj T) (Observation, error) {
	o := Observation{
		Now: r.now(), Traits: r.Kind.Traits(), Subject: obj,
		Namespace: obj.GetNamespace(), Generation: obj.GetGeneration(),
		Deleting:            !obj.GetDeletionTimestamp().IsZero(),
		SkipBackendDeletion: obj.GetAnnotations()[pipelinesv1beta1.AnnotationSkipBackendDeletion] == "true",
		Status:              *obj.CommonStatus().DeepCopy(),
		ProviderKey:         pipelinesv1beta1.ProviderKey(obj.ProviderReference(), obj.GetNamespace()),
		HelperConfigured:    r.HelperImage != "",
		Backoff:             r.Backoff,
		RetryAfter:          r.RetryAfter,
	}
	if o.Deleting && o.Status.Provider.Name != "" {
		// Runs are looked for in that Provider's namespace only; a run found
		// there is trusted, as only its own team can write there.
		o.ProviderKey = pipelinesv1beta1.ProviderKey(pipelinesv1beta1.ProviderReference(o.Status.Provider.Name), obj.GetNamespace())
	}
	o.WorkflowNamespace = r.workflowNamespace(o.ProviderKey.Namespace)
	if o.Deleting {
		var err error
		if o.WorkflowNamespaceTerminating, err = namespaces.Terminating(ctx, r.APIReader, o.WorkflowNamespace); err != nil {
			return o, err
		}
	}

	provider := &pipelinesv1beta1.Provider{}
	switch err := r.Client.Get(ctx, o.ProviderKey, provider); {
	case err == nil:
		o.Provider = provider
	case !apierrors.IsNotFound(err):
		return o, err
	}
	if !o.Deleting {
		if err := r.observeInputs(ctx, obj, &o); err != nil {
			return o, err
		}
	}
	runs, err := r.runsOf(ctx, obj, o.WorkflowNamespace)
	if err != nil {
		return o, err
	}
	r.observeRuns(ctx, obj, runs, &o)
	return o, nil
}

// observeInputs reads what a create or update of obj takes: the Pipeline
// it runs, its parameters' upstream runs, and its version with the Provider.
func (r *Reconciler[T]) observeInputs(ctx context.Context, obj T, o *Observation) error {
	in := r.Kind.Inputs(obj)
	var err error
	if o.Traits.RunsPipeline {
		if o.Pipeline, err = r.observePipeline(ctx, obj, in.Pipeline); err != nil {
			return err
		}
	}
	if o.Traits.ResolvesParameters {
		upstream, err := r.upstreamOf(ctx, obj.GetNamespace(), in.Parameters)
		if err != nil {
			return err
		}
		resolved := ResolveParameters(in.Parameters, upstream)
		o.Resolved = &resolved
	}
	if o.Provider != nil {
		var prepared Prepared
		prepared, o.VersionErr = r.Kind.Prepare(obj, o.Provider)
		o.Version, o.Compile = prepared.Version, prepared.Compile
		if o.VersionErr == nil && o.Pipeline != nil && o.Pipeline.Floating && o.Pipeline.Version != "" {
			// "name" runs the Pipeline's newest version: a new one is a new
			// version of this resource too (a RunSchedule is updated to it).
			o.Version, o.VersionErr = spechash.Of([]string{o.Version, o.Pipeline.Version})
		}
		if o.VersionErr == nil {
			o.VersionErr = checkVersion(o.Version)
		}
	}
	return nil
}

// observeRuns summarises obj's runs made for its Provider, and why the
// newest failed run of each operation and version failed.
func (r *Reconciler[T]) observeRuns(ctx context.Context, obj T, runs []*tektonv1.PipelineRun, o *Observation) {
	o.AwaitingCache = r.awaitingCache(obj, runs)
	newestFailure := map[[2]string]*tektonv1.PipelineRun{}
	for _, pr := range runs {
		runObserved(r.Kind.Traits().Name, pr)
		rec := recordOf(pr)
		if rec.Provider != o.ProviderKey.String() {
			continue // made for another Provider: not this one's record
		}
		if rec.Done && !rec.Succeeded {
			newestFailure[[2]string{string(rec.Op), rec.Version}] = pr
		}
		o.Runs = append(o.Runs, rec)
	}
	for _, rec := range o.Runs {
		if pr := newestFailure[[2]string{string(rec.Op), rec.Version}]; pr != nil && pr.Name == rec.Name {
			rec.Failure = r.failureMessage(ctx, pr)
		}
	}
}

// PipelineView is what decide needs to know of the Pipeline a resource runs.
type PipelineView struct {
	// Namespace and Name of the Pipeline (always the resource's namespace).
	Namespace, Name string
	// Floating: the reference names no version, so the newest one runs.
	Floating bool
	// Version to run: the one referenced, or the Pipeline's current one.
	Version string
	Found   bool
	// Ready: the Pipeline is synchronised with its backend.
	Ready bool
	// ID and Provider are the backend id and "namespace/name" of the
	// provider the Pipeline is synchronised with.
	ID, Provider string
	// Why is the Pipeline's Ready message when it is not Ready.
	Why string
}

// observePipeline reads the Pipeline obj references.
func (r *Reconciler[T]) observePipeline(ctx context.Context, obj T, ref pipelinesv1beta1.PipelineReference) (*PipelineView, error) {
	name, version, pinned := strings.Cut(string(ref), ":")
	v := &PipelineView{Namespace: obj.GetNamespace(), Name: name, Floating: !pinned, Version: version}
	p := &pipelinesv1beta1.Pipeline{}
	switch err := r.Client.Get(ctx, types.NamespacedName{Namespace: v.Namespace, Name: name}, p); {
	case apierrors.IsNotFound(err):
		return v, nil
	case err != nil:
		return nil, err
	}
	v.Found = true
	// The backend id and version come from the Pipeline's own succeeded
	// run in its provider's namespace, never from its status, which anyone
	// with status access could point at another team's pipeline.
	if p.Status.Provider.Name != "" {
		key := pipelinesv1beta1.ProviderKey(pipelinesv1beta1.ProviderReference(p.Status.Provider.Name), p.Namespace)
		runs, err := r.runsOf(ctx, p, r.workflowNamespace(key.Namespace))
		if err != nil {
			return nil, err
		}
		var records runSet
		for _, pr := range runs {
			if rec := recordOf(pr); rec.Provider == key.String() {
				records = append(records, rec)
			}
		}
		if rec := records.record(); rec != nil {
			v.ID, v.Provider = rec.Provider.ID, rec.Provider.Name
			if v.Floating {
				v.Version = rec.Version
			}
		}
	}
	ready := meta.FindStatusCondition(p.Status.Conditions, pipelinesv1beta1.ConditionReady)
	v.Ready = ready != nil && ready.Status == metav1.ConditionTrue && ready.ObservedGeneration == p.Generation
	if ready != nil && !v.Ready {
		v.Why = ready.Reason + ": " + ready.Message
	}
	return v, nil
}

// runsOf lists obj's PipelineRuns in namespace from the cache, by the owner
// UID index, oldest first.
func (r *Reconciler[T]) runsOf(ctx context.Context, obj Subject, namespace string) ([]*tektonv1.PipelineRun, error) {
	list := &tektonv1.PipelineRunList{}
	if err := r.Client.List(ctx, list, client.InNamespace(namespace),
		client.MatchingFields{contract.IndexOwnerUID: string(obj.GetUID())}); err != nil {
		return nil, fmt.Errorf("listing PipelineRuns of %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	runs := make([]*tektonv1.PipelineRun, len(list.Items))
	for i := range list.Items {
		runs[i] = &list.Items[i]
	}
	sort.SliceStable(runs, func(i, j int) bool { return createdAt(runs[i]).Before(createdAt(runs[j])) })
	return runs, nil
}

// expectation is a run this controller created, not yet seen in the cache.
type expectation struct {
	name    string
	expires time.Time
}

// expectationTimeout bounds the wait for the cache: a run deleted before
// the cache ever showed it must not hold its resource forever.
const expectationTimeout = 5 * time.Second

// awaitingCache says whether a run this controller created for obj is not
// yet in runs; it forgets the expectation once it is, or once it expires.
func (r *Reconciler[T]) awaitingCache(obj Subject, runs []*tektonv1.PipelineRun) bool {
	v, ok := r.expected.Load(obj.GetUID())
	if !ok {
		return false
	}
	e := v.(expectation)
	for _, pr := range runs {
		if pr.Name == e.name {
			r.expected.Delete(obj.GetUID())
			return false
		}
	}
	if r.now().After(e.expires) {
		r.expected.Delete(obj.GetUID())
		return false
	}
	return true
}

// ownWrites are the resourceVersions this controller's writes to one
// resource went through: stale are those its writes replaced, latest the
// one its last write made.
type ownWrites struct {
	stale   []string
	latest  string
	expires time.Time
}

// ownWriteRecheck is how soon a resource whose cached copy predates this
// controller's own last write is looked at again: the watch event is
// usually milliseconds behind the write.
const ownWriteRecheck = 100 * time.Millisecond

// wrote notes that a write of this controller took obj from resourceVersion
// before to the one obj now has (a write that changed nothing, or did
// not happen, leaves it as it was and notes nothing).
func (r *Reconciler[T]) wrote(obj Subject, before string) {
	after := obj.GetResourceVersion()
	if after == before || before == "" {
		return
	}
	stale := []string{before}
	if v, ok := r.written.Load(obj.GetUID()); ok {
		if w := v.(ownWrites); w.latest == before {
			stale = append(w.stale, before)
		}
	}
	now := r.now()
	r.written.Store(obj.GetUID(), ownWrites{stale: stale, latest: after, expires: now.Add(expectationTimeout)})
	// A resource not reconciled again would keep its entry: drop the
	// expired ones, at most once per expectationTimeout.
	if last := r.writtenSwept.Load(); now.UnixNano()-last >= int64(expectationTimeout) && r.writtenSwept.CompareAndSwap(last, now.UnixNano()) {
		r.written.Range(func(uid, v any) bool {
			if now.After(v.(ownWrites).expires) {
				r.written.Delete(uid)
			}
			return true
		})
	}
}

// behindOwnWrite says whether obj, as the cache holds it, is a version this
// controller's own writes replaced: its status or finalizer would look
// missing. It forgets the writes once the cache shows their result or a
// later one (anyone's), or once they expire.
func (r *Reconciler[T]) behindOwnWrite(obj Subject) bool {
	v, ok := r.written.Load(obj.GetUID())
	if !ok {
		return false
	}
	w := v.(ownWrites)
	if rv := obj.GetResourceVersion(); rv != w.latest && slices.Contains(w.stale, rv) && !r.now().After(w.expires) {
		return true
	}
	r.written.Delete(obj.GetUID())
	return false
}

// configMaps reads artifact repository ConfigMaps through a short-lived
// cache: a burst of resources in one namespace costs one request, without
// watching every ConfigMap in the cluster.
func (r *Reconciler[T]) configMaps() client.Reader {
	r.configMapsOnce.Do(func() { r.configMapCache = newConfigMapReader(r.APIReader, r.configMapTTL(), r.now) })
	return r.configMapCache
}
