package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// maxUserNames is how many names of each kind the ProviderInUse message gives.
const maxUserNames = 3

// userKind is a kind of resource that references Providers.
type userKind struct {
	kind, plural string
	object       func() client.Object
	list         func() client.ObjectList
	// indexed: the manager's cache indexes the kind by contract.IndexProvider
	// (the lifecycle engine registers it); others are listed and filtered.
	indexed bool
}

var userKinds = []userKind{
	{"Pipeline", "Pipelines", func() client.Object { return &pipelinesv1beta1.Pipeline{} },
		func() client.ObjectList { return &pipelinesv1beta1.PipelineList{} }, true},
	{"Experiment", "Experiments", func() client.Object { return &pipelinesv1beta1.Experiment{} },
		func() client.ObjectList { return &pipelinesv1beta1.ExperimentList{} }, true},
	{"RunSchedule", "RunSchedules", func() client.Object { return &pipelinesv1beta1.RunSchedule{} },
		func() client.ObjectList { return &pipelinesv1beta1.RunScheduleList{} }, true},
	{"Run", "Runs", func() client.Object { return &pipelinesv1beta1.Run{} },
		func() client.ObjectList { return &pipelinesv1beta1.RunList{} }, true},
	{"RunConfiguration", "RunConfigurations", func() client.Object { return &pipelinesv1beta1.RunConfiguration{} },
		func() client.ObjectList { return &pipelinesv1beta1.RunConfigurationList{} }, false},
}

// referrer is a resource that references a Provider.
type referrer interface {
	client.Object
	ProviderReference() pipelinesv1beta1.ProviderReference
}

// providerOf is the Provider obj references (false when obj references none).
func providerOf(obj client.Object) (types.NamespacedName, bool) {
	r, ok := obj.(referrer)
	if !ok {
		return types.NamespacedName{}, false
	}
	return pipelinesv1beta1.ProviderKey(r.ProviderReference(), r.GetNamespace()), true
}

// usage is how many resources of one kind reference a Provider, and the
// first few of them ("namespace/name", sorted).
type usage struct {
	kind  userKind
	count int
	names []string
}

// usersOf counts, per kind, the resources that reference the Provider key
// from a namespace it admits (its own, or one in allowedNamespaces), from
// the manager's cache. Kinds with none are left out. A resource in a
// namespace the Provider does not admit never reached its backend, and
// must not let another team hold the Provider's deletion.
func (r *Reconciler) usersOf(ctx context.Context, key types.NamespacedName, allowed []string) ([]usage, error) {
	var out []usage
	for _, k := range userKinds {
		list := k.list()
		var opts []client.ListOption
		if k.indexed {
			opts = append(opts, client.MatchingFields{contract.IndexProvider: key.String()})
		}
		if err := r.Client.List(ctx, list, opts...); err != nil {
			return nil, fmt.Errorf("listing %s using provider %s: %w", k.plural, key, err)
		}
		var names []string
		if err := meta.EachListItem(list, func(o runtime.Object) error {
			obj := o.(client.Object)
			if ref, ok := providerOf(obj); ok && ref == key && admitted(obj.GetNamespace(), key.Namespace, allowed) {
				names = append(names, client.ObjectKeyFromObject(obj).String())
			}
			return nil
		}); err != nil {
			return nil, err
		}
		if len(names) == 0 {
			continue
		}
		slices.Sort(names)
		out = append(out, usage{kind: k, count: len(names), names: names[:min(len(names), maxUserNames)]})
	}
	return out, nil
}

// admitted: a Provider in providerNamespace with allowedNamespaces allowed
// serves resources of namespace.
func admitted(namespace, providerNamespace string, allowed []string) bool {
	return namespace == providerNamespace || slices.Contains(allowed, namespace) || slices.Contains(allowed, "*")
}

// usersStatus is status.users for the usages.
func usersStatus(users []usage) []pipelinesv1beta1.ProviderUsers {
	var out []pipelinesv1beta1.ProviderUsers
	for _, u := range users {
		out = append(out, pipelinesv1beta1.ProviderUsers{Kind: u.kind.kind, Count: int32(min(u.count, 1<<30))}) //nolint:gosec // bounded
	}
	return out
}

// inUseMessage says which resources keep a Provider being deleted, and how
// to let it go.
func inUseMessage(users []usage) string {
	parts := make([]string, 0, len(users))
	for _, u := range users {
		noun := u.kind.kind
		if u.count != 1 {
			noun = u.kind.plural
		}
		names := strings.Join(u.names, ", ")
		if u.count > len(u.names) {
			names += ", ..."
		}
		parts = append(parts, fmt.Sprintf("%d %s (%s)", u.count, noun, names))
	}
	return fmt.Sprintf("still used by %s: delete them first (their deletion from the backend needs this provider), "+
		"or annotate them %s=true to let them go without deleting them from the backend; the provider and its shared Tasks stay until then",
		strings.Join(parts, ", "), pipelinesv1beta1.AnnotationSkipBackendDeletion)
}

// enqueueProviderOfUser wakes the Provider a resource references when the
// resource appears, goes, or moves to another provider, so status.users
// stays current and a Provider being deleted goes with its last user.
func enqueueProviderOfUser() handler.EventHandler {
	add := func(q workqueue.TypedRateLimitingInterface[reconcile.Request], obj client.Object) {
		if key, ok := providerOf(obj); ok {
			q.Add(reconcile.Request{NamespacedName: key})
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(q, e.Object)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			before, _ := providerOf(e.ObjectOld)
			after, _ := providerOf(e.ObjectNew)
			if before != after {
				add(q, e.ObjectOld)
				add(q, e.ObjectNew)
			}
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(q, e.Object)
		},
	}
}
