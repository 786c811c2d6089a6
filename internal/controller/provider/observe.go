package provider

import (
	"context"
	"errors"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/namespaces"
)

// observation is what one reconcile read of the world before acting: decide
// turns it into a plan, and conclude (with what applying the plan did)
// into the Provider's status, without further API calls.
type observation struct {
	provider          *pipelinesv1beta1.Provider
	workflowNamespace string
	// users: the resources referencing the Provider, per kind.
	users []usage
	// hasFinalizer: the Provider holds FinalizerSharedTasks.
	hasFinalizer bool

	// Of a Provider being deleted (read only while they matter):
	// namespaceTerminating says its workflow namespace is going (its
	// Tasks and service with it); otherProviders counts the Providers
	// still using that namespace besides it.
	namespaceTerminating bool
	otherProviders       int

	// Of a live Provider:
	tasks             []string // the shared Tasks' names
	serviceAccountErr error
	image             string
	frameworks        []pipelinesv1beta1.Framework
	imageErr          error
	// serviceImage is a provider service's pinned image (image is then
	// the helper's, which the provider step runs to call the service).
	serviceImage string
	// podSecurity says why Pod Security admission would refuse every run's pods.
	podSecurity string
	// podTemplateErr: the operator refuses the provider service's pod
	// settings (podTemplateProblem); a change of the spec fixes it.
	podTemplateErr error
	// sharedAccount: the Provider runs as an account of the shared
	// workflow namespace marked for it (runsAsMarkedAccount).
	sharedAccount bool
	// retryAfter is how soon what the operator does not watch is read again.
	retryAfter time.Duration
}

// observe reads what p's reconcile needs; an error is one a retry may fix,
// and nothing has been changed yet.
func (r *Reconciler) observe(ctx context.Context, p *pipelinesv1beta1.Provider) (observation, error) {
	o := observation{provider: p, workflowNamespace: r.WorkflowNamespaceOf(p), retryAfter: r.retryAfter(),
		hasFinalizer: controllerutil.ContainsFinalizer(p, pipelinesv1beta1.FinalizerSharedTasks)}
	var err error
	if o.users, err = r.usersOf(ctx, client.ObjectKeyFromObject(p), p.Spec.AllowedNamespaces); err != nil {
		return o, err
	}
	if !p.DeletionTimestamp.IsZero() {
		return o, r.observeDeletion(ctx, &o)
	}
	return o, r.observeLive(ctx, &o)
}

// observeDeletion reads what letting a Provider being deleted go needs,
// while it holds the finalizer and nothing references it.
func (r *Reconciler) observeDeletion(ctx context.Context, o *observation) error {
	if !o.hasFinalizer || len(o.users) > 0 {
		return nil
	}
	terminating, err := namespaces.Terminating(ctx, r.APIReader, o.workflowNamespace)
	if err != nil || terminating {
		o.namespaceTerminating = terminating
		return err
	}
	others, err := r.providersUsing(ctx, o.workflowNamespace)
	if err != nil {
		return err
	}
	for _, other := range others {
		if other.UID != o.provider.UID && other.DeletionTimestamp.IsZero() {
			o.otherProviders++
		}
	}
	return nil
}

// observeLive reads the service accounts, pins the images (from the status
// when this generation's are pinned already, else from the registry) and
// reads whether Pod Security admission would refuse the runs' pods.
func (r *Reconciler) observeLive(ctx context.Context, o *observation) error {
	p := o.provider
	o.tasks = r.tasks.names()
	o.sharedAccount = r.runsAsMarkedAccount(p)
	keychain, saErr := serviceAccountKeychain(ctx, r.APIReader, o.workflowNamespace, p.Spec.ServiceAccount)
	if saErr == nil {
		saErr = checkWorkflowServiceAccount(ctx, r.APIReader, r.WorkflowNamespace, p)
		if saErr != nil && !errors.Is(saErr, errServiceAccountNotAllowed) {
			return saErr
		}
	}
	o.serviceAccountErr = saErr
	var pinned string
	switch {
	case keychain == nil:
		o.imageErr = saErr
	case imagesCurrent(p):
		pinned, o.frameworks = pinnedImage(p), p.Status.Frameworks
	default:
		pinned, o.frameworks, o.imageErr = resolveImages(ctx, p.Spec, keychain)
	}
	o.image = pinned
	if p.Spec.ServiceImage != "" {
		o.serviceImage, o.image = pinned, r.Service.HelperImage
		o.podTemplateErr = podTemplateProblem(p, o.sharedAccount)
	}
	var err error
	o.podSecurity, err = checkPodSecurity(ctx, r.APIReader, o.workflowNamespace, r.tektonNamespace())
	return err
}
