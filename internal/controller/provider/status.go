package provider

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/status"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/imageref"
)

// observation is what one reconcile found out; status turns it into the
// Provider's status without further API calls.
type observation struct {
	workflowNamespace string
	tasks             []string
	tasksErr          error
	serviceAccountErr error
	image             string
	frameworks        []pipelinesv1beta1.Framework
	imageErr          error
	// podSecurity says why Pod Security admission would refuse every run's pods.
	podSecurity string
	// users: the resources referencing the Provider, per kind.
	users []usage
	// A provider service: its pinned image, URL, why it is not ready, or
	// why it could not be applied.
	serviceImage    string
	serviceURL      string
	serviceNotReady string
	serviceErr      error
	// podTemplateErr: the operator refuses the provider service's pod
	// settings (podTemplateProblem); a change of the spec fixes it.
	podTemplateErr error
}

// readyCondition is the Ready condition the observation warrants; the first
// problem, in the order a platform engineer would fix them, is reported.
func readyCondition(p *pipelinesv1beta1.Provider, o observation) metav1.Condition {
	c := metav1.Condition{Type: pipelinesv1beta1.ConditionReady, Status: metav1.ConditionFalse, ObservedGeneration: p.Generation}
	switch {
	case o.tasksErr != nil:
		c.Reason = pipelinesv1beta1.ReasonTasksNotApplied
		c.Message = fmt.Sprintf("shared Tasks could not be applied in namespace %s: %v", o.workflowNamespace, o.tasksErr)
	case errors.Is(o.serviceAccountErr, errServiceAccountNotFound):
		c.Reason = pipelinesv1beta1.ReasonServiceAccountNotFound
		c.Message = fmt.Sprintf("service account %q does not exist in namespace %s; the operator does not create it (the provider chart does)",
			p.Spec.ServiceAccount, o.workflowNamespace)
	case errors.Is(o.serviceAccountErr, errServiceAccountNotAllowed):
		c.Reason = pipelinesv1beta1.ReasonServiceAccountNotAllowed
		c.Message = o.serviceAccountErr.Error()
	case o.serviceAccountErr != nil:
		c.Reason = pipelinesv1beta1.ReasonServiceAccountNotFound
		c.Message = o.serviceAccountErr.Error()
	case errors.Is(o.imageErr, imageref.ErrInvalidReference):
		c.Reason = pipelinesv1beta1.ReasonInvalidSpec
		c.Message = o.imageErr.Error()
	case o.imageErr != nil:
		c.Reason = pipelinesv1beta1.ReasonImageNotResolvable
		c.Message = o.imageErr.Error()
	case o.podTemplateErr != nil:
		c.Reason = pipelinesv1beta1.ReasonInvalidSpec
		c.Message = o.podTemplateErr.Error()
	case o.podSecurity != "":
		c.Reason = pipelinesv1beta1.ReasonPodSecurityIncompatible
		c.Message = o.podSecurity
	case o.serviceErr != nil:
		c.Reason = pipelinesv1beta1.ReasonProviderServiceNotReady
		c.Message = o.serviceErr.Error()
	case o.serviceNotReady != "":
		c.Reason = pipelinesv1beta1.ReasonProviderServiceNotReady
		c.Message = o.serviceNotReady
	case p.Spec.ServiceImage != "":
		c.Status = metav1.ConditionTrue
		c.Reason = pipelinesv1beta1.ReasonTasksApplied
		c.Message = fmt.Sprintf("%d shared Tasks in namespace %s; provider service %s at %s", len(o.tasks), o.workflowNamespace, o.serviceImage, o.serviceURL)
		if p.Spec.Image != "" {
			c.Message += fmt.Sprintf("; spec.image %s is not used: serviceImage serves this Provider", p.Spec.Image)
		}
	default:
		c.Status = metav1.ConditionTrue
		c.Reason = pipelinesv1beta1.ReasonTasksApplied
		c.Message = fmt.Sprintf("%d shared Tasks in namespace %s; image %s", len(o.tasks), o.workflowNamespace, o.image)
	}
	return c
}

// desiredStatus is the Provider's status after the observation.
func desiredStatus(p *pipelinesv1beta1.Provider, o observation) pipelinesv1beta1.ProviderStatus {
	s := *p.Status.DeepCopy()
	s.ObservedGeneration = p.Generation
	s.WorkflowNamespace = o.workflowNamespace
	if o.tasksErr == nil {
		s.Tasks = o.tasks
	}
	// Pins are never stale: a spec whose images failed to resolve has none.
	s.Image, s.Frameworks, s.ServiceImage, s.ServiceURL = o.image, o.frameworks, o.serviceImage, o.serviceURL
	if o.imageErr != nil {
		s.Image, s.Frameworks, s.ServiceImage = "", nil, ""
	}
	s.Users = usersStatus(o.users)
	ready := readyCondition(p, o)
	state := pipelinesv1beta1.StateSucceeded
	if ready.Status != metav1.ConditionTrue {
		state = pipelinesv1beta1.StateFailed
	}
	status.Set(&s.Conditions, p.Generation, status.Report{Ready: ready.Status, Reason: ready.Reason, State: state, Message: ready.Message})
	return s
}

// imagesCurrent says the status already pins the images of this
// generation (pins are cleared when resolution fails), so the registry need
// not be asked again.
func imagesCurrent(p *pipelinesv1beta1.Provider) bool {
	return p.Status.ObservedGeneration == p.Generation && pinnedImage(p) != "" &&
		len(p.Status.Frameworks) == len(p.Spec.Frameworks)
}

// pinnedImage is the status's pin of spec.image or spec.serviceImage.
func pinnedImage(p *pipelinesv1beta1.Provider) string {
	if p.Spec.ServiceImage != "" {
		return p.Status.ServiceImage
	}
	return p.Status.Image
}

// inUseStatus is the status of p, being deleted, while users still
// reference it: what it pins stays (their deletions run on it).
func inUseStatus(p *pipelinesv1beta1.Provider, users []usage) pipelinesv1beta1.ProviderStatus {
	s := *p.Status.DeepCopy()
	s.ObservedGeneration = p.Generation
	s.Users = usersStatus(users)
	status.Set(&s.Conditions, p.Generation, status.Report{Ready: metav1.ConditionFalse, Reason: pipelinesv1beta1.ReasonProviderInUse,
		State: pipelinesv1beta1.StateDeleting, Message: inUseMessage(users)})
	return s
}
