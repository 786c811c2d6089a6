package provider

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// ensureService applies p's provider service and reports its URL and, while
// it does not serve yet, why. err is a failure to apply it (e.g. no rights
// in the namespace), shown in the Provider's status.
func (r *Reconciler) ensureService(ctx context.Context, p *pipelinesv1beta1.Provider, namespace, image string) (url, notReady string, err error) {
	if r.Service.HelperImage == "" || r.Service.EventsURL == "" {
		return "", "", errors.New("the operator is configured without helperImage or eventsURL, which a provider service needs (its calls and its events relay)")
	}
	deployment, service, policy := serviceObjects(p, namespace, image, r.Service)
	for _, obj := range []client.Object{policy, service, deployment} {
		if err := r.Client.Patch(ctx, obj, client.Apply, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
			return "", "", fmt.Errorf("applying provider service %s %s/%s: %w", obj.GetObjectKind().GroupVersionKind().Kind, namespace, obj.GetName(), err)
		}
	}
	// The apply answered with the stored Deployment, status included: no
	// read from a cache that may not have it yet.
	ready, why := serviceReadiness(deployment, "")
	if !ready {
		var pods corev1.PodList
		if err := r.APIReader.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels(deployment.Spec.Selector.MatchLabels)); err == nil {
			_, why = serviceReadiness(deployment, podWaiting(pods.Items))
		}
	}
	return serviceURL(service, p, namespace), why, nil
}

// serviceURL addresses the Service by its cluster IP (as applied), so the
// provider step needs no cluster DNS; by name if it has none.
func serviceURL(applied *corev1.Service, p *pipelinesv1beta1.Provider, namespace string) string {
	if ip := applied.Spec.ClusterIP; ip != "" && ip != corev1.ClusterIPNone {
		return fmt.Sprintf("http://%s", net.JoinHostPort(ip, fmt.Sprint(ServicePort)))
	}
	return ServiceURL(p, namespace)
}

// removeService deletes p's provider service, if it has one: the cache
// (which holds the operator's Deployments) says whether it does, so a CLI
// provider costs no API call and needs no rights on Deployments.
// A Provider that is or was a service (its status names one) is deleted
// directly: the cache may not hold a Deployment applied a moment ago.
func (r *Reconciler) removeService(ctx context.Context, p *pipelinesv1beta1.Provider, namespace string) error {
	name := serviceName(p)
	if p.Spec.ServiceImage == "" && p.Status.ServiceURL == "" {
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, &appsv1.Deployment{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	for _, obj := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}, &networkingv1.NetworkPolicy{}} {
		obj.SetNamespace(namespace)
		obj.SetName(name)
		if err := r.Client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("removing provider service %s/%s: %w", namespace, name, err)
		}
	}
	return nil
}

// providerOfService maps a provider service's Deployment to its Provider.
func providerOfService(_ context.Context, obj client.Object) []reconcile.Request {
	ns, name, ok := strings.Cut(obj.GetAnnotations()[contract.AnnotationProvider], "/")
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}
