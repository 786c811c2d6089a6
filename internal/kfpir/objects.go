package kfpir

import (
	"strings"

	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/objectstore"
)

// Object-store pipeline roots (s3://, minio://). A task of such a
// pipeline mounts no workspace: an emptyDir stands for the root at KFP's
// local path of it (/s3/bucket/prefix), and two steps of the helper image
// move the artifacts, before and after the component's own:
//
//	fetch  downloads the input artifacts, makes the output directory
//	...    the component (prepare and main), which never sees credentials
//	store  uploads the output artifacts
//
// Only the fetch and store steps get the store's credentials (from the
// Secret the Provider names), and they touch no URI outside the root: a
// tenant's image never holds the Provider's keys, and one namespace's run
// (whose root is its namespace's prefix) cannot read another's artifacts.
const (
	// ObjectsVolume is the emptyDir standing for the pipeline root.
	ObjectsVolume = "kfp-objects"
	// FetchStep and StoreStep move the artifacts.
	FetchStep = "fetch"
	StoreStep = "store"
)

// ObjectStore says how tasks reach an object-store pipeline root.
type ObjectStore struct {
	// Endpoint is host[:port]; empty means AWS S3.
	Endpoint string
	Region   string
	// Insecure uses plain HTTP.
	Insecure bool
	// AccessKey and SecretKey are keys of Secrets in the namespace the
	// runs execute in.
	AccessKey, SecretKey *corev1.SecretKeySelector
}

// objectRoot makes root, an s3:// or minio:// URI, the pipeline root.
func (c *compiler) objectRoot(root string) error {
	if c.opts.ObjectStore == nil {
		return unsupported("", "pipeline root "+root, "an object-store root needs the store's endpoint and credentials: the Provider's artifactRepository.s3")
	}
	o, err := objectstore.Parse(root)
	if err != nil {
		return unsupported("", "pipeline root "+root, "%v", err)
	}
	c.store = &o
	// A bucket's root has an empty key: no trailing slash either way.
	c.rootURI = strings.TrimSuffix(o.String(), "/")
	c.rootPath = strings.TrimSuffix(objectstore.LocalPath(o), "/")
	return nil
}

// moveStep is the fetch or store step (cmd) of uris, with the store's
// flags, extra flags, and the credentials. "--": a URI (an importer's, a
// run's parameter) is never a flag.
func (c *compiler) moveStep(cmd string, extra, uris []string, mount corev1.VolumeMount) tektonv1.Step {
	args := append(append(append(c.storeArgs(cmd), extra...), "--"), uris...)
	return tektonv1.Step{Name: cmd, Image: c.opts.LauncherImage, Command: []string{LauncherPath},
		Args: args, Env: c.storeEnv(), VolumeMounts: []corev1.VolumeMount{mount}}
}

// storeArgs are the flags of kfp-task fetch and store.
func (c *compiler) storeArgs(cmd string) []string {
	s := c.opts.ObjectStore
	args := []string{cmd, "--root", c.rootURI}
	if s.Endpoint != "" {
		args = append(args, "--endpoint", s.Endpoint)
	}
	if s.Region != "" {
		args = append(args, "--region", s.Region)
	}
	if s.Insecure {
		args = append(args, "--insecure")
	}
	return args
}

// storeEnv passes the credentials to a step that moves artifacts.
func (c *compiler) storeEnv() []corev1.EnvVar {
	var env []corev1.EnvVar
	for _, k := range []struct {
		name string
		ref  *corev1.SecretKeySelector
	}{{"AWS_ACCESS_KEY_ID", c.opts.ObjectStore.AccessKey}, {"AWS_SECRET_ACCESS_KEY", c.opts.ObjectStore.SecretKey}} {
		if k.ref != nil {
			env = append(env, corev1.EnvVar{Name: k.name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: k.ref}})
		}
	}
	return env
}

// moveObjects puts the fetch and store steps around a task's steps, and
// mounts the root's emptyDir in every step.
func (b *taskBuild) moveObjects() {
	c := b.c
	if c.store == nil {
		return
	}
	b.ts.Volumes = append(b.ts.Volumes, corev1.Volume{Name: ObjectsVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	mount := corev1.VolumeMount{Name: ObjectsVolume, MountPath: c.rootPath}
	for i := range b.ts.Steps {
		b.ts.Steps[i].VolumeMounts = append(b.ts.Steps[i].VolumeMounts, mount)
	}
	var mkdir []string
	if len(b.out.Artifacts) > 0 {
		mkdir = []string{"--mkdir", c.taskDir(b.name)}
	}
	if in := sortedValues(b.ph.inURI); len(in) > 0 || mkdir != nil {
		b.ts.Steps = append([]tektonv1.Step{c.moveStep(FetchStep, mkdir, in, mount)}, b.ts.Steps...)
	}
	if out := sortedValues(b.ph.outURI); len(out) > 0 {
		b.ts.Steps = append(b.ts.Steps, c.moveStep(StoreStep, nil, out, mount))
	}
}
