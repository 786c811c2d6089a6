package provider

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
)

func serviceProvider(volumes []corev1.Volume, mounts []corev1.VolumeMount, env ...corev1.EnvVar) *pipelinesv1beta1.Provider {
	return &pipelinesv1beta1.Provider{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "kfp"},
		Spec: pipelinesv1beta1.ProviderSpec{ServiceImage: "svc:1", ServiceAccount: "kfp", PipelineRootStorage: "gs://root",
			Parameters:         map[string]apiextensionsv1.JSON{"kfpNamespace": {Raw: []byte(`"kubeflow"`)}},
			PodTemplateVolumes: volumes, PodTemplateVolumeMounts: mounts, PodTemplateEnv: env},
	}
}

func volume(name string, source corev1.VolumeSource) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: source}
}

var (
	emptyDir   = corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	secretVol  = corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "team-b-minio"}}
	tokenVol   = corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", Audience: "kfp"}}}}}
	secretEnv  = corev1.EnvVar{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "team-b-minio"}, Key: "secretkey"}}}
	nodeEnv    = corev1.EnvVar{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}
	plainEnv   = corev1.EnvVar{Name: "LOG_LEVEL", Value: "debug"}
	mountToken = []corev1.VolumeMount{{Name: "kfp-token", MountPath: "/var/run/secrets/kfp", ReadOnly: true}}
)

// What a hostile (or careless) tenant's Provider may ask of the pod the
// operator creates for it, and what the operator refuses, in its own
// namespace and from outside a shared workflow namespace.
func TestPodTemplateProblem(t *testing.T) {
	type want struct{ own, shared string } // "" admitted; else a part of the refusal
	for name, tc := range map[string]struct {
		p    *pipelinesv1beta1.Provider
		want want
	}{
		"nothing":                   {serviceProvider(nil, nil), want{}},
		"kfp-operator's token":      {serviceProvider([]corev1.Volume{volume("kfp-token", tokenVol)}, mountToken, plainEnv, nodeEnv), want{}},
		"scratch and pod metadata":  {serviceProvider([]corev1.Volume{volume("tmp", emptyDir), volume("meta", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{}})}, nil), want{}},
		"a public trust bundle":     {serviceProvider([]corev1.Volume{volume("ca", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Path: "ca.pem"}}}}})}, nil), want{}},
		"the node's filesystem":     {serviceProvider([]corev1.Volume{volume("node", corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}})}, nil), want{"spec.podTemplateVolumes[0] (node): hostPath would give", "hostPath would give"}},
		"hostPath hidden by a type": {serviceProvider([]corev1.Volume{volume("node", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}, HostPath: &corev1.HostPathVolumeSource{Path: "/"}})}, nil), want{"(node): hostPath would give", "hostPath would give"}},
		"an NFS export":             {serviceProvider([]corev1.Volume{volume("nfs", corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "10.0.0.1", Path: "/"}})}, nil), want{"(nfs): nfs is none of the volume types Pod Security restricted allows", "nfs is none"}},
		"git on the node":           {serviceProvider([]corev1.Volume{volume("git", corev1.VolumeSource{GitRepo: &corev1.GitRepoVolumeSource{Repository: "https://x"}})}, nil), want{"gitRepo is none", "gitRepo is none"}},
		"the relay's token":         {serviceProvider([]corev1.Volume{volume("events-token", emptyDir)}, nil), want{"operator's own volume", "operator's own volume"}},
		"a mount of no volume":      {serviceProvider(nil, mountToken), want{`mounts "kfp-token", which is not one of spec.podTemplateVolumes`, "which is not one of"}},
		"a mount of the relay's":    {serviceProvider(nil, []corev1.VolumeMount{{Name: "events-token", MountPath: "/t"}}), want{"not one of spec.podTemplateVolumes", "not one of"}},
		"PROVIDERNAME":              {serviceProvider(nil, nil, corev1.EnvVar{Name: "PROVIDERNAME", Value: "team-b/kfp"}), want{"spec.podTemplateEnv[0] (PROVIDERNAME): the operator sets it", "the operator sets it"}},
		"a parameter, mixed case":   {serviceProvider(nil, nil, plainEnv, corev1.EnvVar{Name: "Parameters_KfpNamespace", Value: "kube-system"}), want{"spec.podTemplateEnv[1]", "the operator sets it"}},
		"the relay's address":       {serviceProvider(nil, nil, corev1.EnvVar{Name: "operatorWebhook", Value: "http://evil"}), want{"the operator sets it", "the operator sets it"}},
		"a Secret as a volume":      {serviceProvider([]corev1.Volume{volume("minio", secretVol)}, nil), want{"", "(minio): secret: the Provider is outside the shared workflow namespace its provider service runs in, where that would reach other tenants' Secrets"}},
		"a ConfigMap as a volume":   {serviceProvider([]corev1.Volume{volume("cm", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}}})}, nil), want{"", "other tenants' ConfigMaps"}},
		"a claim":                   {serviceProvider([]corev1.Volume{volume("data", corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "team-b-data"}})}, nil), want{"", "other tenants' volumes"}},
		"a clone of a claim":        {serviceProvider([]corev1.Volume{volume("data", corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}})}, nil), want{"", "(data): ephemeral: the Provider"}},
		"a CSI volume":              {serviceProvider([]corev1.Volume{volume("vault", corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "secrets-store.csi.k8s.io"}})}, nil), want{"", "nodePublishSecretRef"}},
		"a Secret, projected": {serviceProvider([]corev1.Volume{volume("mixed", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			tokenVol.Projected.Sources[0], {Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "team-b-minio"}}}}}})}, nil), want{"", "projected source 1 (secret)"}},
		"a Secret's key as env": {serviceProvider(nil, nil, plainEnv, secretEnv), want{"", "spec.podTemplateEnv[1] (TOKEN): valueFrom.secretKeyRef"}},
		"a ConfigMap's key as env": {serviceProvider(nil, nil, corev1.EnvVar{Name: "URL", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "c"}, Key: "url"}}}), want{"", "valueFrom.configMapKeyRef"}},
	} {
		for _, shared := range []bool{false, true} {
			refusal := map[bool]string{false: tc.want.own, true: tc.want.shared}[shared]
			err := podTemplateProblem(tc.p, shared)
			if refusal == "" {
				assert.NoError(t, err, "%s (shared: %v)", name, shared)
				continue
			}
			if assert.ErrorIs(t, err, errPodTemplateRefused, "%s (shared: %v)", name, shared) {
				assert.Contains(t, err.Error(), refusal, "%s (shared: %v)", name, shared)
				assert.True(t, strings.HasPrefix(err.Error(), "provider service pod settings refused: spec.podTemplate"), err.Error())
			}
		}
	}
}

// Every volume type the API knows is either one Pod Security restricted
// allows or refused: a type a Kubernetes upgrade adds is refused until
// someone decides otherwise.
func TestEveryOtherVolumeTypeIsRefused(t *testing.T) {
	source := reflect.TypeFor[corev1.VolumeSource]()
	for i := range source.NumField() {
		f := source.Field(i)
		var v corev1.Volume
		reflect.ValueOf(&v.VolumeSource).Elem().Field(i).Set(reflect.New(f.Type.Elem()))
		v.Name = "v"
		typ := volumeType(v)
		require.Equal(t, strings.Split(f.Tag.Get("json"), ",")[0], typ)
		err := podTemplateProblem(serviceProvider([]corev1.Volume{v}, nil), false)
		if slices.Contains(allowedVolumeTypes, typ) {
			assert.NoError(t, err, typ)
		} else {
			assert.ErrorIs(t, err, errPodTemplateRefused, typ)
		}
	}
	assert.Len(t, allowedVolumeTypes, 8, "Pod Security restricted's list (and the CRD rule's message) name eight")
}

// The names the operator refuses in podTemplateEnv are exactly those it
// sets (serviceEnv), so that its values win.
func TestOperatorEnvNamesAreTheOperatorsEnv(t *testing.T) {
	for _, e := range serviceEnv(serviceProvider(nil, nil)) {
		assert.True(t, operatorEnvName(e.Name), e.Name)
		assert.True(t, operatorEnvName(strings.ToLower(e.Name)), e.Name)
	}
	for _, name := range []string{"LOG_LEVEL", "PARAMETERS", "KFP_TOKEN", "PROVIDER_NAME", "SERVER_PORTS"} {
		assert.False(t, operatorEnvName(name), name)
	}
}

// The provider service's container takes the Provider's env after the
// operator's (so it may refer to them) and its mounts; the pod takes its
// volumes after the relay's. The events relay is left as it is.
func TestServiceObjectsCarryThePodSettings(t *testing.T) {
	p := serviceProvider([]corev1.Volume{volume("kfp-token", tokenVol)}, mountToken, plainEnv, nodeEnv,
		corev1.EnvVar{Name: "PROVIDER", Value: "$(PROVIDERNAME)"})
	d, _, _ := serviceObjects(p, "team-a", "svc@sha256:0", ServiceSettings{HelperImage: "helper", EventsURL: "http://events"})
	pod := d.Spec.Template.Spec
	service, relay := pod.Containers[0], pod.Containers[1]
	names := make([]string, len(service.Env))
	for i, e := range service.Env {
		names[i] = e.Name
	}
	assert.Equal(t, []string{"METRICS_PORT", "OPERATORWEBHOOK", "PARAMETERS_KFPNAMESPACE", "PIPELINEROOTSTORAGE", "PROVIDERNAME", "SERVER_PORT",
		"POD_NAMESPACE", "LOG_LEVEL", "NODE", "PROVIDER"}, names)
	assert.Equal(t, nodeEnv, service.Env[8], "valueFrom as written")
	assert.Equal(t, mountToken, service.VolumeMounts)
	require.Len(t, pod.Volumes, 2)
	assert.Equal(t, eventsTokenVolume, pod.Volumes[0].Name)
	assert.Equal(t, volume("kfp-token", tokenVol), pod.Volumes[1])
	assert.Equal(t, []corev1.VolumeMount{{Name: eventsTokenVolume, MountPath: tokenDir, ReadOnly: true}}, relay.VolumeMounts)
	assert.Empty(t, relay.Env, "the relay takes none of the Provider's env")
}

// Should the API server let an override through (a CRD from before its
// rule), the operator's value wins all the same.
func TestTheOperatorsEnvWins(t *testing.T) {
	p := serviceProvider(nil, nil, corev1.EnvVar{Name: "PIPELINEROOTSTORAGE", Value: "gs://elsewhere"},
		corev1.EnvVar{Name: "OPERATORWEBHOOK", Value: "http://evil/events"}, corev1.EnvVar{Name: "parameters_kfpnamespace", Value: "kube-system"}, plainEnv)
	env := serviceEnv(p)
	values := map[string][]string{}
	for _, e := range env {
		values[strings.ToUpper(e.Name)] = append(values[strings.ToUpper(e.Name)], e.Value)
	}
	assert.Equal(t, []string{"gs://root"}, values["PIPELINEROOTSTORAGE"])
	assert.Equal(t, []string{"http://127.0.0.1:8099/events"}, values["OPERATORWEBHOOK"])
	assert.Equal(t, []string{"kubeflow"}, values["PARAMETERS_KFPNAMESPACE"])
	assert.Equal(t, []string{"debug"}, values["LOG_LEVEL"])
}
