package kfpir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tektoncd/pipeline/pkg/apis/pipeline/pod"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// kfp-kubernetes settings: the platform spec document's
// platforms.kubernetes.deploymentSpec.executors, one KubernetesExecutorConfig
// (kfp-kubernetes' kubernetes_executor_config.proto, protobuf JSON) per
// executor. Container settings go into the task's step and volumes: Secrets
// and ConfigMaps as env or volumes, PVCs, field paths as env, empty dirs,
// shared memory, generic ephemeral volumes, the image pull policy; a
// Secret, ConfigMap or PVC may be named by a parameter (platformnames.go).
// The task's timeout is activeDeadlineSeconds. Pod settings (node
// selector, tolerations, node and pod affinity, pod labels and
// annotations, image pull secrets) cannot be said in a Pipeline: they go on
// the Pipeline as AnnotationTaskRunSpecs, Tekton PipelineTaskRunSpecs by
// task that whoever starts a run copies into the PipelineRun's
// taskRunSpecs (the Tekton provider does). PVCs the pipeline creates and
// deletes are tasks of their own (pvc.go). Any other field (security
// context, init containers, resource claims, a PVC sub path, …) is refused
// by name. A pipeline whose runs execute in another namespace than its own
// (Options.TenantNamespace) may not name that namespace's Secrets,
// ConfigMaps or PVCs: they are not its.

type keyToEnv struct {
	SecretKey    string `json:"secretKey,omitempty"`
	ConfigMapKey string `json:"configMapKey,omitempty"`
	EnvVar       string `json:"envVar"`
}

type objectAsEnv struct {
	SecretName             string         `json:"secretName,omitempty"`
	SecretNameParameter    *nameParameter `json:"secretNameParameter,omitempty"`
	ConfigMapName          string         `json:"configMapName,omitempty"`
	ConfigMapNameParameter *nameParameter `json:"configMapNameParameter,omitempty"`
	KeyToEnv               []keyToEnv     `json:"keyToEnv"`
	Optional               *bool          `json:"optional,omitempty"`
}

type objectAsVolume struct {
	SecretName             string         `json:"secretName,omitempty"`
	SecretNameParameter    *nameParameter `json:"secretNameParameter,omitempty"`
	ConfigMapName          string         `json:"configMapName,omitempty"`
	ConfigMapNameParameter *nameParameter `json:"configMapNameParameter,omitempty"`
	MountPath              string         `json:"mountPath"`
	Optional               *bool          `json:"optional,omitempty"`
}

type kubernetesConfig struct {
	SecretAsEnv       []objectAsEnv    `json:"secretAsEnv"`
	SecretAsVolume    []objectAsVolume `json:"secretAsVolume"`
	ConfigMapAsEnv    []objectAsEnv    `json:"configMapAsEnv"`
	ConfigMapAsVolume []objectAsVolume `json:"configMapAsVolume"`
	PvcMount          []pvcMountRef    `json:"pvcMount"`
	FieldPathAsEnv    []struct {
		Name      string `json:"name"`
		FieldPath string `json:"fieldPath"`
	} `json:"fieldPathAsEnv"`
	EmptyDirMounts []struct {
		VolumeName string `json:"volumeName"`
		MountPath  string `json:"mountPath"`
		Medium     string `json:"medium"`
		SizeLimit  string `json:"sizeLimit"`
	} `json:"emptyDirMounts"`
	EnabledSharedMemory *struct {
		VolumeName string `json:"volumeName"`
		Size       string `json:"size"`
	} `json:"enabledSharedMemory"`
	ImagePullPolicy       string      `json:"imagePullPolicy"`
	ActiveDeadlineSeconds json.Number `json:"activeDeadlineSeconds"`
	NodeSelector          *struct {
		Labels map[string]string `json:"labels"`
	} `json:"nodeSelector"`
	Tolerations []struct {
		Key               string       `json:"key"`
		Operator          string       `json:"operator"`
		Value             string       `json:"value"`
		Effect            string       `json:"effect"`
		TolerationSeconds *json.Number `json:"tolerationSeconds"`
	} `json:"tolerations"`
	PodMetadata *struct {
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"podMetadata"`
	ImagePullSecret []struct {
		SecretName          string         `json:"secretName"`
		SecretNameParameter *nameParameter `json:"secretNameParameter"`
	} `json:"imagePullSecret"`
	NodeAffinity           []nodeAffinityTerm `json:"nodeAffinity"`
	GenericEphemeralVolume []ephemeralVolume  `json:"genericEphemeralVolume"`
	PodAffinity            []podAffinityTerm  `json:"podAffinity"`
}

// parsePlatform reads the platform spec document's kubernetes settings.
func (c *compiler) parsePlatform() error {
	c.platform = map[string]*kubernetesConfig{}
	if len(c.spec.PlatformSpec) == 0 || isEmptyJSON(c.spec.PlatformSpec) {
		return nil
	}
	var doc struct {
		Platforms map[string]struct {
			DeploymentSpec struct {
				Executors map[string]json.RawMessage `json:"executors"`
			} `json:"deploymentSpec"`
			Pipelines json.RawMessage `json:"pipelines"`
		} `json:"platforms"`
	}
	if err := json.Unmarshal(c.spec.PlatformSpec, &doc); err != nil {
		return fmt.Errorf("kfp IR: platform spec: %w", err)
	}
	for _, name := range sortedKeys(doc.Platforms) {
		if name != "kubernetes" {
			return unsupported("", "platform spec "+name, "only the kubernetes platform (kfp-kubernetes) is")
		}
		executors := doc.Platforms[name].DeploymentSpec.Executors
		for _, label := range sortedKeys(executors) {
			var cfg kubernetesConfig
			dec := json.NewDecoder(bytes.NewReader(executors[label]))
			dec.DisallowUnknownFields()
			dec.UseNumber()
			if err := dec.Decode(&cfg); err != nil {
				if m := unknownFieldRE.FindStringSubmatch(err.Error()); m != nil {
					return unsupported(c.taskUsingExecutor(label), "kfp-kubernetes setting "+m[1], "executor %s", label)
				}
				return fmt.Errorf("kfp IR: platform spec: executor %s: %w", label, err)
			}
			c.platform[label] = &cfg
		}
	}
	return nil
}

// applyPlatform applies the kubernetes settings of the task's executor.
func (c *compiler) applyPlatform(b *taskBuild, main *tektonv1.Step) error {
	cfg := c.platform[b.comp.ExecutorLabel]
	if cfg == nil {
		return nil
	}
	for _, apply := range []func(*taskBuild, *kubernetesConfig, *tektonv1.Step) error{
		c.platformEnv, c.platformVolumes, c.mountClaims,
	} {
		if err := apply(b, cfg, main); err != nil {
			return err
		}
	}
	if err := platformScratch(b.name, cfg, &b.ts, main); err != nil {
		return err
	}
	if err := platformEphemeral(b.name, cfg, &b.ts, main); err != nil {
		return err
	}
	if err := platformStep(b.name, cfg, &b.pt, main); err != nil {
		return err
	}
	return c.podSettings(b, cfg)
}

// platformEnv: Secrets', ConfigMaps' and field paths' values as env.
func (c *compiler) platformEnv(b *taskBuild, cfg *kubernetesConfig, main *tektonv1.Step) error {
	for i, s := range cfg.SecretAsEnv {
		name, err := c.objectName(b, "secretAsEnv "+strconv.Itoa(i), "Secret", s.SecretName, s.SecretNameParameter)
		if err != nil {
			return err
		}
		for _, k := range s.KeyToEnv {
			main.Env = append(main.Env, corev1.EnvVar{Name: k.EnvVar, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: k.SecretKey, Optional: s.Optional}}})
		}
	}
	for i, s := range cfg.ConfigMapAsEnv {
		name, err := c.objectName(b, "configMapAsEnv "+strconv.Itoa(i), "ConfigMap", s.ConfigMapName, s.ConfigMapNameParameter)
		if err != nil {
			return err
		}
		for _, k := range s.KeyToEnv {
			main.Env = append(main.Env, corev1.EnvVar{Name: k.EnvVar, ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: k.ConfigMapKey, Optional: s.Optional}}})
		}
	}
	for _, f := range cfg.FieldPathAsEnv {
		main.Env = append(main.Env, corev1.EnvVar{Name: f.Name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: f.FieldPath}}})
	}
	return nil
}

// mountVolume adds a volume to the task and mounts it in main.
func mountVolume(task, prefix string, i int, src corev1.VolumeSource, mountPath string, ts *tektonv1.TaskSpec, main *tektonv1.Step) error {
	if !strings.HasPrefix(mountPath, "/") {
		return fmt.Errorf("task %q: kfp-kubernetes mount path %q is not absolute", task, mountPath)
	}
	name := prefix + strconv.Itoa(i)
	ts.Volumes = append(ts.Volumes, corev1.Volume{Name: name, VolumeSource: src})
	main.VolumeMounts = append(main.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: mountPath})
	return nil
}

// platformVolumes: Secrets and ConfigMaps as volumes (PVCs: mountClaims).
func (c *compiler) platformVolumes(b *taskBuild, cfg *kubernetesConfig, main *tektonv1.Step) error {
	for i, s := range cfg.SecretAsVolume {
		name, err := c.objectName(b, "secretAsVolume "+strconv.Itoa(i), "Secret", s.SecretName, s.SecretNameParameter)
		if err != nil {
			return err
		}
		src := corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name, Optional: s.Optional}}
		if err := mountVolume(b.name, "kfp-secret-", i, src, s.MountPath, &b.ts, main); err != nil {
			return err
		}
	}
	for i, s := range cfg.ConfigMapAsVolume {
		name, err := c.objectName(b, "configMapAsVolume "+strconv.Itoa(i), "ConfigMap", s.ConfigMapName, s.ConfigMapNameParameter)
		if err != nil {
			return err
		}
		src := corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Optional: s.Optional}}
		if err := mountVolume(b.name, "kfp-configmap-", i, src, s.MountPath, &b.ts, main); err != nil {
			return err
		}
	}
	return nil
}

// platformScratch: empty dirs and shared memory.
func platformScratch(task string, cfg *kubernetesConfig, ts *tektonv1.TaskSpec, main *tektonv1.Step) error {
	emptyDir := func(medium corev1.StorageMedium, size, what string) (corev1.VolumeSource, error) {
		src := &corev1.EmptyDirVolumeSource{Medium: medium}
		if size != "" {
			q, err := resource.ParseQuantity(size)
			if err != nil {
				return corev1.VolumeSource{}, fmt.Errorf("task %q: kfp-kubernetes %s size %q: %w", task, what, size, err)
			}
			src.SizeLimit = &q
		}
		return corev1.VolumeSource{EmptyDir: src}, nil
	}
	for i, e := range cfg.EmptyDirMounts {
		src, err := emptyDir(corev1.StorageMedium(e.Medium), e.SizeLimit, "emptyDir")
		if err != nil {
			return err
		}
		if err := mountVolume(task, "kfp-emptydir-", i, src, e.MountPath, ts, main); err != nil {
			return err
		}
	}
	if m := cfg.EnabledSharedMemory; m != nil {
		src, err := emptyDir(corev1.StorageMediumMemory, m.Size, "shared memory")
		if err != nil {
			return err
		}
		return mountVolume(task, "kfp-shm-", 0, src, "/dev/shm", ts, main)
	}
	return nil
}

// platformStep: the image pull policy, and the task's timeout.
func platformStep(task string, cfg *kubernetesConfig, pt *tektonv1.PipelineTask, main *tektonv1.Step) error {
	if p := cfg.ImagePullPolicy; p != "" {
		switch corev1.PullPolicy(p) {
		case corev1.PullAlways, corev1.PullNever, corev1.PullIfNotPresent:
			main.ImagePullPolicy = corev1.PullPolicy(p)
		default:
			return fmt.Errorf("task %q: kfp-kubernetes imagePullPolicy %q: want Always, Never or IfNotPresent", task, p)
		}
	}
	if d := cfg.ActiveDeadlineSeconds; d != "" {
		n, err := d.Int64()
		if err != nil || n <= 0 {
			return fmt.Errorf("task %q: kfp-kubernetes activeDeadlineSeconds %q: want a positive integer", task, d)
		}
		pt.Timeout = &metav1.Duration{Duration: time.Duration(n) * time.Second}
	}
	return nil
}

// podSettings records the task's pod settings for AnnotationTaskRunSpecs.
func (c *compiler) podSettings(b *taskBuild, cfg *kubernetesConfig) error {
	task := b.name
	spec := tektonv1.PipelineTaskRunSpec{PipelineTaskName: c.taskNames[task]}
	tpl := &pod.Template{}
	if cfg.NodeSelector != nil && len(cfg.NodeSelector.Labels) > 0 {
		tpl.NodeSelector = cfg.NodeSelector.Labels
	}
	for _, t := range cfg.Tolerations {
		tol := corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOperator(t.Operator), Value: t.Value, Effect: corev1.TaintEffect(t.Effect)}
		if t.TolerationSeconds != nil {
			n, err := t.TolerationSeconds.Int64()
			if err != nil {
				return fmt.Errorf("task %q: kfp-kubernetes tolerationSeconds %q: %w", task, *t.TolerationSeconds, err)
			}
			tol.TolerationSeconds = &n
		}
		tpl.Tolerations = append(tpl.Tolerations, tol)
	}
	for i, s := range cfg.ImagePullSecret {
		if _, in := nameOf(s.SecretName, s.SecretNameParameter); in != nil {
			return unsupported(task, "kfp-kubernetes image pull secret from a parameter", "imagePullSecret %d: pod settings are fixed before the run's values are known", i)
		}
		name, err := c.objectName(b, "imagePullSecret "+strconv.Itoa(i), "Secret", s.SecretName, s.SecretNameParameter)
		if err != nil {
			return err
		}
		tpl.ImagePullSecrets = append(tpl.ImagePullSecrets, corev1.LocalObjectReference{Name: name})
	}
	aff, err := affinity(task, cfg)
	if err != nil {
		return err
	}
	tpl.Affinity = aff
	if tpl.NodeSelector != nil || tpl.Tolerations != nil || tpl.ImagePullSecrets != nil || tpl.Affinity != nil {
		spec.PodTemplate = tpl
	}
	if m := cfg.PodMetadata; m != nil && (len(m.Labels) > 0 || len(m.Annotations) > 0) {
		spec.Metadata = &tektonv1.PipelineTaskMetadata{Labels: m.Labels, Annotations: m.Annotations}
	}
	if spec.PodTemplate != nil || spec.Metadata != nil {
		c.taskRunSpecs = append(c.taskRunSpecs, spec)
	}
	return nil
}

// annotateTaskRunSpecs puts the pod settings on the Pipeline.
func (c *compiler) annotateTaskRunSpecs(p *tektonv1.Pipeline) error {
	if len(c.taskRunSpecs) == 0 {
		return nil
	}
	data, err := json.Marshal(c.taskRunSpecs)
	if err != nil {
		return err
	}
	setAnnotation(p, contract.AnnotationTaskRunSpecs, string(data))
	return nil
}
