package provider

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/status"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/imageref"
)

// readyCondition is the Ready condition the observation and what was
// applied warrant; the first problem, in the order a platform engineer
// would fix them, is reported.
func readyCondition(o observation, a applied) metav1.Condition {
	p := o.provider
	c := metav1.Condition{Type: pipelinesv1beta1.ConditionReady, Status: metav1.ConditionFalse, ObservedGeneration: p.Generation}
	switch {
	case a.tasksErr != nil:
		c.Reason = pipelinesv1beta1.ReasonTasksNotApplied
		c.Message = fmt.Sprintf("shared Tasks could not be applied in namespace %s: %v", o.workflowNamespace, a.tasksErr)
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
	case a.serviceErr != nil:
		c.Reason = pipelinesv1beta1.ReasonProviderServiceNotReady
		c.Message = a.serviceErr.Error()
	case a.serviceNotReady != "":
		c.Reason = pipelinesv1beta1.ReasonProviderServiceNotReady
		c.Message = a.serviceNotReady
	case p.Spec.ServiceImage != "":
		c.Status = metav1.ConditionTrue
		c.Reason = pipelinesv1beta1.ReasonTasksApplied
		c.Message = fmt.Sprintf("%d shared Tasks in namespace %s; provider service %s at %s", len(o.tasks), o.workflowNamespace, o.serviceImage, a.serviceURL)
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

// desiredStatus is the Provider's status after the observation and what
// was applied.
func desiredStatus(o observation, a applied) pipelinesv1beta1.ProviderStatus {
	p := o.provider
	s := *p.Status.DeepCopy()
	s.ObservedGeneration = p.Generation
	s.WorkflowNamespace = o.workflowNamespace
	if a.tasksErr == nil {
		s.Tasks = o.tasks
	}
	// Pins are never stale: a spec whose images failed to resolve has none.
	s.Image, s.Frameworks, s.ServiceImage, s.ServiceURL = o.image, o.frameworks, o.serviceImage, a.serviceURL
	if o.imageErr != nil {
		s.Image, s.Frameworks, s.ServiceImage = "", nil, ""
	}
	s.Users = usersStatus(o.users)
	ready := readyCondition(o, a)
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
