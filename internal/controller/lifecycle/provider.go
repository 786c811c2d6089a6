package lifecycle

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

// providerReady: p is Ready and its image is pinned.
func providerReady(p *pipelinesv1beta1.Provider) bool {
	return meta.IsStatusConditionTrue(p.Status.Conditions, pipelinesv1beta1.ConditionReady) && p.Status.Image != ""
}

// providerServesDeletion: p can run the delete operations of its resources:
// Ready, or being deleted itself and waiting for them (ProviderInUse), its
// image still pinned.
func providerServesDeletion(p *pipelinesv1beta1.Provider) bool {
	c := meta.FindStatusCondition(p.Status.Conditions, pipelinesv1beta1.ConditionReady)
	return providerReady(p) || (c != nil && c.Reason == pipelinesv1beta1.ReasonProviderInUse && p.Status.Image != "")
}

func notReadyMessage(p *pipelinesv1beta1.Provider) string {
	msg := fmt.Sprintf("provider %s/%s is not Ready", p.Namespace, p.Name)
	if c := meta.FindStatusCondition(p.Status.Conditions, pipelinesv1beta1.ConditionReady); c != nil && c.Message != "" {
		msg += ": " + c.Message
	}
	return msg
}
