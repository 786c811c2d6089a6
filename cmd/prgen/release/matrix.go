// Package release turns a release matrix (applications × versions) into
// PipelineRuns of the release shape, one per selected pair, for
// `kubectl create`. cmd/prgen is its command line.
package release

// Matrix is a release matrix file.
type Matrix struct {
	// Namespace the runs are created in; kubectl's namespace when empty.
	Namespace string `yaml:"namespace"`
	// ServiceAccount the runs' TaskRuns use; Tekton's default when empty.
	ServiceAccount string `yaml:"serviceAccount"`
	// ManifestsRepo holds the manifests branches the runs update.
	ManifestsRepo string `yaml:"manifestsRepo"`
	// Credentials are Secrets bound as the runs' workspaces.
	Credentials Credentials `yaml:"credentials"`
	// Tools are the images the Tasks run; the shape's defaults when empty.
	Tools Tools `yaml:"tools"`

	Applications []Application `yaml:"applications"`
	Versions     []Version     `yaml:"versions"`

	// positions maps field paths (applications[1].image) to source lines.
	positions map[string]int
	file      string
}

// Credentials name Secrets; their contents never reach the runs' params.
type Credentials struct {
	// Git is a Secret with .gitconfig and .git-credentials.
	Git string `yaml:"git"`
	// Registry is a Secret with a config.json for the image registry.
	Registry string `yaml:"registry"`
}

// Tools are images the release Tasks run.
type Tools struct {
	Builder string `yaml:"builder"`
	Git     string `yaml:"git"`
}

// Application is one image built from one repository.
type Application struct {
	Name       string `yaml:"name"`
	Repo       string `yaml:"repo"`
	Context    string `yaml:"context"`
	Dockerfile string `yaml:"dockerfile"`
	// Image is the repository pushed to; each version pushes tag <version>.
	Image string `yaml:"image"`
	// Manifests is the directory in ManifestsRepo whose references to Image
	// are pinned after a build.
	Manifests string `yaml:"manifests"`
}

// Version is a line of development: a source revision built into the
// manifests branch of the same name.
type Version struct {
	Name            string `yaml:"name"`
	Revision        string `yaml:"revision"`
	ManifestsBranch string `yaml:"manifestsBranch"`
}
