//go:build e2e

package e2e

// Issue 25, hole 9: one Tekton provider serving two namespaces keeps their
// artifacts on one claim. The attacker, a tenant of one namespace, runs a
// pipeline of its own whose step tries to read, replace and plant files
// in the victim namespace's directory, by every path it can name; on the
// real node each attempt fails, the victim's files stay as they were, and
// both namespaces' own runs still work.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/localcluster"
)

// artifactsClaim is the claim tektonProvider binds to its local volume.
const artifactsClaim = "kfp-artifacts"

// plantedName is what the probe tries to create in the victim's tree.
const plantedName = "planted-by-attacker"

func TestTenantCannotReachAnotherNamespacesArtifacts(t *testing.T) {
	providerNs := namespace(t, "e2e-artifacts")
	victim := namespace(t, "e2e-victim")
	attacker := namespace(t, "e2e-attacker")
	volume := tektonProvider(t, providerNs)
	admitNamespaces(t, providerNs, "kfp", victim, attacker)
	provider := providerNs + "/kfp"
	probeImage := pushProbePipeline(t)

	pipelineOn(t, victim, provider, "demo-ml", images["DEMO_PIPELINE_DIGEST_REF"], "/pipeline.yaml")
	pipelineOn(t, attacker, provider, "demo-ml", images["DEMO_PIPELINE_DIGEST_REF"], "/pipeline.yaml")
	pipelineOn(t, attacker, provider, "probe", probeImage, "/probe.yaml")
	for _, p := range [][2]string{{victim, "demo-ml"}, {attacker, "demo-ml"}, {attacker, "probe"}} {
		waitFor(t, 4*time.Minute, "Pipeline "+p[0]+"/"+p[1]+" synchronised", func() (bool, string) { return synchronised(get(t, "Pipeline", p[0], p[1])) })
	}

	// The legitimate path: each namespace trains, at the same time.
	runOn(t, victim, provider, "train", "demo-ml", "rows", "120")
	runOn(t, attacker, provider, "train", "demo-ml", "rows", "80")
	victimRun := succeededRun(t, victim, "train", providerNs)
	attackerRun := succeededRun(t, attacker, "train", providerNs)
	for ns, pr := range map[string]tektonv1.PipelineRun{victim: victimRun, attacker: attackerRun} {
		assertArtifactsIn(t, volume, ns, pr, "generate/dataset", "train/model")
		assert.Contains(t, pr.Annotations["pipelines.kubeflow.org/outputs"], `"uri":"file:///kfp/artifacts/`+ns+`/`,
			"%s's locations name its directory", ns)
		assertMountsOnly(t, providerNs, pr.Name, ns)
	}
	before := treeOf(t, filepath.Join(volume, victim))
	require.Contains(t, before, filepath.Join(victimRun.Name, "train", "model"), "the victim's model is there to attack")

	// The attack: the attacker's own pipeline, told exactly where the
	// victim's model is.
	runOn(t, attacker, provider, "probe", "probe", "victim", victim+"/"+victimRun.Name)
	probe := succeededRun(t, attacker, "probe", providerNs)
	assertMountsOnly(t, providerNs, probe.Name, attacker)
	logs := tkn(t, "pipelinerun", "logs", probe.Name, "-n", providerNs)
	attempts := regexp.MustCompile(`attack (\S+) (\S+): (ALLOWED|denied)`).FindAllStringSubmatch(logs, -1)
	require.Len(t, attempts, 9, "three attempts on each of three paths to the victim's model:\n%s", logs)
	for _, a := range attempts {
		assert.Equal(t, "denied", a[3], "the attacker's step could %s %s", a[1], a[2])
	}
	assert.Contains(t, logs, "mounted: /kfp/artifacts/"+attacker+"\n", "under the pipeline root the attacker's step sees its own namespace's directory only")
	assertArtifactsIn(t, volume, attacker, probe, "probe/evidence")

	// On the node: the victim's tree is as it was, nothing was planted
	// anywhere, and the claim holds the two namespaces' directories only.
	assert.Equal(t, before, treeOf(t, filepath.Join(volume, victim)), "the victim's files are unchanged")
	assertNothingNamed(t, volume, plantedName)
	assert.ElementsMatch(t, []string{victim, attacker}, entriesOf(t, volume), "the claim's root: one directory per namespace")

	// And the victim's next run, in the tree the attacker tried to plant
	// in, works.
	runOn(t, victim, provider, "train-again", "demo-ml", "rows", "60")
	again := succeededRun(t, victim, "train-again", providerNs)
	assertArtifactsIn(t, volume, victim, again, "generate/dataset", "train/model")
	t.Logf("victim run %s and %s, attacker runs %s and %s (probe): every attempt on %s/%s denied",
		victimRun.Name, again.Name, attackerRun.Name, probe.Name, victim, victimRun.Name)
}

// admitNamespaces lets namespaces use the Provider, and waits until the
// operator has seen it.
func admitNamespaces(t *testing.T, ns, provider string, namespaces ...string) {
	t.Helper()
	allowed, err := json.Marshal(namespaces)
	require.NoError(t, err)
	patch(t, "Provider", ns, provider, fmt.Sprintf(`{"spec":{"allowedNamespaces":%s}}`, allowed))
	waitFor(t, 2*time.Minute, "Provider "+ns+"/"+provider+" Ready at its new generation", func() (bool, string) {
		p := get(t, "Provider", ns, provider)
		if p == nil {
			return false, "not found"
		}
		observed, _, _ := unstructured.NestedInt64(p.Object, "status", "observedGeneration")
		ready, why := readyIs(p, "True")
		return ready && observed == p.GetGeneration(), fmt.Sprintf("%s, observedGeneration %d of %d", why, observed, p.GetGeneration())
	})
}

// pipelineOn creates Pipeline name in ns, on provider ("namespace/name"),
// compiled by the static compiler from file in image.
func pipelineOn(t *testing.T, ns, provider, name, image, file string) {
	t.Helper()
	create(t, ns, fmt.Sprintf(`
kind: Pipeline
metadata: {name: %s}
spec:
  provider: %s
  image: %s
  framework: {name: static, parameters: {pipelineFile: %s}}
`, name, provider, image, file))
}

// runOn creates Run name in ns of pipeline, with one parameter.
func runOn(t *testing.T, ns, provider, name, pipeline, param, value string) {
	t.Helper()
	create(t, ns, fmt.Sprintf(`
kind: Run
metadata: {name: %s}
spec:
  provider: %s
  pipeline: %s
  parameters: [{name: %s, value: %q}]
`, name, provider, pipeline, param, value))
}

// succeededRun waits for Run name in ns to succeed and returns its
// PipelineRun, in the provider's namespace.
func succeededRun(t *testing.T, ns, name, providerNs string) tektonv1.PipelineRun {
	t.Helper()
	waitFor(t, 6*time.Minute, "Run "+ns+"/"+name+" Succeeded", func() (bool, string) {
		state, msg := completionState(get(t, "Run", ns, name))
		if state == "Failed" {
			t.Fatalf("Run %s/%s failed: %s", ns, name, msg)
		}
		return state == "Succeeded", state + ": " + msg
	})
	id, _, _ := unstructured.NestedString(get(t, "Run", ns, name).Object, "status", "provider", "id")
	var pr tektonv1.PipelineRun
	require.NoError(t, cl.Get(context.Background(), client.ObjectKey{Namespace: providerNs, Name: id}, &pr))
	return pr
}

// assertArtifactsIn: the run's artifacts are files in its namespace's
// directory of the volume.
func assertArtifactsIn(t *testing.T, volume, ns string, pr tektonv1.PipelineRun, artifacts ...string) {
	t.Helper()
	for _, artifact := range artifacts {
		info, err := os.Stat(filepath.Join(volume, ns, pr.Name, artifact))
		if assert.NoError(t, err, "%s's artifact %s in %s's directory", pr.Name, artifact, ns) {
			assert.Greater(t, info.Size(), int64(0), "%s's artifact %s", pr.Name, artifact)
		}
	}
}

// assertMountsOnly: every container of every pod of the PipelineRun that
// mounts the artifacts claim mounts namespace's directory of it, and
// nothing else of it.
func assertMountsOnly(t *testing.T, providerNs, pipelineRun, namespace string) {
	t.Helper()
	pods := podsOf(t, providerNs, pipelineRun)
	require.NotEmpty(t, pods, "the pods of %s", pipelineRun)
	mounts := 0
	for _, pod := range pods {
		claimVolumes := map[string]bool{}
		for _, v := range pod.Spec.Volumes {
			if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == artifactsClaim {
				claimVolumes[v.Name] = true
			}
		}
		for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
			for _, m := range c.VolumeMounts {
				if claimVolumes[m.Name] {
					mounts++
					assert.Equal(t, namespace, m.SubPath, "pod %s, container %s mounts the claim at %s", pod.Name, c.Name, m.MountPath)
				}
			}
		}
	}
	assert.Positive(t, mounts, "the pods of %s mount the artifacts claim", pipelineRun)
}

// treeOf maps every entry below dir to a digest of its content ("dir" for
// a directory, the target for a link).
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			tree[rel] = "link " + target
			return err
		case d.IsDir():
			tree[rel] = "dir"
			return nil
		}
		data, err := os.ReadFile(p)
		sum := sha256.Sum256(data)
		tree[rel] = hex.EncodeToString(sum[:])
		return err
	})
	require.NoError(t, err)
	return tree
}

func assertNothingNamed(t *testing.T, dir, name string) {
	t.Helper()
	for rel := range treeOf(t, dir) {
		assert.NotEqual(t, name, filepath.Base(rel), "%s was planted at %s", name, rel)
	}
}

func entriesOf(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// pushProbePipeline pushes the attacker's pipeline image: the probe's IR
// at /probe.yaml, naming a shell image that runs as the non-root user (the
// cluster's shell image runs as root, which Pod Security refuses).
func pushProbePipeline(t *testing.T) string {
	t.Helper()
	registry := images["REGISTRY"]
	shell, err := localcluster.Pull(registry + "/" + localcluster.ShellImage)
	require.NoError(t, err)
	step, err := localcluster.Build(shell, []localcluster.File{{Path: "etc/tenant-probe", Mode: 0o644, Content: []byte("the attacker's step image\n")}},
		[]string{"/bin/sh"}, localcluster.NonRootUID)
	require.NoError(t, err)
	stepRef, err := localcluster.Push(step, registry+"/e2e/tenant-probe-shell:1")
	require.NoError(t, err)

	static, err := localcluster.Pull(registry + "/" + localcluster.StaticBase)
	require.NoError(t, err)
	pipeline, err := localcluster.Build(static, []localcluster.File{{Path: "probe.yaml", Mode: 0o644, Content: probeIR(t, stepRef)}},
		[]string{"/probe.yaml"}, localcluster.NonRootUID)
	require.NoError(t, err)
	ref, err := localcluster.Push(pipeline, registry+"/e2e/tenant-probe-pipeline:1")
	require.NoError(t, err)
	return ref
}

// probeScript is the attacker's step. $1 is the victim's run directory
// ("namespace/PipelineRun"), $2 the path of the step's own output
// artifact, <mount>/<run>/<task>/evidence. It tries to read, replace and
// plant beside the victim's model by the three paths it could name: the
// location the victim's run reports, the same relative to its own mount
// ("../"), and the run's directory at the root as before per-namespace
// directories. Each attempt prints "attack ACTION PATH: ALLOWED|denied".
// It avoids "$(", which Tekton and the kubelet would substitute.
const probeScript = `
victim=$1
evidence=$2
own=${evidence%/*/*/*}
try() {
  what=$1
  shift
  if "$@" >/dev/null 2>&1; then echo "attack $what: ALLOWED"; else echo "attack $what: denied"; fi
}
for dir in "/kfp/artifacts/$victim" "$own/../$victim" "/kfp/artifacts/${victim#*/}"; do
  try "read $dir" cat "$dir/train/model"
  try "replace $dir" sh -c 'echo planted >"$0"' "$dir/train/model"
  try "plant $dir" mkdir -p "$dir/../` + plantedName + `"
done
echo "mounted:" /kfp/artifacts/*
echo "probe of $victim from $own" >"$evidence"
`

// probeIR is the KFP IR of the attacker's pipeline: one task, probe, that
// runs probeScript in stepImage with the victim's run directory as its
// parameter, and writes its own evidence artifact.
func probeIR(t *testing.T, stepImage string) []byte {
	t.Helper()
	victimParam := map[string]any{"victim": map[string]any{"parameterType": "STRING"}}
	evidence := map[string]any{"evidence": map[string]any{"artifactType": map[string]any{"schemaTitle": "system.Artifact", "schemaVersion": "0.0.1"}}}
	ir := map[string]any{
		"schemaVersion": "2.1.0",
		"sdkVersion":    "kfp-2.13.0",
		"pipelineInfo":  map[string]any{"name": "tenant-probe"},
		"components": map[string]any{"comp-probe": map[string]any{
			"executorLabel":     "exec-probe",
			"inputDefinitions":  map[string]any{"parameters": victimParam},
			"outputDefinitions": map[string]any{"artifacts": evidence},
		}},
		"deploymentSpec": map[string]any{"executors": map[string]any{"exec-probe": map[string]any{"container": map[string]any{
			"image":   stepImage,
			"command": []string{"/bin/sh", "-c", probeScript, "probe"},
			"args":    []string{"{{$.inputs.parameters['victim']}}", "{{$.outputs.artifacts['evidence'].path}}"},
		}}}},
		"root": map[string]any{
			"inputDefinitions": map[string]any{"parameters": victimParam},
			"dag": map[string]any{"tasks": map[string]any{"probe": map[string]any{
				"componentRef": map[string]any{"name": "comp-probe"},
				"taskInfo":     map[string]any{"name": "probe"},
				"inputs":       map[string]any{"parameters": map[string]any{"victim": map[string]any{"componentInputParameter": "victim"}}},
			}}},
		},
	}
	data, err := json.Marshal(ir)
	require.NoError(t, err)
	return data
}
