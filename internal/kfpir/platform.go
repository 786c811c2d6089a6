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
// and ConfigMaps as env or volumes, existing PVCs by name, field paths as
// env, empty dirs and shared memory, the image pull policy. The task's
// timeout is activeDeadlineSeconds. Pod settings (node selector,
// tolerations, pod labels and annotations, image pull secrets) cannot be
// said in a Pipeline: they go on the Pipeline as AnnotationTaskRunSpecs,
// Tekton PipelineTaskRunSpecs by task that whoever starts a run copies into
// the PipelineRun's taskRunSpecs (the Tekton provider does). Any other
// field (names from parameters, PVCs the pipeline creates, affinity,
// generic ephemeral volumes, …) is refused by name. A pipeline whose runs
// execute in another namespace than its own (Options.TenantNamespace) may
// not name that namespace's Secrets, ConfigMaps or PVCs: they are not its.

type keyToEnv struct {
	SecretKey    string `json:"secretKey,omitempty"`
	ConfigMapKey string `json:"configMapKey,omitempty"`
	EnvVar       string `json:"envVar"`
}

type objectAsEnv struct {
	SecretName    string     `json:"secretName,omitempty"`
	ConfigMapName string     `json:"configMapName,omitempty"`
	KeyToEnv      []keyToEnv `json:"keyToEnv"`
	Optional      *bool      `json:"optional,omitempty"`
}

type objectAsVolume struct {
	SecretName    string `json:"secretName,omitempty"`
	ConfigMapName string `json:"configMapName,omitempty"`
	MountPath     string `json:"mountPath"`
	Optional      *bool  `json:"optional,omitempty"`
}

type kubernetesConfig struct {
	SecretAsEnv       []objectAsEnv    `json:"secretAsEnv"`
	SecretAsVolume    []objectAsVolume `json:"secretAsVolume"`
	ConfigMapAsEnv    []objectAsEnv    `json:"configMapAsEnv"`
	ConfigMapAsVolume []objectAsVolume `json:"configMapAsVolume"`
	PvcMount          []struct {
		Constant  string `json:"constant"`
		MountPath string `json:"mountPath"`
	} `json:"pvcMount"`
	FieldPathAsEnv []struct {
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
		SecretName string `json:"secretName"`
	} `json:"imagePullSecret"`
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
func (c *compiler) applyPlatform(task, label string, pt *tektonv1.PipelineTask, ts *tektonv1.TaskSpec, main *tektonv1.Step) error {
	cfg := c.platform[label]
	if cfg == nil {
		return nil
	}
	foreign := c.opts.TenantNamespace != "" && c.opts.TenantNamespace != c.opts.Namespace
	refuseForeign := func(kind, name string) error {
		if foreign {
			return unsupported(task, "kfp-kubernetes "+kind+" of another namespace",
				"%s %q: the runs of this %s pipeline execute in %s, whose %ss are not the pipeline's", kind, name, c.opts.TenantNamespace, c.opts.Namespace, kind)
		}
		return nil
	}
	for _, apply := range []func(string, *kubernetesConfig, func(string, string) error, *tektonv1.TaskSpec, *tektonv1.Step) error{
		platformEnv, platformVolumes, platformScratch,
	} {
		if err := apply(task, cfg, refuseForeign, ts, main); err != nil {
			return err
		}
	}
	if err := platformStep(task, cfg, pt, main); err != nil {
		return err
	}
	return c.podSettings(task, cfg, refuseForeign)
}

// platformEnv: Secrets', ConfigMaps' and field paths' values as env.
func platformEnv(_ string, cfg *kubernetesConfig, refuseForeign func(string, string) error, _ *tektonv1.TaskSpec, main *tektonv1.Step) error {
	for _, s := range cfg.SecretAsEnv {
		if err := refuseForeign("Secret", s.SecretName); err != nil {
			return err
		}
		for _, k := range s.KeyToEnv {
			main.Env = append(main.Env, corev1.EnvVar{Name: k.EnvVar, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: s.SecretName}, Key: k.SecretKey, Optional: s.Optional}}})
		}
	}
	for _, s := range cfg.ConfigMapAsEnv {
		if err := refuseForeign("ConfigMap", s.ConfigMapName); err != nil {
			return err
		}
		for _, k := range s.KeyToEnv {
			main.Env = append(main.Env, corev1.EnvVar{Name: k.EnvVar, ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: s.ConfigMapName}, Key: k.ConfigMapKey, Optional: s.Optional}}})
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

// platformVolumes: Secrets, ConfigMaps and existing PVCs as volumes.
func platformVolumes(task string, cfg *kubernetesConfig, refuseForeign func(string, string) error, ts *tektonv1.TaskSpec, main *tektonv1.Step) error {
	for i, s := range cfg.SecretAsVolume {
		if err := refuseForeign("Secret", s.SecretName); err != nil {
			return err
		}
		src := corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: s.SecretName, Optional: s.Optional}}
		if err := mountVolume(task, "kfp-secret-", i, src, s.MountPath, ts, main); err != nil {
			return err
		}
	}
	for i, s := range cfg.ConfigMapAsVolume {
		if err := refuseForeign("ConfigMap", s.ConfigMapName); err != nil {
			return err
		}
		src := corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: s.ConfigMapName}, Optional: s.Optional}}
		if err := mountVolume(task, "kfp-configmap-", i, src, s.MountPath, ts, main); err != nil {
			return err
		}
	}
	for i, p := range cfg.PvcMount {
		if p.Constant == "" {
			return unsupported(task, "kfp-kubernetes PVC named by a parameter", "pvcMount %d", i)
		}
		if err := refuseForeign("PersistentVolumeClaim", p.Constant); err != nil {
			return err
		}
		src := corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: p.Constant}}
		if err := mountVolume(task, "kfp-pvc-", i, src, p.MountPath, ts, main); err != nil {
			return err
		}
	}
	return nil
}

// platformScratch: empty dirs and shared memory.
func platformScratch(task string, cfg *kubernetesConfig, _ func(string, string) error, ts *tektonv1.TaskSpec, main *tektonv1.Step) error {
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
func (c *compiler) podSettings(task string, cfg *kubernetesConfig, refuseForeign func(kind, name string) error) error {
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
	for _, s := range cfg.ImagePullSecret {
		if err := refuseForeign("Secret", s.SecretName); err != nil {
			return err
		}
		tpl.ImagePullSecrets = append(tpl.ImagePullSecrets, corev1.LocalObjectReference{Name: s.SecretName})
	}
	if tpl.NodeSelector != nil || tpl.Tolerations != nil || tpl.ImagePullSecrets != nil {
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
