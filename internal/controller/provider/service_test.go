package provider_test

// Provider services against a real API server: the operator runs a
// Provider's serviceImage as a Deployment and Service configured as
// kfp-operator configures its provider services, reports it Ready only
// when the Deployment is available, and removes it when the Provider
// stops being a service or goes.

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv/registry"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/tasks/taskdef"
)

// serviceDeployment is the only provider-service Deployment in ns.
func serviceDeployment(c *assert.CollectT, ns string) *appsv1.Deployment {
	var l appsv1.DeploymentList
	if !assert.NoError(c, cp.Client.List(context.Background(), &l, client.InNamespace(ns))) || !assert.Len(c, l.Items, 1) {
		return nil
	}
	return &l.Items[0]
}

// updateProvider changes p as stored, again on a conflict with the
// operator's own writes (finalizer, status).
// update changes obj on a fresh copy, retrying when the operator wrote it
// in between.
func update[O client.Object](t *testing.T, obj O, change func(O)) {
	t.Helper()
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := cp.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change(obj)
		return cp.Client.Update(context.Background(), obj)
	}))
}

func env(c corev1.Container) map[string]string {
	out := map[string]string{}
	for _, e := range c.Env {
		out[e.Name] = e.Value
	}
	return out
}

func TestAProviderServiceRunsAsADeployment(t *testing.T) {
	ctx := context.Background()
	startOperator(t, "")
	reg := registry.Start(t)
	image, digest := reg.Push("team/provider-service:v1")
	ns := namespace(t)
	serviceAccount(t, ns, "kfp-provider")
	p := newProvider(ns, "kfp", "")
	p.Spec.ServiceImage, p.Spec.PipelineRootStorage = image, "gs://bucket/root"
	p.Spec.Parameters = map[string]apiextensionsv1.JSON{"kfpNamespace": {Raw: []byte(`"kubeflow"`)}, "retries": {Raw: []byte(`3`)}}
	require.NoError(t, cp.Client.Create(ctx, p))

	var d *appsv1.Deployment
	require.EventuallyWithT(t, func(c *assert.CollectT) { d = serviceDeployment(c, ns) }, wait, tick)
	pod := d.Spec.Template.Spec
	assert.Equal(t, "kfp-provider", pod.ServiceAccountName, "runs as the Provider's service account")
	require.Len(t, pod.Containers, 2)
	service, relay := pod.Containers[0], pod.Containers[1]
	assert.Equal(t, image+"@"+digest, service.Image, "pinned to its digest")
	assert.Equal(t, map[string]string{
		"PROVIDERNAME": ns + "/kfp", "PIPELINEROOTSTORAGE": "gs://bucket/root",
		"PARAMETERS_KFPNAMESPACE": "kubeflow", "PARAMETERS_RETRIES": "3",
		"OPERATORWEBHOOK": "http://127.0.0.1:8099/events", "SERVER_PORT": "8080", "METRICS_PORT": "8081", "POD_NAMESPACE": "",
	}, env(service), "kfp-operator's environment (POD_NAMESPACE from the downward API)")
	assert.Equal(t, "/readyz", service.ReadinessProbe.HTTPGet.Path)
	assert.Equal(t, []string{"relay-events", "--listen", "127.0.0.1:8099", "--to", "http://kfp-tekton-operator-events.kfp-tekton-operator.svc/events",
		"--token-file", "/var/run/secrets/kfp-tekton-operator/events/token"}, relay.Args)
	require.Len(t, pod.Volumes, 1)
	assert.Equal(t, "kfp-tekton-operator/"+ns+"/kfp", pod.Volumes[0].Projected.Sources[0].ServiceAccountToken.Audience,
		"a token /events accepts only for this Provider")
	var svc corev1.Service
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(d), &svc))
	assert.EqualValues(t, 8080, svc.Spec.Ports[0].Port)
	var policy networkingv1.NetworkPolicy
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(d), &policy))
	assert.Equal(t, d.Spec.Selector.MatchLabels, policy.Spec.PodSelector.MatchLabels)
	require.Len(t, policy.Spec.Ingress, 1)
	assert.Nil(t, policy.Spec.Ingress[0].From[0].NamespaceSelector, "its own namespace only")
	callers, err := metav1.LabelSelectorAsSelector(policy.Spec.Ingress[0].From[0].PodSelector)
	require.NoError(t, err)
	for _, task := range taskdef.Tasks() { // Tekton copies a Task's labels to its pods
		assert.False(t, callers.Matches(labels.Set(task.Labels)),
			"pods of %s run for no operation of this Provider are not admitted (see TestAProviderServiceAdmitsOnlyItsOwnProvidersCallers)", task.Name)
	}
	assert.False(t, callers.Matches(labels.Set{"app": "anything-else"}), "other pods of the namespace are not admitted")
	assert.EqualValues(t, 8080, policy.Spec.Ingress[0].Ports[0].Port.IntVal)

	// No kubelet here: the Deployment never becomes available, and the Provider says so.
	eventuallyReady(t, p, metav1.ConditionFalse, pipelinesv1beta1.ReasonProviderServiceNotReady)
	assert.Contains(t, ready(t, p).Message, "provider service Deployment "+ns+"/"+d.Name+": 0 of 1 replicas")
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(d), &svc))
	assert.Equal(t, "http://"+svc.Spec.ClusterIP+":8080", p.Status.ServiceURL, "by cluster IP: no cluster DNS needed")

	// Available, as the Deployment controller would report it.
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(d), d))
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
	require.NoError(t, cp.Client.Status().Update(ctx, d))
	eventuallyReady(t, p, metav1.ConditionTrue, pipelinesv1beta1.ReasonTasksApplied)
	assert.Equal(t, "example.com/kfp-tekton-operator:test", p.Status.Image, "the provider step runs the helper, which calls the service")
	assert.Equal(t, image+"@"+digest, p.Status.ServiceImage)

	// A changed parameter reaches the Deployment.
	update(t, p, func(p *pipelinesv1beta1.Provider) {
		p.Spec.Parameters["kfpNamespace"] = apiextensionsv1.JSON{Raw: []byte(`"kubeflow-2"`)}
	})
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		if d := serviceDeployment(c, ns); d != nil {
			assert.Equal(c, "kubeflow-2", env(d.Spec.Template.Spec.Containers[0])["PARAMETERS_KFPNAMESPACE"])
		}
	}, wait, tick)

	// Becoming a CLI provider removes the service.
	update(t, p, func(p *pipelinesv1beta1.Provider) { p.Spec.ServiceImage, p.Spec.Image = "", image })
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.True(c, apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(d), &appsv1.Deployment{})), "Deployment gone")
		assert.True(c, apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(d), &corev1.Service{})), "Service gone")
		assert.True(c, apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(d), &networkingv1.NetworkPolicy{})), "NetworkPolicy gone")
	}, wait, tick)
	eventuallyReady(t, p, metav1.ConditionTrue, pipelinesv1beta1.ReasonTasksApplied)
	assert.Empty(t, p.Status.ServiceURL)

	// And back; then deleting the Provider removes it too.
	update(t, p, func(p *pipelinesv1beta1.Provider) { p.Spec.ServiceImage, p.Spec.Image = image, "" })
	require.EventuallyWithT(t, func(c *assert.CollectT) { d = serviceDeployment(c, ns) }, wait, tick)
	require.NoError(t, cp.Client.Delete(ctx, p))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.True(c, apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(d), &appsv1.Deployment{})), "Deployment gone")
		assert.True(c, apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(p), p)), "Provider gone")
	}, wait, tick)
}

// serviceOf is p's provider-service Deployment.
func serviceOf(c *assert.CollectT, p *pipelinesv1beta1.Provider) *appsv1.Deployment {
	return serviceIn(c, p.Namespace, p)
}

// serviceIn is p's provider-service Deployment in workflow namespace ns.
func serviceIn(c *assert.CollectT, ns string, p *pipelinesv1beta1.Provider) *appsv1.Deployment {
	var l appsv1.DeploymentList
	if !assert.NoError(c, cp.Client.List(context.Background(), &l, client.InNamespace(ns))) {
		return nil
	}
	for i := range l.Items {
		if l.Items[i].Annotations[contract.AnnotationProvider] == p.Namespace+"/"+p.Name {
			return &l.Items[i]
		}
	}
	assert.Fail(c, "no provider service Deployment for "+p.Name)
	return nil
}

// readyService runs p as a provider service, available as the Deployment
// controller would report it, and waits for p to be Ready.
func readyService(t *testing.T, p *pipelinesv1beta1.Provider) *appsv1.Deployment {
	t.Helper()
	require.NoError(t, cp.Client.Create(context.Background(), p))
	var d *appsv1.Deployment
	require.EventuallyWithT(t, func(c *assert.CollectT) { d = serviceOf(c, p) }, wait, tick)
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
	require.NoError(t, cp.Client.Status().Update(context.Background(), d))
	eventuallyReady(t, p, metav1.ConditionTrue, pipelinesv1beta1.ReasonTasksApplied)
	return d
}

// operationRun is the PipelineRun the lifecycle engine made for an
// Experiment's create.
func operationRun(t *testing.T, ns, experiment string) *tektonv1.PipelineRun {
	t.Helper()
	var run *tektonv1.PipelineRun
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var l tektonv1.PipelineRunList
		require.NoError(c, cp.Client.List(context.Background(), &l, client.InNamespace(ns),
			client.MatchingLabels{contract.LabelOwnerKind: "experiment", contract.LabelOwnerName: experiment}))
		if assert.NotEmpty(c, l.Items) {
			run = &l.Items[0]
		}
	}, wait, tick, "the engine makes the Experiment's PipelineRun")
	return run
}

// podLabels are the labels Tekton gives the pod running task in run: the
// Task's, the PipelineRun's over them, then its own.
func podLabels(run *tektonv1.PipelineRun, task *tektonv1.Task) labels.Set {
	pod := labels.Set{}
	for _, from := range []map[string]string{task.Labels, run.Labels} {
		for k, v := range from {
			pod[k] = v
		}
	}
	pod["tekton.dev/pipelineRun"], pod["tekton.dev/task"] = run.Name, task.Name
	return pod
}

// Two Providers' services in one namespace (as in a shared workflow
// namespace): each one's NetworkPolicy admits the provider steps of the
// PipelineRuns the operator made for that Provider, and not the other's.
func TestAProviderServiceAdmitsOnlyItsOwnProvidersCallers(t *testing.T) {
	ctx := context.Background()
	startOperator(t, "")
	reg := registry.Start(t)
	image, _ := reg.Push("team/provider-service:v1")
	ns := namespace(t)
	serviceAccount(t, ns, "kfp-provider")
	services := map[string]*appsv1.Deployment{}
	for _, name := range []string{"kfp", "vai"} {
		p := newProvider(ns, name, "")
		p.Spec.ServiceImage = image
		services[name] = readyService(t, p)
	}
	runs := map[string]*tektonv1.PipelineRun{}
	for providerName, experiment := range map[string]string{"kfp": "mine", "vai": "theirs"} {
		require.NoError(t, cp.Client.Create(ctx, &pipelinesv1beta1.Experiment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: experiment,
				Annotations: map[string]string{"pipelines.kubeflow.org/skip-backend-deletion": "true"}},
			Spec: pipelinesv1beta1.ExperimentSpec{Provider: pipelinesv1beta1.ProviderReference(providerName)}}))
		runs[providerName] = operationRun(t, ns, experiment)
	}
	// The shared Tasks as the operator applied them in the namespace.
	var create, compile tektonv1.Task
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "kfp-experiment-create"}, &create))
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: taskdef.CompileTaskName}, &compile))

	for name, service := range services {
		var policy networkingv1.NetworkPolicy
		require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(service), &policy))
		callers, err := metav1.LabelSelectorAsSelector(policy.Spec.Ingress[0].From[0].PodSelector)
		require.NoError(t, err)
		for runFor, run := range runs {
			assert.Equal(t, runFor == name, callers.Matches(podLabels(run, &create)),
				"the service of %s admits the provider step of the run made for %s", name, runFor)
			assert.False(t, callers.Matches(podLabels(run, &compile)), "nor any compile pod (tenant code)")
		}
		assert.False(t, callers.Matches(labels.Set(service.Spec.Template.Labels)), "nor a provider service's own pods")
	}
}

// A namespace being deleted takes the Provider's Tasks, its service and
// the operator's rights there with it: the Provider goes without removing
// them. (No namespace controller here: the namespace stays Terminating.)
func TestAProviderGoesWithItsNamespace(t *testing.T) {
	ctx := context.Background()
	startOperator(t, "")
	reg := registry.Start(t)
	image, _ := reg.Push("team/provider-service:v1")
	ns := namespace(t)
	serviceAccount(t, ns, "kfp-provider")
	p := newProvider(ns, "kfp", "")
	p.Spec.ServiceImage = image
	require.NoError(t, cp.Client.Create(ctx, p))
	require.EventuallyWithT(t, func(c *assert.CollectT) { serviceDeployment(c, ns) }, wait, tick)

	require.NoError(t, cp.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	require.NoError(t, cp.Client.Delete(ctx, p))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.True(c, apierrors.IsNotFound(cp.Client.Get(ctx, client.ObjectKeyFromObject(p), p)), "Provider gone")
	}, wait, tick)
	assert.NotEmpty(t, sharedTasks(t, ns), "left for the namespace's deletion, not deleted one by one")
}

// kfp-operator's podTemplateEnv, podTemplateVolumes and
// podTemplateVolumeMounts reach the provider service's pod (its container's
// env after the operator's, its mounts, the pod's volumes), and changing
// them rolls the Deployment: a new pod template, an entry taken away gone.
func TestAProviderServiceTakesItsPodSettings(t *testing.T) {
	startOperator(t, "")
	reg := registry.Start(t)
	image, _ := reg.Push("team/provider-service:v1")
	ns := namespace(t)
	serviceAccount(t, ns, "kfp-provider")
	p := newProvider(ns, "kfp", "")
	p.Spec.ServiceImage = image
	token := corev1.Volume{Name: "kfp-token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", Audience: "pipelines.kubeflow.org"}}}}}}
	// In its own namespace a Provider may use its namespace's Secrets.
	credentials := corev1.EnvVar{Name: "KFP_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "kfp"}, Key: "password"}}}
	p.Spec.PodTemplateEnv = []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "debug"}, credentials}
	p.Spec.PodTemplateVolumes = []corev1.Volume{token}
	p.Spec.PodTemplateVolumeMounts = []corev1.VolumeMount{{Name: "kfp-token", MountPath: "/var/run/secrets/kfp", ReadOnly: true}}
	d := readyService(t, p)

	pod := d.Spec.Template.Spec
	service := pod.Containers[0]
	assert.Equal(t, "debug", env(service)["LOG_LEVEL"])
	assert.Equal(t, credentials, service.Env[len(service.Env)-1], "valueFrom as written, after the operator's env")
	names := []string{}
	for _, e := range service.Env {
		names = append(names, e.Name)
	}
	assert.Equal(t, []string{"METRICS_PORT", "OPERATORWEBHOOK", "PIPELINEROOTSTORAGE", "PROVIDERNAME", "SERVER_PORT", "POD_NAMESPACE",
		"LOG_LEVEL", "KFP_PASSWORD"}, names, "the operator's env first")
	assert.Equal(t, p.Spec.PodTemplateVolumeMounts, service.VolumeMounts)
	require.Len(t, pod.Volumes, 2)
	assert.Equal(t, "kfp-token", pod.Volumes[1].Name)
	assert.Equal(t, "token", pod.Volumes[1].Projected.Sources[0].ServiceAccountToken.Path)
	assert.Len(t, pod.Containers[1].VolumeMounts, 1, "the relay mounts its own token only")

	// A changed value, an entry taken away: a new pod template, rolled out.
	generation := d.Generation
	update(t, p, func(p *pipelinesv1beta1.Provider) {
		p.Spec.PodTemplateEnv = []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}}
		p.Spec.PodTemplateVolumes = append(p.Spec.PodTemplateVolumes, corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		p.Spec.PodTemplateVolumeMounts = append(p.Spec.PodTemplateVolumeMounts, corev1.VolumeMount{Name: "scratch", MountPath: "/tmp"})
	})
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		d := serviceOf(c, p)
		if d == nil {
			return
		}
		assert.Greater(c, d.Generation, generation, "the Deployment's spec changed")
		service := d.Spec.Template.Spec.Containers[0]
		assert.Equal(c, "info", env(service)["LOG_LEVEL"])
		assert.NotContains(c, env(service), "KFP_PASSWORD", "an env entry taken away is gone")
		assert.Len(c, service.VolumeMounts, 2)
		assert.Len(c, d.Spec.Template.Spec.Volumes, 3)
	}, wait, tick)
	// Until the new pod template is available, the Provider says so.
	eventuallyReady(t, p, metav1.ConditionFalse, pipelinesv1beta1.ReasonProviderServiceNotReady)

	// All taken away: the pod is as without them.
	update(t, p, func(p *pipelinesv1beta1.Provider) {
		p.Spec.PodTemplateEnv, p.Spec.PodTemplateVolumes, p.Spec.PodTemplateVolumeMounts = nil, nil, nil
	})
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		if d := serviceOf(c, p); d != nil {
			assert.NotContains(c, env(d.Spec.Template.Spec.Containers[0]), "LOG_LEVEL")
			assert.Empty(c, d.Spec.Template.Spec.Containers[0].VolumeMounts)
			assert.Len(c, d.Spec.Template.Spec.Volumes, 1, "the relay's token only")
		}
	}, wait, tick)
}

// With a shared workflow namespace, a Provider from another namespace may
// not have its service's pod read the namespace's Secrets, ConfigMaps or
// volumes: they are other tenants'. The operator refuses such pod settings
// (Ready=False, InvalidSpec, saying which and why) and runs nothing; pod
// settings that read only the pod's own identity are run.
func TestASharedWorkflowNamespacesSecretsAreNotAProvidersToMount(t *testing.T) {
	ctx := context.Background()
	workflows := namespace(t)
	startOperator(t, workflows)
	reg := registry.Start(t)
	image, _ := reg.Push("team/provider-service:v1")
	ns := namespace(t)
	markedServiceAccount(t, workflows, "kfp-provider", ns+"/kfp")
	require.NoError(t, cp.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: workflows, Name: "team-b-minio"},
		StringData: map[string]string{"secretkey": "team-b's"}}))

	p := newProvider(ns, "kfp", "")
	p.Spec.ServiceImage = image
	p.Spec.PodTemplateVolumes = []corev1.Volume{{Name: "minio", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "team-b-minio"}}}}
	p.Spec.PodTemplateVolumeMounts = []corev1.VolumeMount{{Name: "minio", MountPath: "/minio"}}
	require.NoError(t, cp.Client.Create(ctx, p))
	eventuallyReady(t, p, metav1.ConditionFalse, pipelinesv1beta1.ReasonInvalidSpec)
	assert.Contains(t, ready(t, p).Message, "provider service pod settings refused: spec.podTemplateVolumes[0] (minio): secret: "+
		"the Provider is outside the shared workflow namespace its provider service runs in, where that would reach other tenants' Secrets")
	assert.Empty(t, p.Status.ServiceURL)
	var l appsv1.DeploymentList
	require.NoError(t, cp.Client.List(ctx, &l, client.InNamespace(workflows)))
	assert.Empty(t, l.Items, "no pod mounts another tenant's Secret")

	// The Secret's key as an env value: refused too.
	update(t, p, func(p *pipelinesv1beta1.Provider) {
		p.Spec.PodTemplateVolumes, p.Spec.PodTemplateVolumeMounts = nil, nil
		p.Spec.PodTemplateEnv = []corev1.EnvVar{{Name: "MINIO_SECRET_KEY", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "team-b-minio"}, Key: "secretkey"}}}}
	})
	eventuallyReady(t, p, metav1.ConditionFalse, pipelinesv1beta1.ReasonInvalidSpec)
	assert.Contains(t, ready(t, p).Message, "spec.podTemplateEnv[0] (MINIO_SECRET_KEY): valueFrom.secretKeyRef")
	require.NoError(t, cp.Client.List(ctx, &l, client.InNamespace(workflows)))
	assert.Empty(t, l.Items)

	// Its own service account's token (kfp-operator's multi-user KFP) is its own.
	update(t, p, func(p *pipelinesv1beta1.Provider) {
		p.Spec.PodTemplateEnv = []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "debug"}}
		p.Spec.PodTemplateVolumes = []corev1.Volume{{Name: "kfp-token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", Audience: "pipelines.kubeflow.org"}}}}}}}
		p.Spec.PodTemplateVolumeMounts = []corev1.VolumeMount{{Name: "kfp-token", MountPath: "/var/run/secrets/kfp"}}
	})
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		if d := serviceIn(c, workflows, p); d != nil {
			assert.Equal(c, "kfp-token", d.Spec.Template.Spec.Volumes[1].Name)
			assert.Equal(c, "debug", env(d.Spec.Template.Spec.Containers[0])["LOG_LEVEL"])
		}
	}, wait, tick)
	eventuallyReady(t, p, metav1.ConditionFalse, pipelinesv1beta1.ReasonProviderServiceNotReady)
}
