// Package artifactpath reads the paths of a run spec's artifacts[] and
// selects by them a run's output artifacts, with the grammar and meaning
// kfp-operator gives them (sky-uk/kfp-operator: the pattern of
// apis/pipelines/hub/artifact.go, the selection of
// controllers/webhook/event_processor.go). The shapes follow its
// run-completion events: a run's components, each with named outputs, each
// a list of artifacts with a URI and metadata.
//
// A path is COMPONENT:ARTIFACT or COMPONENT:ARTIFACT:INDEX, either
// optionally followed by [FILTER]:
//   - COMPONENT (the pipeline's task) and ARTIFACT (its output artifact):
//     not empty, without ':', '[' or ']'.
//   - INDEX: decimal digits, at most 9223372036854775807; empty or left
//     out, 0. It picks the artifact at that position in the output's list,
//     counting all of them (the filter does not skip any).
//   - FILTER: not empty, without ':', '[' or ']' (kfp-operator refuses such
//     paths); a go-bexpr (github.com/hashicorp/go-bexpr v0.1.16) boolean
//     expression over the picked artifact's metadata, which must hold for
//     it to be selected.
//
// Every component named COMPONENT and every output of it named ARTIFACT is
// looked at, in order; Select returns the first artifact picked that has a
// URI and passes the filter (kfp-operator reports every one).
//
// The filter language (go-bexpr's):
//   - Conditions: SELECTOR == VALUE, SELECTOR != VALUE, SELECTOR contains
//     VALUE, VALUE in SELECTOR (a list's element, a map's key or a
//     substring), SELECTOR matches VALUE (a Go regular expression),
//     SELECTOR is empty, SELECTOR is nil, and the not forms: not contains,
//     not in, not matches, is not empty, is not nil.
//   - Joined with and, or, not and parentheses (and binds tighter than
//     or); any SELECTOR as NAME { FILTER } and all SELECTOR as NAME {
//     FILTER } go over a list's elements or a map's keys (as I, V: index
//     or key and element; I, _ or _, V for one of them). An any or all
//     must stand alone or in parentheses. There is no &&, ||, <, <=, > or
//     >=, and no '...' strings.
//   - SELECTOR: a key (a letter, then letters, digits, _ and /) followed by
//     .KEY or .N (a list index) steps, or a JSON pointer in double quotes,
//     "/key/0".
//   - VALUE: a number, -?(0|[1-9][0-9]*)(.[0-9]+)?, which a space, ) or the
//     end of the filter must follow; a string, "..." with Go's escapes or
//     `...`; or a bare word written like a selector (prod, true, a.b).
//     The value is text, read in the type of the metadata value it meets:
//     pushed == 1 holds for 1 and 1.0, blessed == true for the boolean,
//     stage == prod for "prod"; text that does not read as that type (1.5
//     for an integer, "x" for a number) is an error. A double-quoted value
//     that is a JSON pointer stands for its keys joined by "/" ("/a/b" is
//     a/b).
//   - Whitespace (space, tab, CR, LF) must separate words (and, or, not,
//     contains, in, is, matches, any, all, as) and is optional around ==,
//     != and parentheses.
//   - A key missing from the metadata itself is an error; one missing from
//     a map nested in it makes == false and != true (not in, not matches,
//     is empty and is nil true, the others false; any false, all true).
//   - Evaluation stops at the first error, anywhere (not and or do not
//     mask it), and the artifact is not selected.
//   - go-bexpr gives up parsing after 2,000,000 steps of its backtracking
//     parser, which about 7 levels of nested parentheses exceed: such a
//     filter does not compile.
//
// A FILTER go-bexpr cannot compile is a *FilterError of Parse; kfp-operator
// admits the path but never selects anything with it.
package artifactpath

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Component is one component (task) of a finished run and its outputs.
type Component struct {
	Name    string
	Outputs []Output
}

// Output is one named output artifact of a component: the artifacts it
// produced.
type Output struct {
	Name      string
	Artifacts []Artifact
}

// Artifact is one stored artifact.
type Artifact struct {
	URI      string
	Metadata map[string]any
}

// Path is a parsed artifact path.
type Path struct {
	Component string
	// Output is the path's ARTIFACT: the component's output.
	Output string
	Index  int
	// Filter is the FILTER text, "" for none.
	Filter string
	filter expr
}

// pattern is kfp-operator's ArtifactPathPattern (apis/pipelines/hub/
// artifact.go; the same in v1alpha6): what its API and provider services
// accept, given an INDEX that fits an int.
var pattern = regexp.MustCompile(`^([^\[\]:]+):([^\[\]:]+)(?::([0-9]*))?(?:\[([^\[\]:]+)\])?$`)

// Parse reads an artifact path, saying what is wrong with a malformed one.
// A filter go-bexpr cannot compile is a *FilterError (wrapped).
func Parse(path string) (Path, error) {
	m := pattern.FindStringSubmatch(path)
	if m == nil {
		return Path{}, fmt.Errorf("artifact path %q: %s", path, malformed(path))
	}
	p := Path{Component: m[1], Output: m[2], Filter: m[4]}
	if m[3] != "" {
		index, err := strconv.Atoi(m[3])
		if err != nil {
			return Path{}, fmt.Errorf("artifact path %q: INDEX %s is larger than %d", path, m[3], maxIndex)
		}
		p.Index = index
	}
	if p.Filter != "" {
		f, err := compileFilter(p.Filter)
		if err != nil {
			return Path{}, fmt.Errorf("artifact path %q: %w", path, err)
		}
		p.filter = f
	}
	return p, nil
}

const maxIndex = int(^uint(0) >> 1)

const grammarHint = "want COMPONENT:ARTIFACT or COMPONENT:ARTIFACT:INDEX, optionally followed by [FILTER]"

// malformed says what keeps a path from matching the pattern.
func malformed(path string) string {
	locator, filter, hasFilter := strings.Cut(path, "[")
	if hasFilter {
		switch body, closed := strings.CutSuffix(filter, "]"); {
		case !closed && strings.Contains(filter, "]"):
			return "nothing may follow the ] that ends FILTER"
		case !closed:
			return "FILTER has no closing ]"
		case body == "":
			return "FILTER is empty"
		case strings.ContainsAny(body, "[]"):
			return "FILTER must not contain [ or ]"
		case strings.Contains(body, ":"):
			return "FILTER must not contain ':' (kfp-operator refuses such a path)"
		}
	} else if strings.Contains(path, "]") {
		return "] without ["
	}
	parts := strings.Split(locator, ":")
	switch {
	case len(parts) < 2:
		return grammarHint + " (no ':' before FILTER)"
	case len(parts) > 3:
		return grammarHint + fmt.Sprintf(" (%d ':'-separated parts, at most 3)", len(parts))
	case parts[0] == "":
		return "COMPONENT is empty"
	case parts[1] == "":
		return "ARTIFACT is empty"
	case len(parts) == 3 && strings.Trim(parts[2], "0123456789") != "":
		return fmt.Sprintf("INDEX %q is not a number (digits only)", parts[2])
	}
	return grammarHint
}

// Select returns the URI the path names in a run's components, and whether
// there is one.
func Select(p Path, components []Component) (string, bool) {
	for _, c := range components {
		if c.Name != p.Component {
			continue
		}
		for _, o := range c.Outputs {
			if o.Name != p.Output || p.Index >= len(o.Artifacts) {
				continue
			}
			a := o.Artifacts[p.Index]
			if a.URI == "" || !p.Holds(a.Metadata) {
				continue
			}
			return a.URI, true
		}
	}
	return "", false
}

// Holds says whether the path's filter selects an artifact with this
// metadata: true without a filter.
func (p Path) Holds(metadata map[string]any) bool {
	if p.filter == nil {
		return p.Filter == ""
	}
	ok, err := p.filter.eval(metadata, nil)
	return err == nil && ok
}

// Explain evaluates the path's filter on metadata: whether it holds, and
// the error that stopped its evaluation if any.
func (p Path) Explain(metadata map[string]any) (bool, error) {
	if p.filter == nil {
		if p.Filter != "" {
			return false, fmt.Errorf("filter %q was not compiled (use Parse)", p.Filter)
		}
		return true, nil
	}
	return p.filter.eval(metadata, nil)
}
