package tektonprovider

import (
	"encoding/json"
	"path"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	tektonv1 "github.com/tektoncd/pipeline/pkg/apis/pipeline/v1"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/kfpir"
)

// pipelineOfNamespace compiles the demo pipeline of a Pipeline resource
// in namespace.
func pipelineOfNamespace(t *testing.T, namespace string, cfg contract.ProviderConfig) *tektonv1.Pipeline {
	t.Helper()
	res := pipelineResource()
	res.Metadata.Namespace = namespace
	p, err := PipelineFor(demoIR(t), res, cfg, "kfp-system", launcher)
	require.NoError(t, err)
	return p
}

// claimRunOf is the PipelineRun of a run of namespace, with the artifacts
// on the shared claim "artifacts".
func claimRunOf(t *testing.T, namespace string, p *tektonv1.Pipeline) (*tektonv1.PipelineRun, error) {
	t.Helper()
	settings, err := SettingsFrom(config(map[string]string{ParamArtifactsClaim: `"artifacts"`}))
	require.NoError(t, err)
	return PipelineRunFor(RunInputs{Name: "r-" + namespace, Namespace: "kfp-system", ResourceNamespace: namespace, Pipeline: p, Settings: settings})
}

// mountedDirectory is the directory of the claim a PipelineRun's tasks
// mount, and where they mount it.
type mountedDirectory struct{ claim, subPath, mountPath string }

func mountsOf(t *testing.T, p *tektonv1.Pipeline, pr *tektonv1.PipelineRun) []mountedDirectory {
	t.Helper()
	require.Len(t, pr.Spec.Workspaces, 1)
	binding := pr.Spec.Workspaces[0]
	require.Equal(t, kfpir.ArtifactsWorkspace, binding.Name)
	require.NotNil(t, binding.PersistentVolumeClaim)
	var mounts []mountedDirectory
	for _, task := range p.Spec.Tasks {
		for _, b := range task.Workspaces {
			assert.Empty(t, b.SubPath, "task %s adds no sub-directory of its own", task.Name)
		}
		for _, w := range task.TaskSpec.Workspaces {
			mounts = append(mounts, mountedDirectory{binding.PersistentVolumeClaim.ClaimName, binding.SubPath, w.MountPath})
		}
	}
	return mounts
}

// within says whether directory a is b or lies below it.
func within(a, b string) bool {
	a, b = path.Clean(a), path.Clean(b)
	return a == b || strings.HasPrefix(a, b+"/")
}

func TestRunsMountOnlyTheirNamespacesDirectory(t *testing.T) {
	// "team-a-b" starts like "team-a": directories, not prefixes, must differ.
	for _, pair := range [][2]string{{"team-a", "team-b"}, {"team-a", "team-a-b"}} {
		var subPaths []string
		for _, ns := range pair {
			p := pipelineOfNamespace(t, ns, config(nil))
			pr, err := claimRunOf(t, ns, p)
			require.NoError(t, err)
			mounts := mountsOf(t, p, pr)
			require.Len(t, mounts, 3, "every task mounts the artifacts")
			for _, m := range mounts {
				assert.Equal(t, mountedDirectory{"artifacts", ns, "/kfp/artifacts/" + ns}, m,
					"the namespace's directory, at the root plus its name")
			}
			var outputs []contract.OutputArtifact
			require.NoError(t, json.Unmarshal([]byte(pr.Annotations[contract.AnnotationOutputs]), &outputs))
			require.NotEmpty(t, outputs)
			for _, o := range outputs {
				assert.True(t, strings.HasPrefix(o.URI, "file:///kfp/artifacts/"+ns+"/"+contract.RunNamePlaceholder+"/"),
					"%s names the namespace's directory and the run's: %s", o.Output, o.URI)
			}
			subPaths = append(subPaths, pr.Spec.Workspaces[0].SubPath)
		}
		a, b := subPaths[0], subPaths[1]
		assert.False(t, within(a, b) || within(b, a), "%q and %q do not overlap", a, b)
	}
}

func TestRunOfAnotherNamespacesPipelineIsRefused(t *testing.T) {
	p := pipelineOfNamespace(t, "team-a", config(nil))
	_, err := claimRunOf(t, "team-b", p)
	assert.ErrorContains(t, err, `keeps its artifacts in the directory of namespace "team-a": a run of namespace "team-b" cannot run it`)

	// A Pipeline compiled before per-namespace directories names none:
	// its runs still mount only their own namespace's directory.
	delete(p.Annotations, contract.AnnotationArtifactsDirectory)
	pr, err := claimRunOf(t, "team-b", p)
	require.NoError(t, err)
	assert.Equal(t, "team-b", pr.Spec.Workspaces[0].SubPath)
}

func TestNamespaceDirectoryRefusesWhatIsNotANamespace(t *testing.T) {
	for _, ns := range []string{"", ".", "..", "../team-a", "team-a/..", "a/b", "/team-a", "Team-A", "team_a", strings.Repeat("a", 64)} {
		_, err := NamespaceDirectory(ns)
		assert.Error(t, err, "%q", ns)
	}
	p := pipelineOfNamespace(t, "team-a", config(nil))
	_, err := claimRunOf(t, "", p)
	assert.ErrorContains(t, err, "cannot name a directory of the artifacts volume", "a run with no namespace")
	res := pipelineResource()
	res.Metadata.Namespace = ".."
	_, err = PipelineFor(demoIR(t), res, config(nil), "kfp-system", launcher)
	assert.ErrorContains(t, err, "cannot name a directory of the artifacts volume")
}

func TestNamespacePipelineRoot(t *testing.T) {
	for name, tc := range map[string]struct {
		configured, irRoot string
		want               string // the namespace's root, or "error:" and a message
	}{
		"default":         {"", "", "file:///kfp/artifacts/team-a"},
		"the IR's":        {"", "file:///mnt/root/", "file:///mnt/root/team-a"},
		"an IR's s3 root": {"", "s3://bucket/root", "file:///kfp/artifacts/team-a"},
		"configured":      {"file:///data/kfp//", "file:///mnt/root", "file:///data/kfp/team-a"},
		"root of all":     {"file:///", "", "error:the root cannot be /"},
		"a host":          {"file://host/kfp", "", "error:only file:///absolute/path roots"},
		"a query":         {"file:///kfp?x=1", "", "error:only file:///absolute/path roots"},
		"an object store": {"s3://artifacts/kfp/", "", "s3://artifacts/kfp/team-a"},
		"a bucket's root": {"s3://artifacts", "", "s3://artifacts/team-a"},
		"minio":           {"minio://mlpipeline/v2", "", "minio://mlpipeline/v2/team-a"},
		"a climbing key":  {"s3://artifacts/../x", "", "error:may not contain"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := namespacePipelineRoot(basePipelineRoot(tc.configured, &kfpir.PipelineSpec{DefaultPipelineRoot: tc.irRoot}), "team-a")
			if msg, isErr := strings.CutPrefix(tc.want, "error:"); isErr {
				assert.ErrorContains(t, err, msg)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestTheProvidersRootGetsTheNamespacesDirectory(t *testing.T) {
	cfg := config(nil)
	cfg.ArtifactRepository = &contract.ArtifactLocation{Source: "provider", Location: "file:///data/kfp"}
	p := pipelineOfNamespace(t, "team-b", cfg)
	assert.Equal(t, "team-b", p.Annotations[contract.AnnotationArtifactsDirectory])
	for _, task := range p.Spec.Tasks {
		assert.Equal(t, "/data/kfp/team-b", task.TaskSpec.Workspaces[0].MountPath, task.Name)
	}
	assert.Contains(t, p.Annotations[contract.AnnotationOutputs], `"uri":"file:///data/kfp/team-b/`)
}

// s3Config is a Provider whose artifact repository is an S3-compatible
// store, with its credentials in the Secret "store-keys".
func s3Config() contract.ProviderConfig {
	cfg := config(map[string]string{ParamArtifactsClaim: `"artifacts"`})
	cfg.ArtifactRepository = &contract.ArtifactLocation{Source: "provider", Location: "s3://artifacts/kfp",
		Endpoint: "seaweedfs.kfp-artifact-store:8333", Insecure: true, Secrets: []contract.SecretKeyRef{
			{Purpose: "accessKey", Name: "store-keys", Key: "id"}, {Purpose: "secretKey", Name: "store-keys", Key: "secret"}}}
	return cfg
}

func TestAnS3RepositoryKeepsEachNamespaceUnderItsPrefix(t *testing.T) {
	p := pipelineOfNamespace(t, "team-b", s3Config())
	require.Len(t, p.Spec.Workspaces, 1, "the claim holds KFP's cache only")
	assert.Contains(t, p.Annotations[contract.AnnotationOutputs], `"uri":"s3://artifacts/kfp/team-b/`)
	for _, task := range p.Spec.Tasks {
		fetch := task.TaskSpec.Steps[0]
		require.Equal(t, kfpir.FetchStep, fetch.Name, task.Name)
		assert.Equal(t, []string{"fetch", "--root", "s3://artifacts/kfp/team-b", "--endpoint", "seaweedfs.kfp-artifact-store:8333", "--insecure"}, fetch.Args[:6], task.Name)
		assert.Equal(t, "store-keys", fetch.Env[0].ValueFrom.SecretKeyRef.Name)
		for _, s := range task.TaskSpec.Steps {
			assert.NotContains(t, s.Image, "restricted") // the restricted context comes from the step template
		}
		assert.NotNil(t, task.TaskSpec.StepTemplate.SecurityContext, "fetch and store meet Pod Security too")
	}
	pr, err := claimRunOf(t, "team-b", p)
	require.NoError(t, err)
	require.Len(t, pr.Spec.Workspaces, 1)
	assert.Equal(t, "team-b", pr.Spec.Workspaces[0].SubPath, "the namespace's cache, on its directory of the claim")

	// Without a claim nothing outlives the run: no volume at all.
	cfg := s3Config()
	delete(cfg.Spec.Parameters, ParamArtifactsClaim)
	p = pipelineOfNamespace(t, "team-b", cfg)
	assert.Empty(t, p.Spec.Workspaces)
	pr, err = PipelineRunFor(RunInputs{Name: "r", Namespace: "kfp-system", ResourceNamespace: "team-b", Pipeline: p, Settings: Settings{ArtifactsStorage: resource.MustParse("1Gi")}})
	require.NoError(t, err)
	assert.Empty(t, pr.Spec.Workspaces, "no volume is bound for an object-store root without caching")
}

func TestObjectStoresTheProviderCannotReachAreRefused(t *testing.T) {
	for location, want := range map[string]string{
		"gs://bucket/kfp":       "not gs://",
		"minio://mlpipeline/v2": "with an endpoint and credentials",
		"s3://bucket/kfp":       "with an endpoint and credentials",
		"http://store/kfp":      "not http://",
	} {
		cfg := config(nil)
		cfg.ArtifactRepository = &contract.ArtifactLocation{Source: "pipelineRootStorage", Location: location}
		_, err := PipelineFor(demoIR(t), pipelineResource(), cfg, "kfp-system", launcher)
		assert.ErrorContains(t, err, want, location)
	}
	half := s3Config()
	half.ArtifactRepository.Secrets = half.ArtifactRepository.Secrets[:1]
	_, err := PipelineFor(demoIR(t), pipelineResource(), half, "kfp-system", launcher)
	assert.ErrorContains(t, err, "set both accessKeySecret and secretKeySecret")
}
