//go:build e2e

package e2e

// Tenant isolation (DESIGN §15), each attack performed as a tenant would on
// the real cluster: a user impersonated with the API server's own
// impersonation, holding `edit` in their own namespace (which Tekton's
// aggregated role extends to PipelineRuns and Tasks) and, as many platforms
// grant, every right on the pipelines.kubeflow.org resources there, status
// included. Each test also checks the legitimate path still works.

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/scheme"
)

// tenantClient is a client acting as a tenant of ns: `edit` there, and
// every right on the operator's resources there, status included.
func tenantClient(t *testing.T, ns string) client.Client {
	t.Helper()
	user := "e2e-tenant-" + ns
	ctx := context.Background()
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kfp-resources-and-status"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"pipelines.kubeflow.org"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}
	for _, obj := range []client.Object{
		role,
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant-kfp"}, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant-edit"}, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"}},
	} {
		require.NoError(t, cl.Create(ctx, obj))
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(root, "bin", "kubeconfig"))
	require.NoError(t, err)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	cfg.QPS, cfg.Burst = 100, 200
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	require.NoError(t, err)
	// The tenant may not read another namespace: the impersonation works.
	err = c.List(ctx, &corev1.ConfigMapList{}, client.InNamespace("kfp-tekton-operator"))
	require.Error(t, err, "the tenant reads the operator's namespace")
	return c
}

// tenantCreate creates a pipelines.kubeflow.org object from YAML in ns as
// the tenant c.
func tenantCreate(t *testing.T, c client.Client, ns, manifest string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(manifest), &obj.Object))
	if obj.GetAPIVersion() == "" {
		obj.SetAPIVersion(gv.String())
	}
	obj.SetNamespace(ns)
	require.NoError(t, c.Create(context.Background(), obj), "the tenant creates %s %s", obj.GetKind(), obj.GetName())
	return obj
}

// tenantWritesStatus merge-patches the status of kind ns/name as tenant c.
func tenantWritesStatus(t *testing.T, c client.Client, kind, ns, name, status string) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gv.WithKind(kind))
	obj.SetNamespace(ns)
	obj.SetName(name)
	patch := client.RawPatch(types.MergePatchType, []byte(`{"status":`+status+`}`))
	require.NoError(t, c.Status().Patch(context.Background(), obj, patch), "the tenant writes %s %s/%s's status", kind, ns, name)
}

// operatorSetting is a number from the operator's configuration file.
func operatorSetting(t *testing.T, key string) int {
	t.Helper()
	var cm corev1.ConfigMap
	require.NoError(t, cl.Get(context.Background(), client.ObjectKey{Namespace: operatorNamespace, Name: "kfp-tekton-operator-config"}, &cm))
	var cfg map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(cm.Data["config.yaml"]), &cfg))
	n, _ := cfg[key].(float64)
	return int(n)
}

// Hole 1: runs a tenant labels as another team's operations, never
// starting, in the tenant's own namespace, take none of that Provider's
// room: its team's next operation starts at once.
func TestTenantRunsDoNotTakeAnotherProvidersRoom(t *testing.T) {
	limit := operatorSetting(t, "maxOperationsInFlight")
	if limit == 0 {
		t.Skip("the operator runs with no bound on operations in flight")
	}
	victim, tenant := namespace(t, "e2e-room"), namespace(t, "e2e-squatter")
	installProvider(t, victim, "kfp")
	tc := tenantClient(t, tenant)

	errs := make(chan error, limit)
	var wg sync.WaitGroup
	for i := range limit {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pr := &tektonv1.PipelineRun{
				ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: fmt.Sprintf("squat-%d", i),
					Labels: map[string]string{"app.kubernetes.io/managed-by": "kfp-tekton-operator",
						"pipelines.kubeflow.org/operation": "create", "pipelines.kubeflow.org/provider.namespace": victim,
						"pipelines.kubeflow.org/provider": "kfp"},
					Annotations: map[string]string{"pipelines.kubeflow.org/provider": victim + "/kfp"}},
				Spec: tektonv1.PipelineRunSpec{
					Status: tektonv1.PipelineRunSpecStatusPending,
					PipelineSpec: &tektonv1.PipelineSpec{Tasks: []tektonv1.PipelineTask{{Name: "wait",
						TaskSpec: &tektonv1.EmbeddedTask{TaskSpec: tektonv1.TaskSpec{Steps: []tektonv1.Step{{Name: "wait",
							Image: images["FIXTURE_PIPELINE_IMAGE"], Script: "sleep 1"}}}}}}},
				},
			}
			errs <- tc.Create(context.Background(), pr)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err, "the tenant creates PipelineRuns in its own namespace")
	}
	t.Logf("the tenant holds %d never-starting runs naming Provider %s/kfp", limit, victim)

	create(t, victim, "kind: Experiment\nmetadata: {name: unblocked}\nspec: {provider: kfp, description: d}\n")
	waitFor(t, syncTimeout, "the victim's Experiment Ready", func() (bool, string) {
		return readyIs(get(t, "Experiment", victim, "unblocked"), "True")
	})
}

// Holes 2 and 3: a tenant who writes its RunConfiguration's status can
// neither publish a completion event of its making nor fire its dependants
// with a latest run of its making; the provider service's real completion
// still does both.
func TestTenantCannotForgeCompletionsOrDependencies(t *testing.T) {
	ns := namespace(t, "e2e-forge")
	s := startSink(t, ns)
	withSink(t, s)
	tc := tenantClient(t, ns)
	postedChain(t, ns, func(manifest string) { tenantCreate(t, tc, ns, manifest) })
	waitFor(t, 3*time.Minute, "report synchronised", func() (bool, string) { return synchronised(get(t, "RunConfiguration", ns, "report")) })

	now := time.Now().UTC().Format(time.RFC3339)
	for i := range 2 {
		tenantWritesStatus(t, tc, "RunConfiguration", ns, "examples", fmt.Sprintf(
			`{"latestRuns":{"succeeded":{"providerId":"forged-%d","completedAt":%q,"artifacts":[{"name":"model","location":"s3://attacker/model-%d"}],"seal":"v1.forged"}}}`,
			i, now, i))
		time.Sleep(3 * time.Second)
	}
	forgedData := fmt.Sprintf(`{"status":"succeeded","runId":"forged-event","provider":"%s/kfp","servingModelArtifacts":[{"name":"m","location":"s3://attacker/m"}]}`, ns)
	tenantWritesStatus(t, tc, "RunConfiguration", ns, "examples", fmt.Sprintf(
		`{"completionEvents":{"pending":[{"id":"forged-event","source":"%s/kfp","time":%q,"data":%q,"sinks":[%q]}]}}`, ns, now, forgedData, testSinkName))
	waitFor(t, 2*time.Minute, "the forged event dropped", func() (bool, string) {
		return pending(get(t, "RunConfiguration", ns, "examples")) == 0, "still pending"
	})
	time.Sleep(15 * time.Second) // a trigger or a delivery, if any, would happen now
	published, _, _ := unstructured.NestedStringSlice(get(t, "RunConfiguration", ns, "examples").Object, "status", "completionEvents", "published")
	assert.NotContains(t, published, "forged-event", "a dropped event is not counted as published")
	received, _, _ := s.snapshot()
	assert.Zero(t, received["forged-event"], "the sink received the tenant's event")
	for _, r := range list(t, ns, "Run") {
		assert.NotEqual(t, "runConfiguration", r.GetLabels()["pipelines.kubeflow.org/trigger"], "Run %s fired by a forged latest run", r.GetName())
	}
	deps, _, _ := unstructured.NestedMap(get(t, "RunConfiguration", ns, "report").Object, "status", "dependencies")
	assert.NotContains(t, fmt.Sprint(deps), "attacker", "report resolves from a forged latest run")
	var events corev1.EventList
	require.NoError(t, cl.List(context.Background(), &events, client.InNamespace(ns)))
	refused := false
	for _, e := range events.Items {
		refused = refused || e.Reason == "CompletionEventRefused" && e.InvolvedObject.Name == "examples"
	}
	assert.True(t, refused, "a Warning Event says the forged event was refused")

	// The legitimate path: the provider service posts the real completion.
	event := fmt.Sprintf(`{"status":"succeeded","pipelineName":"%[1]s/demo-ml","runConfigurationName":"%[1]s/examples",
"runId":"genuine-run-1","runEndTime":%[2]q,"servingModelArtifacts":[],
"pipelineComponents":[{"name":"train","componentArtifacts":[{"name":"model","artifacts":[{"uri":"gs://models/genuine","metadata":{"pushed":1}}]}]}],
"provider":"%[1]s/kfp"}`, ns, time.Now().UTC().Format(time.RFC3339))
	code, msg := postEvent(t, eventsURL(t), providerToken(t, ns, "kfp"), event)
	require.Equal(t, 200, code, msg)
	downstream := triggeredRunSucceeds(t, ns, "report triggered by the real completion", 3*time.Minute)
	id, _, _ := unstructured.NestedString(get(t, "Run", ns, downstream).Object, "status", "provider", "id")
	assert.Contains(t, tkn(t, "pipelinerun", "logs", id, "-n", ns), "model = gs://models/genuine")
	waitFor(t, 2*time.Minute, "the real completion published", func() (bool, string) {
		received, _, _ := s.snapshot()
		return received["genuine-run-1"] == 1, fmt.Sprint(received)
	})
}

// Holes 4 and 7: a status naming a backend id makes nothing Ready that no
// run of the operator created; and a namespace a Provider does not admit
// reads the same answer whether that Provider exists or not.
func TestTenantStatusAndForeignProvidersRevealNothing(t *testing.T) {
	owner, tenant := namespace(t, "e2e-owner"), namespace(t, "e2e-prober")
	installProvider(t, owner, "kfp")
	tc := tenantClient(t, tenant)
	tenantCreate(t, tc, tenant, fmt.Sprintf("kind: Experiment\nmetadata: {name: real}\nspec: {provider: %s/kfp, description: d}\n", owner))
	tenantCreate(t, tc, tenant, fmt.Sprintf("kind: Experiment\nmetadata: {name: missing}\nspec: {provider: %s/nope, description: d}\n", owner))
	answer := func(name string) (string, string) {
		var reason, msg string
		waitFor(t, time.Minute, "Experiment "+name+" refused", func() (bool, string) {
			var status string
			status, reason, msg = condition(get(t, "Experiment", tenant, name), "Ready")
			return status == "False", status + " " + reason + ": " + msg
		})
		return reason, msg
	}
	realReason, realMsg := answer("real")
	missingReason, missingMsg := answer("missing")
	assert.Equal(t, realReason, missingReason)
	assert.Equal(t, realMsg, strings.ReplaceAll(missingMsg, owner+"/nope", owner+"/kfp"), "the answers differ beyond the name asked for")

	users := tenantClient(t, owner)
	tenantCreate(t, users, owner, fmt.Sprintf("kind: Pipeline\nmetadata: {name: p}\nspec: {provider: kfp, image: %s, framework: {name: fixture}}\n",
		images["FIXTURE_PIPELINE_IMAGE"]))
	tenantCreate(t, users, owner, "kind: Run\nmetadata: {name: honest}\nspec: {provider: kfp, pipeline: p}\n")
	tenantCreate(t, users, owner, "kind: Run\nmetadata: {name: liar}\nspec: {provider: kfp, pipeline: no-such-pipeline}\n")
	tenantWritesStatus(t, users, "Run", owner, "liar", fmt.Sprintf(`{"provider":{"name":"%s/kfp","id":"forged-run"},"version":"v1"}`, owner))
	// Wake the operator with a change of the resource itself.
	liar := get(t, "Run", owner, "liar")
	require.NoError(t, users.Patch(context.Background(), liar, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"e2e/touch":"1"}}}`))))
	waitFor(t, syncTimeout, "Run honest Ready", func() (bool, string) { return readyIs(get(t, "Run", owner, "honest"), "True") })
	waitFor(t, time.Minute, "Run liar refused", func() (bool, string) {
		status, reason, msg := condition(get(t, "Run", owner, "liar"), "Ready")
		return status == "False" && reason == "BackendRecordMissing", status + " " + reason + ": " + msg
	})
	assert.Empty(t, runsOf(t, owner, "Run", "liar"), "no PipelineRun for the forged Run")
}

// Hole 5: Tasks a tenant labels as the operator's, in a namespace holding
// no Provider, are not cached whole: the leader's memory barely moves while
// the API server holds far more than that of them.
func TestTenantObjectsDoNotFillTheOperatorsMemory(t *testing.T) {
	tenant := namespace(t, "e2e-filler")
	tc := tenantClient(t, tenant)
	// E2E_FILLER_OBJECTS and E2E_FILLER_BYTES change the flood (the stop
	// notes measure 10,000 of 1,000 bytes).
	objects, filler := envInt("E2E_FILLER_OBJECTS", 400), envInt("E2E_FILLER_BYTES", 200_000)
	pid := leaderPID(t)
	before := rssKiB(t, pid)
	padding := strings.Repeat("x", filler)
	errs := make(chan error, objects)
	var wg sync.WaitGroup
	limit := make(chan struct{}, 32)
	for i := range objects {
		wg.Add(1)
		go func() {
			defer wg.Done()
			limit <- struct{}{}
			defer func() { <-limit }()
			task := &tektonv1.Task{
				ObjectMeta: metav1.ObjectMeta{Namespace: tenant, Name: fmt.Sprintf("filler-%d", i),
					Labels:      map[string]string{"app.kubernetes.io/managed-by": "kfp-tekton-operator"},
					Annotations: map[string]string{"e2e/filler": padding}},
				Spec: tektonv1.TaskSpec{Steps: []tektonv1.Step{{Name: "noop", Image: images["FIXTURE_PIPELINE_IMAGE"], Script: "true"}}},
			}
			errs <- tc.Create(context.Background(), task)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err, "the tenant creates labelled Tasks in its own namespace")
	}
	time.Sleep(30 * time.Second) // the leader's watch has them all by now
	if t.Failed() {
		return
	}
	require.Equal(t, pid, leaderPID(t), "the leader changed during the measurement")
	after := rssKiB(t, pid)
	grew := (after - before) / 1024
	t.Logf("%d labelled Tasks of %d KB each (%d MiB) in a tenant namespace: leader RSS %d → %d MiB (%+d MiB)",
		objects, filler/1000, objects*filler>>20, before/1024, after/1024, grew)
	assert.Less(t, grew, int64(max(objects*filler>>20, 40))/2, "the leader keeps the tenant's objects")
}

// Hole 6: the compile pod, which runs the image a Pipeline's author names,
// never pulls with the provider account's pull secrets; it pulls with the
// Provider's pipelineImagePullSecrets, when set.
func TestCompilePodsDoNotBorrowTheProvidersPullSecrets(t *testing.T) {
	ns := namespace(t, "e2e-pullsecrets")
	ctx := context.Background()
	dockerConfig := []byte(`{"auths":{"registry.example":{"auth":"dXNlcjpwYXNz"}}}`)
	for _, name := range []string{"provider-regcred", "compile-regcred"} {
		require.NoError(t, cl.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: dockerConfig}}))
	}
	// The provider account pulls with provider-regcred (the chart lets the
	// operator read it, to pin the Provider's images).
	installProvider(t, ns, "kfp", "--set", "serviceAccount.imagePullSecrets[0].name=provider-regcred")

	tc := tenantClient(t, ns)
	compilePullSecrets := func(pipeline string) []string {
		tenantCreate(t, tc, ns, fmt.Sprintf("kind: Pipeline\nmetadata: {name: %s}\nspec: {provider: kfp, image: %s, framework: {name: fixture}}\n",
			pipeline, images["FIXTURE_PIPELINE_IMAGE"]))
		waitFor(t, syncTimeout, "Pipeline "+pipeline+" created", func() (bool, string) { return synchronised(get(t, "Pipeline", ns, pipeline)) })
		for _, pr := range runsOf(t, ns, "Pipeline", pipeline) {
			for _, pod := range podsOf(t, ns, pr.Name) {
				if pod.Labels["tekton.dev/pipelineTask"] == "compile" {
					var names []string
					for _, s := range pod.Spec.ImagePullSecrets {
						names = append(names, s.Name)
					}
					return names
				}
			}
		}
		t.Fatalf("no compile pod for Pipeline %s", pipeline)
		return nil
	}
	assert.Empty(t, compilePullSecrets("default-secrets"), "the compile pod pulls with no credentials by default")
	patch(t, "Provider", ns, "kfp", `{"spec":{"pipelineImagePullSecrets":[{"name":"compile-regcred"}]}}`)
	waitFor(t, time.Minute, "Provider Ready", func() (bool, string) { return readyIs(get(t, "Provider", ns, "kfp"), "True") })
	assert.Equal(t, []string{"compile-regcred"}, compilePullSecrets("named-secrets"), "the Provider's pipelineImagePullSecrets, and only those")
}
