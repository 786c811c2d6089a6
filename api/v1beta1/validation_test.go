package v1beta1_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/testenv"
)

var cp *testenv.ControlPlane

func TestMain(m *testing.M) { os.Exit(testenv.RunTests(m, &cp)) }

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "api-test-"}}
	require.NoError(t, cp.Client.Create(context.Background(), ns))
	return ns.Name
}

func sample(t *testing.T, file string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "samples", file))
	require.NoError(t, err)
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal(data, &u.Object))
	return u
}

func TestEverySampleIsAccepted(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "samples", "*.yaml"))
	require.NoError(t, err)
	kinds := map[string]bool{}
	ns := newNamespace(t)
	for _, f := range files {
		obj := sample(t, filepath.Base(f))
		obj.SetNamespace(ns)
		// Strict, as kubectl applies: an unknown field is an error, not a warning.
		require.NoError(t, cp.Client.Create(context.Background(), obj, client.FieldValidation("Strict")), "sample %s", f)
		kinds[obj.GetKind()] = true
	}
	for _, kind := range []string{"Provider", "Pipeline", "RunConfiguration", "RunSchedule", "Run", "Experiment"} {
		assert.True(t, kinds[kind], "config/samples has no %s", kind)
	}
}

// set replaces the field at a dotted path (no list indices; set whole lists).
func set(path string, value any) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		if err := unstructured.SetNestedField(u.Object, value, strings.Split(path, ".")...); err != nil {
			panic(err)
		}
	}
}

func remove(path string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		unstructured.RemoveNestedField(u.Object, strings.Split(path, ".")...)
	}
}

func TestInvalidObjectsAreRefusedNamingTheField(t *testing.T) {
	bothValueAndValueFrom := []any{map[string]any{
		"name": "a", "value": "1",
		"valueFrom": map[string]any{"runConfigurationRef": map[string]any{"name": "rc", "outputArtifact": "m"}},
	}}
	cases := []struct {
		name    string
		sample  string
		mutate  func(*unstructured.Unstructured)
		wantErr []string // every substring must appear in the error
	}{
		{"provider without image or serviceImage", "provider.yaml", remove("spec.image"), []string{"spec: Invalid value", "set image (a CLI provider image", "or serviceImage"}},
		{"a patch with payload and its deprecated spelling patch", "provider-service.yaml", set("spec.frameworks", []any{map[string]any{"name": "tfx", "image": "i",
			"patches": []any{map[string]any{"type": "json", "payload": "[]", "patch": "[]"}}}}), []string{"spec.frameworks[0].patches[0]", "set payload (the patch document; patch is its deprecated spelling), not both"}},
		{"a patch with no document", "provider-service.yaml", set("spec.frameworks", []any{map[string]any{"name": "tfx", "image": "i",
			"patches": []any{map[string]any{"type": "json"}}}}), []string{"spec.frameworks[0].patches[0]", "not both"}},
		{"provider service with an unknown patch type", "provider-service.yaml", set("spec.frameworks", []any{map[string]any{"name": "tfx", "image": "i",
			"patches": []any{map[string]any{"type": "strategic", "payload": "{}"}}}}), []string{"spec.frameworks[0].patches[0].type", "Unsupported value"}},
		{"provider without service account", "provider.yaml", remove("spec.serviceAccount"), []string{"spec.serviceAccount", "Required value"}},
		{"provider with unknown execution mode", "provider.yaml", set("spec.executionMode", "v3"), []string{"spec.executionMode", "Unsupported value"}},
		{"provider service with a hostPath volume", "provider-service.yaml", podTemplate(hostPathVolume, nil, nil),
			[]string{"spec.podTemplateVolumes[0]", "hostPath volumes are refused"}},
		{"provider service with a hostPath volume beside an emptyDir", "provider-service.yaml", podTemplate([]any{map[string]any{
			"name": "v", "emptyDir": map[string]any{}, "hostPath": map[string]any{"path": "/"}}}, nil, nil),
			[]string{"spec.podTemplateVolumes[0]", "hostPath volumes are refused"}},
		{"provider service with an events-token volume", "provider-service.yaml", podTemplate([]any{map[string]any{
			"name": "events-token", "emptyDir": map[string]any{}}}, nil, nil),
			[]string{"spec.podTemplateVolumes[0]", "operator's own volume"}},
		{"provider service overriding PROVIDERNAME", "provider-service.yaml", podTemplate(nil, nil, []any{map[string]any{"name": "PROVIDERNAME", "value": "team-b/kfp"}}),
			[]string{"spec.podTemplateEnv[0]", "is set by the operator on the provider service"}},
		{"provider service overriding a parameter, lower case", "provider-service.yaml", podTemplate(nil, nil, []any{
			map[string]any{"name": "A", "value": "1"}, map[string]any{"name": "parameters_kfpNamespace", "value": "kube-system"}}),
			[]string{"spec.podTemplateEnv[1]", "is set by the operator on the provider service"}},
		{"provider service overriding its port", "provider-service.yaml", podTemplate(nil, nil, []any{map[string]any{"name": "SERVER_PORT", "value": "9"}}),
			[]string{"spec.podTemplateEnv[0]", "cannot be overridden"}},
		{"provider service with duplicate env", "provider-service.yaml", podTemplate(nil, nil, []any{
			map[string]any{"name": "A", "value": "1"}, map[string]any{"name": "A", "value": "2"}}),
			[]string{"spec.podTemplateEnv[1]", "Duplicate value"}},
		{"provider service with two mounts at one path", "provider-service.yaml", podTemplate(
			[]any{map[string]any{"name": "scratch", "emptyDir": map[string]any{}}},
			[]any{map[string]any{"name": "scratch", "mountPath": "/x"}, map[string]any{"name": "scratch", "mountPath": "/x", "subPath": "a"}}, nil),
			[]string{"spec.podTemplateVolumeMounts[1]", "Duplicate value"}},
		{"provider service with too many volumes", "provider-service.yaml", podTemplate(manyVolumes(17), nil, nil),
			[]string{"spec.podTemplateVolumes", "must have at most 16 items"}},
		{"CLI provider with pod settings", "provider.yaml", podTemplate(nil, nil, []any{map[string]any{"name": "A", "value": "1"}}),
			[]string{"spec: Invalid value", "set them only with serviceImage"}},
		{"provider with invalid allowed namespace", "provider.yaml", set("spec.allowedNamespaces", []any{"Team_A"}), []string{"spec.allowedNamespaces[0]"}},
		{"provider with duplicate frameworks", "provider.yaml", set("spec.frameworks", []any{
			map[string]any{"name": "tfx", "image": "a"}, map[string]any{"name": "tfx", "image": "b"},
		}), []string{"spec.frameworks[1]", "Duplicate value"}},
		{"provider with two artifact backends", "provider.yaml", set("spec.artifactRepository", map[string]any{
			"s3": map[string]any{"bucket": "bucket"}, "gcs": map[string]any{"bucket": "bucket"}}),
			[]string{"spec.artifactRepository", "exactly one of s3 or gcs"}},
		{"pipeline with malformed provider reference", "pipeline.yaml", set("spec.provider", "a/b/c"),
			[]string{`spec.provider: Invalid value: "a/b/c": must be NAME or NAMESPACE/NAME (DNS-1123 names`}},
		{"pipeline with upper-case provider", "pipeline.yaml", set("spec.provider", "Team-A/kfp"), []string{"spec.provider"}},
		{"pipeline without framework", "pipeline.yaml", remove("spec.framework"), []string{"spec.framework", "Required value"}},
		{"pipeline with duplicate env", "pipeline.yaml", set("spec.env", []any{
			map[string]any{"name": "A", "value": "1"}, map[string]any{"name": "A", "value": "2"},
		}), []string{"spec.env[1]", "Duplicate value"}},
		{"run with malformed pipeline reference", "run.yaml", set("spec.pipeline", "penguin:1:2"), []string{"spec.pipeline", "must be NAME or NAME:VERSION"}},
		{"run with value and valueFrom", "run.yaml", set("spec.parameters", bothValueAndValueFrom),
			[]string{"spec.parameters[0]", "exactly one of value or valueFrom"}},
		{"run with neither value nor valueFrom", "run.yaml", set("spec.parameters", []any{map[string]any{"name": "a"}}),
			[]string{"spec.parameters[0]", "exactly one of value or valueFrom"}},
		{"run with duplicate parameters", "run.yaml", set("spec.parameters", []any{
			map[string]any{"name": "a", "value": "1"}, map[string]any{"name": "a", "value": "2"},
		}), []string{"spec.parameters[1]", "Duplicate value"}},
		{"run without provider", "run.yaml", remove("spec.provider"), []string{"spec.provider", "Required value"}},
		{"run with an artifact path of one part", "run.yaml", set("spec.artifacts", []any{map[string]any{"name": "m", "path": "train"}}),
			[]string{"spec.artifacts[0].path", "must be COMPONENT:ARTIFACT or COMPONENT:ARTIFACT:INDEX"}},
		{"run with a colon in an artifact filter", "run.yaml", set("spec.artifacts", []any{map[string]any{"name": "m", "path": "train:model:0[stage == a:b]"}}),
			[]string{"spec.artifacts[0].path", "none of them containing ':'"}},
		{"run with an artifact index beyond an int", "run.yaml", set("spec.artifacts", []any{map[string]any{"name": "m", "path": "train:model:9223372036854775808"}}),
			[]string{"spec.artifacts[0].path", "INDEX must be at most 9223372036854775807"}},
		{"run schedule with malformed cron", "runschedule.yaml", set("spec.schedule.cronExpression", "every night"),
			[]string{"spec.schedule.cronExpression", "must be a cron expression"}},
		{"run schedule every second", "runschedule.yaml", set("spec.schedule.cronExpression", "@every"),
			[]string{"spec.schedule.cronExpression", "must be a cron expression"}},
		{"run schedule with seven cron fields", "runschedule.yaml", set("spec.schedule.cronExpression", "0 0 2 * * * *"),
			[]string{"spec.schedule.cronExpression"}},
		{"run schedule ending before it starts", "runschedule.yaml", set("spec.schedule.endTime", "2025-01-01T00:00:00Z"),
			[]string{"spec.schedule", "startTime must be before endTime"}},
		{"run configuration with duplicate schedules", "runconfiguration.yaml", set("spec.triggers.schedules", []any{
			map[string]any{"cronExpression": "0 2 * * *"}, map[string]any{"cronExpression": "0 2 * * *"},
		}), []string{"spec.triggers.schedules", "must not contain duplicates"}},
		{"run configuration with unknown onChange", "runconfiguration.yaml", set("spec.triggers.onChange", []any{"image"}),
			[]string{"spec.triggers.onChange[0]", "Unsupported value"}},
		{"run configuration triggered by itself", "runconfiguration.yaml", set("spec.triggers.runConfigurations", []any{"demo-training"}),
			[]string{"must not name the RunConfiguration itself"}},
		{"run configuration without run", "runconfiguration.yaml", remove("spec.run"), []string{"spec.run", "Required value"}},
		{"experiment without provider", "experiment.yaml", remove("spec.provider"), []string{"spec.provider", "Required value"}},
		{"experiment with oversized description", "experiment.yaml", set("spec.description", strings.Repeat("x", 4097)),
			[]string{"spec.description", "Too long"}},
	}
	ns := newNamespace(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := sample(t, tc.sample)
			obj.SetNamespace(ns)
			tc.mutate(obj)
			err := cp.Client.Create(context.Background(), obj)
			require.Error(t, err, "the API server accepted an invalid object")
			for _, want := range tc.wantErr {
				assert.Contains(t, err.Error(), want)
			}
		})
	}
}

// podTemplate sets a Provider's pod settings (kfp-operator's fields); nil
// leaves one out.
func podTemplate(volumes, mounts, env []any) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		for field, value := range map[string][]any{"podTemplateVolumes": volumes, "podTemplateVolumeMounts": mounts, "podTemplateEnv": env} {
			if value != nil {
				set("spec."+field, value)(u)
			}
		}
	}
}

var hostPathVolume = []any{map[string]any{"name": "node", "hostPath": map[string]any{"path": "/"}}}

func manyVolumes(n int) []any {
	volumes := make([]any, n)
	for i := range volumes {
		volumes[i] = map[string]any{"name": fmt.Sprintf("v%d", i), "emptyDir": map[string]any{}}
	}
	return volumes
}

// A kfp-operator user's Provider, with the fields kfp-operator added after
// v0.7.0 and its deprecated executionMode: "", is admitted as written
// (strict, as kubectl applies), and "" stays "" (it means v2): the default
// fills in only a missing executionMode.
func TestKfpOperatorProvidersPodSettingsAreAccepted(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(`
apiVersion: pipelines.kubeflow.org/v1beta1
kind: Provider
metadata:
  name: kfp-multi-user
spec:
  serviceImage: ghcr.io/kfp-operator/kfp-operator-kfp-provider-service:0.8.0
  executionMode: ""
  serviceAccount: kfp-operator-kfp
  pipelineRootStorage: gs://pipelines-root
  parameters:
    kfpMultiUserMode: true
  podTemplateEnv:
  - name: LOG_LEVEL
    value: debug
  - name: KFP_TOKEN
    valueFrom:
      secretKeyRef: {name: kfp-token, key: token}
  - name: NODE
    valueFrom:
      fieldRef: {fieldPath: spec.nodeName}
  podTemplateVolumes:
  - name: kfp-token
    projected:
      sources:
      - serviceAccountToken: {path: token, audience: pipelines.kubeflow.org, expirationSeconds: 3600}
  - name: ca
    configMap: {name: kfp-ca}
  - name: scratch
    emptyDir: {sizeLimit: 1Gi}
  podTemplateVolumeMounts:
  - name: kfp-token
    mountPath: /var/run/secrets/kfp
    readOnly: true
  - name: ca
    mountPath: /etc/ssl/kfp
  - name: scratch
    mountPath: /tmp
`), &u.Object))
	u.SetNamespace(ns)
	require.NoError(t, cp.Client.Create(ctx, u, client.FieldValidation("Strict")))
	mode, found, err := unstructured.NestedString(u.Object, "spec", "executionMode")
	require.NoError(t, err)
	assert.True(t, found)
	assert.Empty(t, mode, `executionMode: "" is stored as written, not defaulted`)
	env, _, _ := unstructured.NestedSlice(u.Object, "spec", "podTemplateEnv")
	assert.Len(t, env, 3, "nothing pruned")

	unset := sample(t, "provider-service.yaml")
	unset.SetNamespace(ns)
	unstructured.RemoveNestedField(unset.Object, "spec", "executionMode")
	require.NoError(t, cp.Client.Create(ctx, unset))
	mode, _, _ = unstructured.NestedString(unset.Object, "spec", "executionMode")
	assert.Equal(t, "v2", mode, "a missing executionMode is defaulted to v2")
}

// The volume types Pod Security restricted allows, each as a provider
// service might use it (internal/controller/provider's allowedVolumeTypes).
var allowedVolumes = map[string]any{
	"emptyDir":              map[string]any{},
	"configMap":             map[string]any{"name": "c"},
	"secret":                map[string]any{"secretName": "s"},
	"projected":             map[string]any{"sources": []any{map[string]any{"serviceAccountToken": map[string]any{"path": "token"}}}},
	"downwardAPI":           map[string]any{"items": []any{map[string]any{"path": "labels", "fieldRef": map[string]any{"fieldPath": "metadata.labels"}}}},
	"persistentVolumeClaim": map[string]any{"claimName": "data"},
	"ephemeral": map[string]any{"volumeClaimTemplate": map[string]any{"spec": map[string]any{
		"accessModes": []any{"ReadWriteOnce"}, "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}}}},
	"csi": map[string]any{"driver": "secrets-store.csi.k8s.io"},
}

// volumeSchemas is the schema of a podTemplateVolumes item, as installed.
var volumeSchemas = func() apiextensionsv1.JSONSchemaProps {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "crd", "bases", "pipelines.kubeflow.org_providers.yaml"))
	if err != nil {
		panic(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		panic(err)
	}
	for _, v := range crd.Spec.Versions {
		if v.Name == "v1beta1" {
			return *v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["podTemplateVolumes"].Items.Schema
		}
	}
	panic("the Provider CRD serves no v1beta1")
}()

// minimal is a value of schema s with its required fields, and only those, set.
func minimal(s apiextensionsv1.JSONSchemaProps) any {
	switch s.Type {
	case "object":
		obj := map[string]any{}
		for _, name := range s.Required {
			obj[name] = minimal(s.Properties[name])
		}
		return obj
	case "array":
		return []any{}
	case "integer":
		return int64(1)
	case "boolean":
		return false
	}
	if len(s.Enum) > 0 {
		var v any
		if err := json.Unmarshal(s.Enum[0].Raw, &v); err != nil {
			panic(err)
		}
		return v
	}
	return "x"
}

// Every other volume type the API knows is refused, each naming the field:
// a Kubernetes upgrade adding a type the Provider's rule does not name
// fails here until the rule (and the operator's check) say what it is.
func TestOnlyRestrictedVolumeTypesAreAdmitted(t *testing.T) {
	ns := newNamespace(t)
	volumeSource := reflect.TypeFor[corev1.VolumeSource]()
	for i := range volumeSource.NumField() {
		typ, _, _ := strings.Cut(volumeSource.Field(i).Tag.Get("json"), ",")
		t.Run(typ, func(t *testing.T) {
			obj := sample(t, "provider-service.yaml")
			obj.SetNamespace(ns)
			source, allowed := allowedVolumes[typ]
			if !allowed {
				// Complete, so that the API server gets to the rules.
				source = minimal(volumeSchemas.Properties[typ])
			}
			podTemplate([]any{map[string]any{"name": "v", typ: source}}, []any{map[string]any{"name": "v", "mountPath": "/v"}}, nil)(obj)
			err := cp.Client.Create(context.Background(), obj, client.DryRunAll)
			if allowed {
				require.NoError(t, err)
				return
			}
			require.Error(t, err, "the API server accepted a %s volume", typ)
			assert.Contains(t, err.Error(), "spec.podTemplateVolumes[0]: Invalid value")
			if typ == "hostPath" {
				assert.Contains(t, err.Error(), "hostPath volumes are refused")
			} else {
				assert.Contains(t, err.Error(), "must be an emptyDir, configMap, secret, projected, downwardAPI, persistentVolumeClaim, ephemeral or csi volume")
			}
		})
	}
}

func TestRunSpecIsImmutable(t *testing.T) {
	ctx := context.Background()
	run := sample(t, "run.yaml")
	run.SetNamespace(newNamespace(t))
	require.NoError(t, cp.Client.Create(ctx, run))

	changed := run.DeepCopy()
	set("spec.experimentName", "another")(changed)
	err := cp.Client.Update(ctx, changed)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec is immutable")

	relabelled := run.DeepCopy()
	relabelled.SetLabels(map[string]string{"team": "a"})
	require.NoError(t, cp.Client.Update(ctx, relabelled), "metadata of a Run stays editable")

	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(run.GroupVersionKind())
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(run), stored))
	assert.Equal(t, run.Object["spec"], stored.Object["spec"], "the refused update must not change the stored spec")
}

// What the CEL rules admit, as Go regular expressions that must all match
// (the rules are written as CEL so that a refusal says what to write instead
// of printing a regular expression): every case below is checked against
// these too. Names are DNS-1123 subdomains (dot-separated labels) of at most
// 253 characters; RE2 has no lookahead, so the length is a second pattern.
var formerPatterns = map[string]patterns{
	"provider":  {regexp.MustCompile(`^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?/)?` + subdomain + `$`), regexp.MustCompile(`^([^/]+/)?[^/]{1,253}$`)},
	"pipeline":  {regexp.MustCompile(`^` + subdomain + `(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?$`), regexp.MustCompile(`^[^:]{1,253}(:.*)?$`)},
	"sa":        {regexp.MustCompile(`^` + subdomain + `$`)},
	"namespace": {regexp.MustCompile(`^(\*|[a-z0-9]([-a-z0-9]*[a-z0-9])?)$`)},
	"framework": {regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)},
	"cron":      {regexp.MustCompile(`^(@(annually|yearly|monthly|weekly|daily|midnight|hourly)|@every [0-9]+[0-9a-z.]*|([0-9A-Za-z*?/,#-]+[ \t]+){4,5}[0-9A-Za-z*?/,#-]+)$`)},
}

const subdomain = `[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*`

// patterns match a string when every one of them does.
type patterns []*regexp.Regexp

func (ps patterns) MatchString(s string) bool {
	for _, p := range ps {
		if !p.MatchString(s) {
			return false
		}
	}
	return true
}

func TestReferencesAndNamesSayWhatToWrite(t *testing.T) {
	const (
		providerMsg  = "must be NAME or NAMESPACE/NAME (DNS-1123 names"
		pipelineMsg  = "must be NAME or NAME:VERSION (NAME a DNS-1123 name; VERSION up to 128 letters"
		saMsg        = "must be a service account name (DNS-1123 subdomain"
		namespaceMsg = `must be a namespace name (DNS-1123 label: lower-case letters, digits and '-', starting and ending with a letter or digit) or "*"`
		frameworkMsg = "must be a framework name (DNS-1123 label"
		cronMsg      = "must be a cron expression of five fields (minute hour day-of-month month day-of-week) or six (seconds first)"
	)
	type field struct {
		sample  string
		pattern string // key in formerPatterns
		path    string // reported by the API server
		maxLen  int
		set     func(string) func(*unstructured.Unstructured)
		message string
	}
	at := func(path string) func(string) func(*unstructured.Unstructured) {
		return func(v string) func(*unstructured.Unstructured) { return set(path, v) }
	}
	fields := map[string]field{
		"pipeline provider":          {"pipeline.yaml", "provider", "spec.provider", 317, at("spec.provider"), providerMsg},
		"experiment provider":        {"experiment.yaml", "provider", "spec.provider", 317, at("spec.provider"), providerMsg},
		"run configuration provider": {"runconfiguration.yaml", "provider", "spec.run.provider", 317, at("spec.run.provider"), providerMsg},
		"run pipeline":               {"run.yaml", "pipeline", "spec.pipeline", 382, at("spec.pipeline"), pipelineMsg},
		"run schedule pipeline":      {"runschedule.yaml", "pipeline", "spec.pipeline", 382, at("spec.pipeline"), pipelineMsg},
		"service account":            {"provider.yaml", "sa", "spec.serviceAccount", 253, at("spec.serviceAccount"), saMsg},
		"allowed namespace": {"provider.yaml", "namespace", "spec.allowedNamespaces[0]", 63, func(v string) func(*unstructured.Unstructured) {
			return set("spec.allowedNamespaces", []any{v})
		}, namespaceMsg},
		"provider framework": {"provider.yaml", "framework", "spec.frameworks[0].name", 63, func(v string) func(*unstructured.Unstructured) {
			return set("spec.frameworks", []any{map[string]any{"name": v, "image": "ghcr.io/org/compiler:1"}})
		}, frameworkMsg},
		"pipeline framework": {"pipeline.yaml", "framework", "spec.framework.name", 63, at("spec.framework.name"), frameworkMsg},
		"run schedule cron":  {"runschedule.yaml", "cron", "spec.schedule.cronExpression", 256, at("spec.schedule.cronExpression"), cronMsg},
		"run configuration schedule": {"runconfiguration.yaml", "cron", "spec.triggers.schedules[0].cronExpression", 256, func(v string) func(*unstructured.Unstructured) {
			return set("spec.triggers.schedules", []any{map[string]any{"cronExpression": v}})
		}, cronMsg},
	}
	long := strings.Repeat
	values := map[string]struct{ accepted, refused []string }{
		"provider": {
			accepted: []string{"kfp", "a", "team-a/kfp", "a/b", "kfp.v2", "team-a/kfp.example-1", "0/9",
				long("n", 63) + "/" + long("p", 253), long("p", 253)},
			refused: []string{"a/b/c", "Team-A/kfp", "team-a/KFP", "team.a/kfp", "-kfp", "kfp-", "kfp.", "/kfp", "team-a/",
				"0..0", "team-a/kfp..v2", "kfp.-v2", "kfp-.v2", ".kfp", long("p", 254),
				"kfp_1", "team a/kfp", "*/kfp", long("n", 64) + "/kfp", "team-a/" + long("p", 254)},
		},
		"pipeline": {
			accepted: []string{"penguin", "penguin:v1", "penguin-pipeline:0.3.1", "p.q:V_1-x.2", "penguin:_x", "p:0",
				"penguin:" + long("v", 128), long("p", 253) + ":" + long("v", 128)},
			refused: []string{"penguin:1:2", "penguin:", ":v1", "penguin:-v1", "penguin:.v1", "Penguin", "penguin-",
				"pen..guin", "pen.-guin:v1", long("p", 254), long("p", 254) + ":v1",
				"pen guin", "penguin@sha256:abc", "team-a/penguin", "penguin:v/1", "penguin:" + long("v", 129)},
		},
		"sa": {
			accepted: []string{"kfp-provider", "a", "a.b-c", "default", "0sa9"},
			refused:  []string{"KFP", "-sa", "sa-", "sa.", "sa_1", "system:serviceaccount:team-a:kfp", "team-a/kfp", "s a", "s..a", "s.-a"},
		},
		"namespace": {
			accepted: []string{"*", "team-b", "a", "0", long("n", 63)},
			refused:  []string{"Team_A", "team.b", "**", "-a", "a-", "a*", "team b", ""},
		},
		"framework": {
			accepted: []string{"tfx", "kfpsdk", "kfp-sdk2", "0", long("f", 63)},
			refused:  []string{"TFX", "kfp_sdk", "kfp.sdk", "-tfx", "tfx-", "tf x"},
		},
		"cron": {
			accepted: []string{"0 2 * * *", "0 0 2 * * *", "*/5 * * * MON-FRI", "0\t2  *\t* *", "0 0 1 JAN ?", "0 0 L * 5#3",
				"@daily", "@midnight", "@annually", "@every 90m", "@every 1h30m", "@every 1s"},
			refused: []string{"every night", "@every", "@every m", "@fortnightly", "@Daily", "* * * *", "0 0 2 * * * *",
				" 0 2 * * *", "0 2 * * * ", "0 2 * * * # nightly", "0 2 * * *\n"},
		},
	}

	ns := newNamespace(t)
	for fieldName, f := range fields {
		vals := values[f.pattern]
		check := func(value string, wantAccepted bool) {
			t.Run(fmt.Sprintf("%s=%q", fieldName, value), func(t *testing.T) {
				former := formerPatterns[f.pattern].MatchString(value) && len(value) <= f.maxLen
				require.Equal(t, former, wantAccepted, "the table disagrees with the Pattern the rule replaced")

				obj := sample(t, f.sample)
				obj.SetNamespace(ns)
				f.set(value)(obj)
				err := cp.Client.Create(context.Background(), obj, client.DryRunAll)
				if wantAccepted {
					require.NoError(t, err)
					return
				}
				require.Error(t, err, "the API server accepted %q", value)
				assert.Contains(t, err.Error(), f.path+": ")
				assert.Contains(t, err.Error(), f.message)
				assert.NotContains(t, err.Error(), "should match", "the refusal must not print a regular expression")
			})
		}
		for _, v := range vals.accepted {
			check(v, true)
		}
		for _, v := range vals.refused {
			check(v, false)
		}
	}
}

func TestArtifactPathsWithFiltersAreAccepted(t *testing.T) {
	ns := newNamespace(t)
	for i, path := range []string{
		"train:model:0",
		"CsvExampleGen:examples",
		"train:model:",
		"train:model:9223372036854775807",
		"Pusher:pushed_model:0[pushed == 1]",
		`train:model:12[accuracy == 0.9 and stage == prod and (name != "a b" or pushed == true)]`,
		"Evaluator:blessing[blessed==-1]",
		// Admitted as kfp-operator admits it, though go-bexpr cannot
		// compile the filter: it selects nothing.
		"train:model:0[stage < 'x']",
	} {
		obj := sample(t, "run.yaml")
		obj.SetNamespace(ns)
		obj.SetName(fmt.Sprintf("paths-%d", i))
		require.NoError(t, unstructured.SetNestedSlice(obj.Object, []any{map[string]any{"name": "m", "path": path}}, "spec", "artifacts"))
		assert.NoError(t, cp.Client.Create(context.Background(), obj), path)
	}
}
