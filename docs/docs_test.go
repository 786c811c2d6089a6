// Package docs holds the project's documentation pages; its tests keep them
// honest: every relative link and #fragment resolves, the configuration
// table lists exactly the operator's options, and the README stays short.
package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"sigs.k8s.io/yaml"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/operator"
)

// root is the repository root, relative to this package's directory.
const root = ".."

// markdownFiles are the pages whose links are checked, relative to root.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "tasks/README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

var (
	fence      = regexp.MustCompile("^\\s*(```|~~~)")
	codeSpan   = regexp.MustCompile("`+[^`]*`+")
	inlineLink = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	heading    = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	linkText   = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	htmlTag    = regexp.MustCompile(`<[^>]+>`)
)

// prose returns the lines of a Markdown document outside fenced code blocks,
// keyed by line number (1-based).
func prose(doc string) map[int]string {
	lines := map[int]string{}
	inFence := false
	for i, line := range strings.Split(doc, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if !inFence {
			lines[i+1] = line
		}
	}
	return lines
}

// anchor is GitHub's anchor for a heading's text: the rendered text lower
// case, with every character but letters, marks, digits, connector
// punctuation ('_'), '-' and spaces removed, and spaces turned into '-'.
func anchor(text string) string {
	text = linkText.ReplaceAllString(text, "$1")
	text = htmlTag.ReplaceAllString(text, "")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-', unicode.IsLetter(r), unicode.IsMark(r), unicode.IsDigit(r), unicode.Is(unicode.Pc, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the heading anchors of a Markdown document, with GitHub's
// -1, -2 suffixes for repeated headings.
func anchors(doc string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	lines := prose(doc)
	nums := make([]int, 0, len(lines))
	for n := range lines {
		nums = append(nums, n)
	}
	sort.Ints(nums)
	for _, n := range nums {
		m := heading.FindStringSubmatch(lines[n])
		if m == nil {
			continue
		}
		a := anchor(m[2])
		if c := seen[a]; c > 0 {
			out[a+"-"+strconv.Itoa(c)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

func TestAnchor(t *testing.T) {
	for text, want := range map[string]string{
		"Documents: inputs and output":                  "documents-inputs-and-output",
		"`contractVersion`":                             "contractversion",
		"Provider services (kfp-operator's HTTP API)":   "provider-services-kfp-operators-http-api",
		"kfp-operator's manifests: `v1alpha6`":          "kfp-operators-manifests-v1alpha6",
		"`/events`: completions from provider services": "events-completions-from-provider-services",
		"Operations in flight: the `Queued` state":      "operations-in-flight-the-queued-state",
		"The API: `pipelines.kubeflow.org/v1beta1`":     "the-api-pipelineskubefloworgv1beta1",
		"`make demo`: the main job":                     "make-demo-the-main-job",
	} {
		if got := anchor(text); got != want {
			t.Errorf("anchor(%q) = %q, want %q", text, got, want)
		}
	}
	got := anchors("# A\n```\n# not a heading\n```\n## A\n### B!\n")
	for _, want := range []string{"a", "a-1", "b"} {
		if !got[want] {
			t.Errorf("anchors: no %q in %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Error("a # line in a code block is not a heading")
	}
}

// TestLinks checks that every relative link in README.md, docs/**/*.md and
// tasks/README.md names an existing file, and that every #fragment names a
// heading of the page it points into.
func TestLinks(t *testing.T) {
	for _, file := range markdownFiles(t) {
		data, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		links := 0
		for n, line := range prose(string(data)) {
			line = codeSpan.ReplaceAllString(line, "")
			for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				path, fragment, _ := strings.Cut(target, "#")
				resolved := filepath.Join(root, filepath.Dir(file), filepath.FromSlash(path))
				if path == "" {
					resolved = filepath.Join(root, file)
				}
				info, err := os.Stat(resolved)
				if err != nil {
					t.Errorf("%s:%d: link %q: no such file %s", file, n, target, resolved)
					continue
				}
				if fragment == "" {
					continue
				}
				if info.IsDir() || !strings.HasSuffix(resolved, ".md") {
					t.Errorf("%s:%d: link %q: a fragment into something that is not a Markdown page", file, n, target)
					continue
				}
				page, err := os.ReadFile(resolved)
				if err != nil {
					t.Fatal(err)
				}
				if !anchors(string(page))[fragment] {
					t.Errorf("%s:%d: link %q: %s has no heading with anchor #%s", file, n, target, path, fragment)
				}
			}
		}
		if file != "tasks/README.md" && links == 0 {
			t.Errorf("%s: no relative links found; is the link pattern still right?", file)
		}
	}
}

// TestREADME keeps the README a short entry point: at most 150 lines, with
// the two set-up commands (CI runs the test command the README gives).
func TestREADME(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > 150 {
		t.Errorf("README.md has %d lines; keep it at most 150 and move detail to docs/", n)
	}
	for _, cmd := range []string{"\nmake demo   # ", "\nmake test   # "} {
		if !strings.Contains(string(data), cmd) {
			t.Errorf("README.md's set-up block lost %q", strings.TrimSpace(cmd))
		}
	}
}

// configKeys lists the configuration file's keys by reflection over the
// json tags of operator.Config: nested structs give dotted keys; a field
// whose type encodes itself (a Duration) or a list is one key. It maps each
// key to its Go field path (e.g. ConversionWebhook.Port).
func configKeys(t reflect.Type, prefix, goPrefix string, out map[string]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		key, goPath := prefix+name, goPrefix+f.Name
		ft := f.Type
		if ft.Kind() == reflect.Struct && !reflect.PointerTo(ft).Implements(reflect.TypeFor[interface{ UnmarshalJSON([]byte) error }]()) {
			configKeys(ft, key+".", goPath+".", out)
			continue
		}
		out[key] = goPath
	}
}

// flagFields parses cmd/operator/config.go's bind function: each flag it
// registers and the Go field path of operator.Config it sets (the &cfg.X
// argument of fs.XxxVar, or the cfg.X a fs.Func closure sets). A trailing
// .Duration (a metav1.Duration's) is dropped.
func flagFields(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, filepath.Join(root, "cmd", "operator", "config.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var bind *ast.FuncDecl
	for _, d := range file.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "bind" {
			bind = fn
		}
	}
	if bind == nil {
		t.Fatal("cmd/operator/config.go has no func bind")
	}
	cfgPath := func(e ast.Expr) string {
		var parts []string
		for {
			switch x := e.(type) {
			case *ast.SelectorExpr:
				parts = append([]string{x.Sel.Name}, parts...)
				e = x.X
				continue
			case *ast.Ident:
				if x.Name != "cfg" {
					return ""
				}
				path := strings.Join(parts, ".")
				return strings.TrimSuffix(path, ".Duration")
			}
			return ""
		}
	}
	out := map[string]string{}
	ast.Inspect(bind.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || len(call.Args) < 2 {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "fs" {
			return true
		}
		nameArg, target := call.Args[0], ast.Expr(nil)
		if strings.HasSuffix(sel.Sel.Name, "Var") {
			nameArg = call.Args[1]
			if u, ok := call.Args[0].(*ast.UnaryExpr); ok && u.Op == token.AND {
				target = u.X
			} else {
				target = call.Args[0]
			}
		}
		lit, ok := nameArg.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			t.Errorf("config.go:%d: a flag whose name is not a string literal", fset.Position(call.Pos()).Line)
			return true
		}
		name, _ := strconv.Unquote(lit.Value)
		path := ""
		if target != nil {
			path = cfgPath(target)
		} else if len(call.Args) == 3 {
			// fs.Func(name, usage, func(v string) error { ... cfg.X ... })
			ast.Inspect(call.Args[2], func(n ast.Node) bool {
				if s, ok := n.(*ast.SelectorExpr); ok && path == "" {
					if p := cfgPath(s); p != "" {
						path = p
					}
				}
				return path == ""
			})
		}
		if name == "config" {
			return true // the configuration file itself
		}
		if path == "" {
			t.Errorf("config.go:%d: flag --%s sets no cfg field that the test can see", fset.Position(call.Pos()).Line, name)
		}
		out[name] = path
		return true
	})
	return out
}

// configTable reads the option table of docs/configuration.md: each row's
// config key, flag and the chart values it names.
type configRow struct {
	key, flag string
	chart     []string
	line      int
}

func configTable(t *testing.T) []configRow {
	t.Helper()
	data, err := os.ReadFile("configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []configRow
	inTable := false
	cell := regexp.MustCompile("^`([^`]+)`$")
	ticked := regexp.MustCompile("`([^`]+)`")
	valuePath := regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9]*(\.[a-zA-Z][a-zA-Z0-9]*)*$`)
	for i, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "| Config key | Flag | Chart value |") {
			inTable = true
			continue
		}
		if !inTable {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		if strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) != 5 {
			t.Errorf("configuration.md:%d: want 5 cells, got %d", i+1, len(cells))
			continue
		}
		key, flag := cell.FindStringSubmatch(strings.TrimSpace(cells[0])), cell.FindStringSubmatch(strings.TrimSpace(cells[1]))
		if key == nil || flag == nil || !strings.HasPrefix(flag[1], "--") {
			t.Errorf("configuration.md:%d: the key and flag cells must be one `key` and one `--flag`", i+1)
			continue
		}
		row := configRow{key: key[1], flag: strings.TrimPrefix(flag[1], "--"), line: i + 1}
		for _, m := range ticked.FindAllStringSubmatch(cells[2], -1) {
			if valuePath.MatchString(m[1]) {
				row.chart = append(row.chart, m[1])
			}
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		t.Fatal("configuration.md has no table headed | Config key | Flag | Chart value | ...")
	}
	return rows
}

// TestConfigurationTable checks docs/configuration.md's option table against
// the operator: every key is a field of operator.Config (json tags, by
// reflection) and every field is in the table; every flag cmd/operator
// registers is in the table, on the row of the field it sets; every chart
// value named exists in the operator chart's values.yaml.
func TestConfigurationTable(t *testing.T) {
	keys := map[string]string{}
	configKeys(reflect.TypeFor[operator.Config](), "", "", keys)
	flags := flagFields(t)
	goToKey := map[string]string{}
	for k, p := range keys {
		goToKey[p] = k
	}

	valuesData, err := os.ReadFile(filepath.Join(root, "config", "helm", "kfp-tekton-operator", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(valuesData, &values); err != nil {
		t.Fatal(err)
	}
	hasValue := func(path string) bool {
		var v any = values
		for _, part := range strings.Split(path, ".") {
			m, ok := v.(map[string]any)
			if !ok {
				return false
			}
			if v, ok = m[part]; !ok {
				return false
			}
		}
		return true
	}

	tableKeys, tableFlags := map[string]bool{}, map[string]bool{}
	for _, row := range configTable(t) {
		if tableKeys[row.key] {
			t.Errorf("configuration.md:%d: %s listed twice", row.line, row.key)
		}
		tableKeys[row.key], tableFlags[row.flag] = true, true
		goPath, ok := keys[row.key]
		if !ok {
			t.Errorf("configuration.md:%d: %s is not a key of the operator's configuration (internal/controller/operator.Config)", row.line, row.key)
		}
		fieldOfFlag, ok := flags[row.flag]
		switch {
		case !ok:
			t.Errorf("configuration.md:%d: --%s is not a flag of cmd/operator", row.line, row.flag)
		case goPath != "" && fieldOfFlag != goPath:
			t.Errorf("configuration.md:%d: --%s sets %s (key %s), not %s", row.line, row.flag, fieldOfFlag, goToKey[fieldOfFlag], row.key)
		}
		for _, v := range row.chart {
			if !hasValue(v) {
				t.Errorf("configuration.md:%d: chart value %s is not in config/helm/kfp-tekton-operator/values.yaml", row.line, v)
			}
		}
	}
	for k := range keys {
		if !tableKeys[k] {
			t.Errorf("configuration key %s (operator.Config) is missing from docs/configuration.md's table", k)
		}
	}
	for f := range flags {
		if !tableFlags[f] {
			t.Errorf("flag --%s (cmd/operator/config.go) is missing from docs/configuration.md's table", f)
		}
	}
}
