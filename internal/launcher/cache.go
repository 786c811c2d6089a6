package launcher

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"

	"github.com/kubeflow/pipelines/api/v2alpha1/go/pipelinespec"
	"google.golang.org/protobuf/encoding/protojson"
)

// Caching follows KFP's: an execution is reused when a finished one had
// the same fingerprint — the same component (image, command, arguments,
// interface) and the same inputs (parameter values with their types,
// input artifacts by content). KFP's backend names input artifacts by
// their identity in its metadata store; a run here writes its artifacts
// afresh under its own directory, so an artifact is identified by what
// it holds (Digest), which also lets a task after a cached one hit.

// CacheEntry is what the cache keeps of a finished execution: its output
// parameters as text, its output artifacts' metadata, and where it ran.
type CacheEntry struct {
	Fingerprint string                     `json:"fingerprint"`
	Parameters  map[string]string          `json:"parameters,omitempty"`
	Artifacts   map[string]json.RawMessage `json:"artifacts,omitempty"`
	JobName     string                     `json:"jobName,omitempty"`
	Task        string                     `json:"task,omitempty"`
}

// cacheKey is what the fingerprint is the digest of (canonical JSON:
// struct fields in order, map keys sorted).
type cacheKey struct {
	Image           string                     `json:"image"`
	Command         []string                   `json:"command"`
	Args            []string                   `json:"args"`
	Interface       cacheInterface             `json:"interface"`
	Parameters      map[string]json.RawMessage `json:"parameters"`
	InputArtifacts  map[string]string          `json:"inputArtifacts"`
	OutputArtifacts []string                   `json:"outputArtifacts"`
}

type cacheInterface struct {
	Inputs  Inputs  `json:"inputs"`
	Outputs Outputs `json:"outputs"`
}

// Fingerprint is the cache key of an execution: image, the command and
// arguments with their placeholders unresolved, the component's inputs
// and outputs, the executor input's parameter values, and the digest of
// each input artifact's content (artifactDigests, by input name). The
// task's name, its run and its output locations are not part of it.
func Fingerprint(spec Spec, image string, ei *pipelinespec.ExecutorInput, artifactDigests map[string]string) (string, error) {
	key := cacheKey{
		Image: image, Command: spec.Command, Args: spec.Args,
		Interface:      cacheInterface{Inputs: spec.Inputs, Outputs: spec.Outputs},
		Parameters:     map[string]json.RawMessage{},
		InputArtifacts: artifactDigests,
	}
	for name, v := range ei.GetInputs().GetParameterValues() {
		data, err := protojson.Marshal(v)
		if err != nil {
			return "", err
		}
		// protojson's spacing is unstable: compact it.
		var canonical any
		if err := json.Unmarshal(data, &canonical); err != nil {
			return "", err
		}
		if data, err = json.Marshal(canonical); err != nil {
			return "", err
		}
		key.Parameters[name] = data
	}
	for name := range spec.Outputs.Artifacts {
		key.OutputArtifacts = append(key.OutputArtifacts, name)
	}
	sort.Strings(key.OutputArtifacts)
	data, err := json.Marshal(key)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}
