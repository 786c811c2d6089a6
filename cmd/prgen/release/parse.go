package release

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation"
)

// FieldError is a problem at a place in a matrix file.
type FieldError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Field, e.Msg)
}

// Parse reads a matrix. Every problem found is returned (errors.Join of
// *FieldError), each with file, line and field.
func Parse(file string, data []byte) (*Matrix, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return nil, &FieldError{File: file, Line: 1, Msg: "the matrix is empty"}
	} else if err != nil {
		return nil, yamlError(file, err)
	}
	if len(doc.Content) == 0 {
		return nil, &FieldError{File: file, Line: 1, Msg: "the matrix is empty"}
	}
	m := &Matrix{file: file, positions: map[string]int{}}
	root := doc.Content[0]
	// Report everything at once: unknown fields do not stop the checks of
	// the known ones, so one run of prgen lists every mistake.
	errs := m.checkShape(root, reflect.TypeOf(*m), "")
	if len(errs) == 0 || onlyUnknownFields(errs) {
		if err := root.Decode(m); err != nil {
			errs = append(errs, yamlError(file, err))
		} else {
			errs = append(errs, m.validate()...)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return m, nil
}

// checkShape walks the YAML against the Go type, refusing unknown fields and
// values of the wrong kind, and records the line of every field.
func (m *Matrix) checkShape(n *yaml.Node, t reflect.Type, path string) []error {
	m.positions[path] = n.Line
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return []error{m.errAt(n.Line, path, "must be a mapping")}
		}
		fields := yamlFields(t)
		var errs []error
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, value := n.Content[i], n.Content[i+1]
			f, ok := fields[key.Value]
			if !ok {
				errs = append(errs, m.errAt(key.Line, join(path, key.Value), unknownField+knownFields(t)+")"))
				continue
			}
			errs = append(errs, m.checkShape(value, f.Type, join(path, key.Value))...)
		}
		return errs
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return []error{m.errAt(n.Line, path, "must be a list")}
		}
		var errs []error
		for i, item := range n.Content {
			errs = append(errs, m.checkShape(item, t.Elem(), path+"["+strconv.Itoa(i)+"]")...)
		}
		return errs
	case reflect.String:
		if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
			return []error{m.errAt(n.Line, path, "must be a string")}
		}
	}
	return nil
}

var (
	labelValue = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$`)
	imageTag   = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	imageRepo  = regexp.MustCompile(`^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._/-][a-z0-9]+)*)+$`)
)

func (m *Matrix) validate() []error {
	var errs []error
	required := func(path, value string) {
		if value == "" {
			errs = append(errs, m.errAt(m.line(path), path, "is required"))
		}
	}
	required("manifestsRepo", m.ManifestsRepo)
	if len(m.Applications) == 0 {
		errs = append(errs, m.errAt(m.line("applications"), "applications", "at least one application is required"))
	}
	if len(m.Versions) == 0 {
		errs = append(errs, m.errAt(m.line("versions"), "versions", "at least one version is required"))
	}
	if m.Namespace != "" {
		for _, msg := range validation.IsDNS1123Label(m.Namespace) {
			errs = append(errs, m.errAt(m.line("namespace"), "namespace", msg))
		}
	}
	// Object names: the ServiceAccount and Secrets the runs name must be able
	// to exist, or every TaskRun of the release fails after it is created.
	for _, f := range []struct{ path, name string }{
		{"serviceAccount", m.ServiceAccount}, {"credentials.git", m.Credentials.Git}, {"credentials.registry", m.Credentials.Registry},
	} {
		if f.name != "" {
			for _, msg := range validation.IsDNS1123Subdomain(f.name) {
				errs = append(errs, m.errAt(m.line(f.path), f.path, "must be a Kubernetes object name: "+msg))
			}
		}
	}
	errs = append(errs, m.checkVerbatim()...)

	seenApps := map[string]string{}
	for i, a := range m.Applications {
		p := "applications[" + strconv.Itoa(i) + "]"
		required(p+".name", a.Name)
		required(p+".repo", a.Repo)
		required(p+".image", a.Image)
		required(p+".manifests", a.Manifests)
		if a.Name != "" && !labelValue.MatchString(a.Name) {
			errs = append(errs, m.errAt(m.line(p+".name"), p+".name", "must be a valid label value (letters, digits, -_. ; at most 63)"))
		}
		if first, dup := seenApps[a.Name]; dup && a.Name != "" {
			errs = append(errs, m.errAt(m.line(p+".name"), p+".name", fmt.Sprintf("duplicate application %q (first at line %d)", a.Name, m.line(first))))
		} else {
			seenApps[a.Name] = p + ".name"
		}
		if a.Image != "" && !imageRepo.MatchString(a.Image) {
			errs = append(errs, m.errAt(m.line(p+".image"), p+".image", "must be an image repository without tag or digest, e.g. ghcr.io/org/app"))
		}
	}
	seenVersions := map[string]string{}
	for i, v := range m.Versions {
		p := "versions[" + strconv.Itoa(i) + "]"
		required(p+".name", v.Name)
		required(p+".revision", v.Revision)
		required(p+".manifestsBranch", v.ManifestsBranch)
		if v.Name != "" && (!labelValue.MatchString(v.Name) || !imageTag.MatchString(v.Name)) {
			errs = append(errs, m.errAt(m.line(p+".name"), p+".name", "must be usable as a label value and image tag (letters, digits, -_. ; at most 63)"))
		}
		if first, dup := seenVersions[v.Name]; dup && v.Name != "" {
			errs = append(errs, m.errAt(m.line(p+".name"), p+".name", fmt.Sprintf("duplicate version %q (first at line %d)", v.Name, m.line(first))))
		} else {
			seenVersions[v.Name] = p + ".name"
		}
	}
	return errs
}

// checkVerbatim refuses "$(" in every value that becomes a param. Tekton
// expands $(...) wherever a param's value lands (context variables such as
// $(context.pipelineRun.name) after the params are substituted, and it
// refuses result references outright), so such a value would not reach the
// Tasks as written in the matrix.
func (m *Matrix) checkVerbatim() []error {
	var errs []error
	check := func(path, value string) {
		if strings.Contains(value, "$(") {
			errs = append(errs, m.errAt(m.line(path), path, `must not contain "$(": Tekton would expand it as a variable, so the Tasks would not get the value as written`))
		}
	}
	check("manifestsRepo", m.ManifestsRepo)
	check("tools.builder", m.Tools.Builder)
	check("tools.git", m.Tools.Git)
	for i, a := range m.Applications {
		p := "applications[" + strconv.Itoa(i) + "]"
		check(p+".repo", a.Repo)
		check(p+".context", a.Context)
		check(p+".dockerfile", a.Dockerfile)
		check(p+".manifests", a.Manifests)
	}
	for i, v := range m.Versions {
		p := "versions[" + strconv.Itoa(i) + "]"
		check(p+".revision", v.Revision)
		check(p+".manifestsBranch", v.ManifestsBranch)
	}
	return errs
}

// line is the line of path, or of its nearest recorded ancestor (a missing
// field is reported at the mapping that lacks it).
func (m *Matrix) line(path string) int {
	for {
		if l, ok := m.positions[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			return m.positions[""]
		}
		path = path[:i]
	}
}

func (m *Matrix) errAt(line int, field, msg string) *FieldError {
	return &FieldError{File: m.file, Line: line, Field: field, Msg: msg}
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

func yamlFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name != "" && name != "-" {
			out[name] = f
		}
	}
	return out
}

func knownFields(t reflect.Type) string {
	var names []string
	for i := 0; i < t.NumField(); i++ {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
}

const unknownField = "unknown field (known: "

func onlyUnknownFields(errs []error) bool {
	for _, err := range errs {
		var fe *FieldError
		if !errors.As(err, &fe) || !strings.HasPrefix(fe.Msg, unknownField) {
			return false
		}
	}
	return true
}

var yamlLine = regexp.MustCompile(`line (\d+): `)

// yamlError moves the line the YAML library names into the FieldError.
func yamlError(file string, err error) *FieldError {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n  ")
	line := 1
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = strings.Replace(msg, m[0], "", 1)
	}
	return &FieldError{File: file, Line: line, Msg: msg}
}
