package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/cmd/prgen/release"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/imageref"
)

type options struct {
	file           string
	selector       string
	output         string
	namespace      string
	resolveDigests bool
}

const examples = `  # Trigger a release of every application at every version:
  prgen -f ci/releases.yaml | kubectl create -f -

  # Trigger one application at one version:
  prgen -f ci/releases.yaml -l app=operator,version=main | kubectl create -f -

  # Every application at the release branches, none at main:
  prgen -f ci/releases.yaml --selector 'version notin (main)' | kubectl create -f -

  # Which (application, version) pairs a selector picks, one APP/VERSION a line:
  prgen -f ci/releases.yaml -l 'app in (operator)' -o name

  # The names kubectl gave the runs it created:
  prgen -f ci/releases.yaml -l version=main | kubectl create -f - -o name

  # Pin the tool images to digests, into another namespace, as JSON:
  prgen -f ci/releases.yaml --resolve-digests -n ci -o json`

const long = `prgen reads a release matrix (applications × versions) and prints one Tekton
PipelineRun per selected (application, version) pair: an embedded pipelineSpec
that builds and pushes the application's image at the version's source
revision (Task build-push), then pins the pushed image by digest in the
version's manifests branch (Task update-manifests). Apply ci/tasks/ to the
namespace first.

Each run has generateName "<app>-<version>-", so every "kubectl create" starts
new runs ("kubectl apply" refuses generateName), and labels app=<app>,
version=<version>, type=run, app.kubernetes.io/name and app.kubernetes.io/version,
which --selector (-l) matches with label-selector syntax (=, !=, in, notin,
exists). --select is its deprecated former name.

Output formats (-o):
  yaml  a "---" separated stream of PipelineRuns (the default)
  json  a v1 List of PipelineRuns
  name  one line per run, APP/VERSION (e.g. operator/main), in the same order:
        the run's stable identity in the matrix. A run has no name until
        "kubectl create" gives it one from generateName, so prgen cannot print
        kubectl's pipelinerun.tekton.dev/NAME; "kubectl create -f - -o name"
        prints those. Select a pair again with -l app=APP,version=VERSION.
        The runs are built and validated (and --resolve-digests resolves)
        exactly as for yaml and json.

Ctrl-C (SIGINT) or SIGTERM stops prgen promptly, also while it waits for a
registry during --resolve-digests; it then prints nothing to stdout and exits 1.

Output is deterministic: applications in file order, each with its versions in
file order. Every run is checked before anything is printed; what prgen prints
passes Tekton's own PipelineRun validation. A matrix value that becomes a param
must not contain "$(": Tekton would expand it as a variable.

The matrix:

  namespace: ci                     # optional; --namespace overrides it
  serviceAccount: release-bot       # optional
  manifestsRepo: https://github.com/org/manifests.git
  credentials:                      # optional Secret names, bound as workspaces
    git: git-credentials            #   .gitconfig and .git-credentials
    registry: registry-credentials  #   config.json
  tools:                            # optional; the Tasks' defaults otherwise
    builder: gcr.io/kaniko-project/executor:v1.23.2
    git: docker.io/alpine/git:2.47.2
  applications:
    - name: operator                # label value; unique
      repo: https://github.com/org/app.git
      context: .                    # optional
      dockerfile: Dockerfile        # optional, relative to context
      image: ghcr.io/org/operator   # pushed as <image>:<version>
      manifests: config/manager     # directory in manifestsRepo to update
  versions:
    - name: main                    # label value and image tag; unique
      revision: main                # source branch, tag or commit
      manifestsBranch: main

Errors in the matrix are printed as file:line: field: problem, all at once;
nothing is printed to stdout and the exit code is 1.`

func newCommand(stdout, stderr io.Writer) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:           "prgen -f MATRIX [-l SELECTOR] [-o yaml|json|name] [-n NAMESPACE] [--resolve-digests]",
		Short:         "Print Tekton PipelineRuns for a release matrix, for kubectl create",
		Long:          long,
		Example:       examples,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := cmd.Flags()
			if f.Changed("select") && f.Changed("selector") {
				return fmt.Errorf("--select is the deprecated name of --selector: give only --selector")
			}
			return run(cmd.Context(), o, stdout)
		},
	}
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	f := cmd.Flags()
	// pflag writes deprecation notices to the flag set's output, which cobra
	// would copy to the command's out: stdout, which kubectl reads.
	f.SetOutput(stderr)
	f.StringVarP(&o.file, "filename", "f", "", "release matrix file (required)")
	f.StringVarP(&o.selector, "selector", "l", "", "label selector over app, version, type (e.g. app=operator,version in (main))")
	f.StringVar(&o.selector, "select", "", "deprecated name of --selector")
	_ = f.MarkDeprecated("select", "use --selector (-l) instead")
	f.StringVarP(&o.output, "output", "o", "yaml", "output format: yaml (a --- separated stream), json (a v1 List) or name (APP/VERSION per run)")
	f.StringVarP(&o.namespace, "namespace", "n", "", "namespace of the runs (overrides the matrix)")
	f.BoolVar(&o.resolveDigests, "resolve-digests", false, "pin tool images to the digests their registries serve (uses the docker config's credentials)")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

// execute runs prgen with args, printing an error (flag errors included) to
// stderr as "prgen: ...".
func execute(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := newCommand(stdout, stderr)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "prgen:", err)
	}
	return err
}

// run builds and validates every run before it writes the first byte, so a
// failed prgen never feeds half a release to kubectl.
func run(ctx context.Context, o *options, out io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.output != "yaml" && o.output != "json" && o.output != "name" {
		return fmt.Errorf("--output %q: must be yaml, json or name", o.output)
	}
	selector := labels.Everything()
	if o.selector != "" {
		var err error
		if selector, err = labels.Parse(o.selector); err != nil {
			return fmt.Errorf("--selector %q: %w", o.selector, err)
		}
	}
	data, err := os.ReadFile(o.file)
	if err != nil {
		return err
	}
	matrix, err := release.Parse(o.file, data)
	if err != nil {
		return err
	}
	opts := release.Options{Namespace: o.namespace, Selector: selector}
	if o.resolveDigests {
		opts.ResolveImage = imageref.NewResolver(authn.DefaultKeychain).Resolve
	}
	runs, err := matrix.Runs(ctx, opts)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w; nothing was printed", err)
		}
		return err
	}
	w := bufio.NewWriterSize(out, 1<<16)
	if err := release.Write(w, runs, o.output); err != nil {
		return err
	}
	return w.Flush()
}
