package provider

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/naming"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/runcompletion"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
)

// A provider service (spec.serviceImage) runs as a Deployment and a
// Service in the Provider's workflow namespace, configured as kfp-operator
// configures its provider services, beside an events relay: kfp-operator's
// services post completions without credentials, so the relay adds the
// Provider's service-account token (projected for the /events audience).
const (
	ServicePort        = 8080 // SERVER_PORT
	ServiceMetricsPort = 8081 // METRICS_PORT
	relayAddress       = "127.0.0.1:8099"
	tokenDir           = "/var/run/secrets/kfp-tekton-operator/events"
	// eventsTokenVolume holds the relay's token; spec.podTemplateVolumes
	// may not take its name.
	eventsTokenVolume = "events-token"
)

// ServiceSettings are what the operator knows that a provider service needs.
type ServiceSettings struct {
	// HelperImage runs the events relay.
	HelperImage string
	// EventsURL is the operator's /events, as the relay reaches it.
	EventsURL string
	// TokenAudience is what /events checks the relay's token for.
	TokenAudience string
}

// serviceName is the Deployment's and Service's name: a DNS-1035 label,
// distinct per Provider even when several share a workflow namespace.
func serviceName(p *pipelinesv1beta1.Provider) string {
	return strings.ReplaceAll(naming.Name([]string{"kfp", p.Name}, p.Namespace, p.Name), ".", "-")
}

// ServiceURL is p's service by its DNS name.
func ServiceURL(p *pipelinesv1beta1.Provider, workflowNamespace string) string {
	return fmt.Sprintf("http://%s.%s.svc:%d", serviceName(p), workflowNamespace, ServicePort)
}

func serviceLabels(p *pipelinesv1beta1.Provider) map[string]string {
	return map[string]string{
		contract.LabelManagedBy:  contract.ManagedByOperator,
		contract.LabelComponent:  contract.ComponentProviderService,
		contract.LabelProvider:   naming.LabelValue(p.Name),
		contract.LabelProviderNS: p.Namespace,
	}
}

// serviceEnv is the environment kfp-operator gives a provider service:
// PROVIDERNAME, PIPELINEROOTSTORAGE, PARAMETERS_<KEY> (upper-cased; a
// string parameter as its text, any other JSON as JSON), the webhook for
// completions (here the relay), ports and POD_NAMESPACE.
func serviceEnv(p *pipelinesv1beta1.Provider) []corev1.EnvVar {
	env := []corev1.EnvVar{
		{Name: "PROVIDERNAME", Value: p.Namespace + "/" + p.Name},
		{Name: "PIPELINEROOTSTORAGE", Value: p.Spec.PipelineRootStorage},
		{Name: "OPERATORWEBHOOK", Value: "http://" + relayAddress + "/events"},
		{Name: "SERVER_PORT", Value: fmt.Sprint(ServicePort)},
		{Name: "METRICS_PORT", Value: fmt.Sprint(ServiceMetricsPort)},
	}
	for key, value := range p.Spec.Parameters {
		env = append(env, corev1.EnvVar{Name: "PARAMETERS_" + strings.ToUpper(key), Value: jsonText(value.Raw)})
	}
	sort.Slice(env, func(i, j int) bool { return env[i].Name < env[j].Name })
	env = append(env, corev1.EnvVar{Name: "POD_NAMESPACE",
		ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}})
	// Then the Provider's own (spec.podTemplateEnv), after the operator's so
	// that they may refer to them ($(PROVIDERNAME)). The operator's win: a
	// name it sets is left out (the API server refuses it already).
	for _, e := range p.Spec.PodTemplateEnv {
		if !operatorEnvName(e.Name) {
			env = append(env, e)
		}
	}
	return env
}

// operatorEnvName says whether the operator sets the variable name on the
// provider service's container (serviceEnv), in any case, as the
// Provider's CRD rule on podTemplateEnv says: kfp-operator's services read
// their settings case-insensitively.
func operatorEnvName(name string) bool {
	name = strings.ToUpper(name)
	switch name {
	case "PROVIDERNAME", "PIPELINEROOTSTORAGE", "OPERATORWEBHOOK", "SERVER_PORT", "METRICS_PORT", "POD_NAMESPACE":
		return true
	}
	return strings.HasPrefix(name, "PARAMETERS_")
}

// jsonText is a JSON string's text, or any other JSON value as written.
func jsonText(raw []byte) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// restricted is Pod Security "restricted"'s container security context.
func restricted(user *int64) *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot: ptr.To(true), RunAsUser: user, AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// serviceAccessPolicy admits to the service's API only the pods that call
// this Provider (providerCallers), in the service's own namespace: the
// provider-service API has no authentication of its own and acts with the
// Provider's backend credentials, so neither the compile pod (tenant code),
// nor another Provider's provider step (another author's image, in a shared
// workflow namespace), nor any other pod of the namespace may reach it.
// (Enforced where the cluster's network plugin enforces NetworkPolicies.)
func serviceAccessPolicy(p *pipelinesv1beta1.Provider, meta metav1.ObjectMeta, selector map[string]string) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: meta,
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: selector},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From:  []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: providerCallers(p)}}},
				Ports: []networkingv1.NetworkPolicyPort{{Port: ptr.To(intstr.FromInt32(ServicePort))}},
			}},
		},
	}
}

// providerCallers selects the pods that call p's provider: pods of the
// shared Tasks that call a provider (taskdef.ProviderCallers, which Tekton
// copies from those Tasks), run for p (the provider labels the lifecycle
// engine puts on each operation PipelineRun it makes for p, valued as it
// values them, which Tekton copies to the run's TaskRuns and pods).
//
// Only the operator sets these labels on pods of the workflow namespace, so
// a tenant cannot wear them: with a workflowNamespace, tenants have no
// rights there at all, and their resources reach it only as PipelineRuns the
// operator labels; without one, the namespace is the Provider's own, whose
// users own its Providers and their credentials already. Tenant code runs
// only in the compile pod, whose Task is not a provider caller, and in the
// Tekton provider's ML pipeline pods, labelled by the Tekton provider as its
// own (managed-by kfp-tekton-provider; the IR compiler refuses platform
// specs, pod labels among them). It holds as far as no account a Provider
// runs as may create pods or PipelineRuns there: one that may (the Tekton
// provider's, which creates the ML PipelineRuns) can run a pod with any
// labels, as any account of the namespace, so its Provider's image is
// trusted with the whole namespace whatever this policy says.
func providerCallers(p *pipelinesv1beta1.Provider) map[string]string {
	callers := taskdef.ProviderCallers()
	callers[contract.LabelProvider] = naming.LabelValue(p.Name)
	callers[contract.LabelProviderNS] = p.Namespace
	return callers
}

// serviceObjects are the Deployment, Service and NetworkPolicy that run
// p's provider service (spec.serviceImage pinned to serviceImage) in namespace.
func serviceObjects(p *pipelinesv1beta1.Provider, namespace, serviceImage string, s ServiceSettings) (*appsv1.Deployment, *corev1.Service, *networkingv1.NetworkPolicy) {
	name, labels := serviceName(p), serviceLabels(p)
	meta := metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels,
		Annotations: map[string]string{contract.AnnotationProvider: p.Namespace + "/" + p.Name}}
	selector := map[string]string{contract.LabelComponent: contract.ComponentProviderService, contract.LabelProvider: labels[contract.LabelProvider], contract.LabelProviderNS: p.Namespace}
	deployment := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: p.Spec.ServiceAccount,
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Containers: []corev1.Container{
						{
							Name: "provider-service", Image: serviceImage, Env: serviceEnv(p),
							VolumeMounts: p.Spec.PodTemplateVolumeMounts,
							Ports:        []corev1.ContainerPort{{Name: "http", ContainerPort: ServicePort}, {Name: "metrics", ContainerPort: ServiceMetricsPort}},
							ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
								HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("http")}}},
							SecurityContext: restricted(nil),
						},
						{
							Name: "events-relay", Image: s.HelperImage, Command: []string{taskdef.HelperBinary},
							Args:            []string{"relay-events", "--listen", relayAddress, "--to", s.EventsURL, "--token-file", tokenDir + "/token"},
							VolumeMounts:    []corev1.VolumeMount{{Name: eventsTokenVolume, MountPath: tokenDir, ReadOnly: true}},
							SecurityContext: restricted(ptr.To[int64](65532)),
						},
					},
					Volumes: append([]corev1.Volume{{Name: eventsTokenVolume, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
						Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
							Audience: runcompletion.ProviderAudience(s.TokenAudience, p.Namespace, p.Name), ExpirationSeconds: ptr.To[int64](3600), Path: "token"}}}}}}},
						p.Spec.PodTemplateVolumes...),
				},
			},
		},
	}
	service := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta,
		Spec: corev1.ServiceSpec{Selector: selector,
			Ports: []corev1.ServicePort{{Name: "http", Port: ServicePort, TargetPort: intstr.FromString("http")}}},
	}
	return deployment, service, serviceAccessPolicy(p, meta, selector)
}

// serviceReadiness says whether the Deployment serves its newest spec,
// and why not in words a platform engineer can act on.
func serviceReadiness(d *appsv1.Deployment, waiting string) (bool, string) {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	if d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas >= want && d.Status.AvailableReplicas >= want &&
		d.Status.Replicas == d.Status.UpdatedReplicas {
		return true, ""
	}
	msg := fmt.Sprintf("provider service Deployment %s/%s: %d of %d replicas of the current spec available",
		d.Namespace, d.Name, min(d.Status.AvailableReplicas, d.Status.UpdatedReplicas), want)
	for _, c := range d.Status.Conditions {
		// Not progressing (deadline), or its pods refused (quota, admission).
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse ||
			c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue {
			msg += "; " + c.Reason + ": " + c.Message
		}
	}
	if waiting != "" {
		msg += "; " + waiting
	}
	return false, msg
}

// podWaiting is why a pod of the service is not ready: a container's
// waiting reason (ErrImagePull, CrashLoopBackOff) or the failing probe.
func podWaiting(pods []corev1.Pod) string {
	for _, pod := range pods {
		for _, cs := range pod.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" {
				return fmt.Sprintf("container %s of pod %s: %s: %s", cs.Name, pod.Name, w.Reason, w.Message)
			}
			if cs.State.Running != nil && !cs.Ready {
				return fmt.Sprintf("container %s of pod %s runs but is not ready (GET /readyz on port %d)", cs.Name, pod.Name, ServicePort)
			}
		}
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				return fmt.Sprintf("pod %s not scheduled: %s", pod.Name, c.Message)
			}
		}
	}
	return ""
}
