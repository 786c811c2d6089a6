// Package schema generates the JSON Schemas (draft 2020-12) of the provider
// contract's documents from their Go types in internal/contract: the
// properties and their types follow encoding/json (json tags; a field that
// encoding/json may leave out, through omitempty or omitzero, is not
// required), and the descriptions are the Go doc comments without their
// markers. `go run ./internal/contract/gen` (part of `make manifests`) writes
// them to tasks/schema; never edit those files by hand.
//
// The schemas describe structure and types only. Limits on values (lengths,
// patterns) are the API server's business when the user's resource is
// admitted, and some do not hold for the documents anyway (images are pinned
// to digests after admission). Objects stay open (no additionalProperties):
// fields added within a contract version must not break a provider that
// validates with an older copy.
package schema

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/contract"
)

// Dialect is the JSON Schema version of the generated schemas.
const Dialect = "https://json-schema.org/draft/2020-12/schema"

// Document is one document of the contract and the file its schema goes to.
type Document struct {
	File string
	Type reflect.Type
}

// Documents are the contract's documents, each with a schema of its own.
var Documents = []Document{
	{"resource.schema.json", reflect.TypeFor[contract.Resource]()},
	{"provider-config.schema.json", reflect.TypeFor[contract.ProviderConfig]()},
	{"compile-config.schema.json", reflect.TypeFor[contract.CompileConfig]()},
	{"output.schema.json", reflect.TypeFor[contract.Output]()},
}

// contractVersionField is the property of every input document that carries
// contract.Version; its schema admits that version only.
const contractVersionField = "contractVersion"

// Write writes the schema of every Document into dir.
func Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, doc := range Documents {
		data, err := Generate(doc.Type)
		if err != nil {
			return fmt.Errorf("%s: %w", doc.File, err)
		}
		if err := os.WriteFile(filepath.Join(dir, doc.File), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Generate is the schema of the document of Go type t, as indented JSON.
func Generate(t reflect.Type) ([]byte, error) {
	g := &generator{docs: map[string]*packageDocs{}, defs: map[string]*Schema{}, defTypes: map[string]reflect.Type{}}
	root, err := g.structSchema(t)
	if err != nil {
		return nil, err
	}
	root.Dialect = Dialect
	root.Title = t.Name()
	root.Description = g.typeDoc(t)
	if g.err != nil {
		return nil, g.err
	}
	if p := root.Properties.get(contractVersionField); p != nil {
		p.Const = contract.Version
	}
	for _, name := range slices.Sorted(maps.Keys(g.defs)) {
		root.Defs = append(root.Defs, Property{Name: name, Schema: g.defs[name]})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Schema is the subset of JSON Schema the generator emits, its keywords in
// the order they are written.
type Schema struct {
	Dialect              string     `json:"$schema,omitempty"`
	Ref                  string     `json:"$ref,omitempty"`
	Title                string     `json:"title,omitempty"`
	Description          string     `json:"description,omitempty"`
	Type                 any        `json:"type,omitempty"` // a string, or a list of them
	Const                string     `json:"const,omitempty"`
	Enum                 []string   `json:"enum,omitempty"`
	Format               string     `json:"format,omitempty"`
	Minimum              *int       `json:"minimum,omitempty"`
	Properties           Properties `json:"properties,omitempty"`
	Required             []string   `json:"required,omitempty"`
	Items                *Schema    `json:"items,omitempty"`
	AdditionalProperties *Schema    `json:"additionalProperties,omitempty"`
	AnyOf                []*Schema  `json:"anyOf,omitempty"`
	Defs                 Properties `json:"$defs,omitempty"`
}

// Property is one named member of an object keyword.
type Property struct {
	Name   string
	Schema *Schema
}

// Properties is a JSON object written in the order of its members.
type Properties []Property

func (ps Properties) get(name string) *Schema {
	for _, p := range ps {
		if p.Name == name {
			return p.Schema
		}
	}
	return nil
}

// MarshalJSON writes the members in order.
func (ps Properties) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	buf.WriteByte('{')
	for i, p := range ps {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := enc.Encode(p.Name); err != nil {
			return nil, err
		}
		buf.WriteByte(':')
		if err := enc.Encode(p.Schema); err != nil {
			return nil, err
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

type generator struct {
	err      error                   // the first error reading doc comments
	docs     map[string]*packageDocs // by package path
	defs     map[string]*Schema      // named struct types, by name
	defTypes map[string]reflect.Type
}

var (
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	apiextensionsJSON   = reflect.TypeFor[apiextensionsv1.JSON]()
	metav1TimeType      = reflect.TypeFor[metav1.Time]()
	metav1DurationType  = reflect.TypeFor[metav1.Duration]()
	jsonMarshalerType   = reflect.TypeFor[json.Marshaler]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

func (g *generator) fail(err error) {
	if g.err == nil {
		g.err = err
	}
}

// typeSchema is the schema of a value of type t. nullable: encoding/json
// writes null for its zero value (a nil slice, map or pointer that
// omitempty does not leave out).
func (g *generator) typeSchema(t reflect.Type, nullable bool) (*Schema, error) {
	switch t {
	case rawMessageType, apiextensionsJSON:
		return &Schema{}, nil // any JSON value
	case metav1TimeType:
		return &Schema{Type: "string", Format: "date-time"}, nil
	case metav1DurationType:
		return &Schema{Type: "string"}, nil
	}
	if custom(t) {
		return nil, fmt.Errorf("type %s encodes itself to JSON: teach internal/contract/schema its shape", t)
	}
	var s *Schema
	switch t.Kind() {
	case reflect.Bool:
		s = &Schema{Type: "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		s = &Schema{Type: "integer"}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		s = &Schema{Type: "integer", Minimum: new(int)}
	case reflect.Float32, reflect.Float64:
		s = &Schema{Type: "number"}
	case reflect.String:
		s = &Schema{Type: "string", Enum: g.enum(g.typeDocRaw(t))}
	case reflect.Interface:
		return &Schema{}, nil
	case reflect.Pointer:
		elem, err := g.typeSchema(t.Elem(), false)
		if err != nil {
			return nil, err
		}
		if !nullable {
			return elem, nil
		}
		if elem.Ref != "" {
			return &Schema{AnyOf: []*Schema{elem, {Type: "null"}}}, nil
		}
		return withNull(elem), nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			s = &Schema{Type: "string", Format: "byte"} // base64
			break
		}
		items, err := g.typeSchema(t.Elem(), t.Elem().Kind() == reflect.Pointer)
		if err != nil {
			return nil, err
		}
		s = &Schema{Type: "array", Items: items}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("map %s: only string keys are supported", t)
		}
		values, err := g.typeSchema(t.Elem(), t.Elem().Kind() == reflect.Pointer)
		if err != nil {
			return nil, err
		}
		s = &Schema{Type: "object", AdditionalProperties: values}
	case reflect.Struct:
		return g.structRef(t)
	default:
		return nil, fmt.Errorf("type %s (%s) has no JSON Schema", t, t.Kind())
	}
	if nullable && (t.Kind() == reflect.Slice || t.Kind() == reflect.Map) {
		s = withNull(s)
	}
	return s, nil
}

func withNull(s *Schema) *Schema {
	if typ, ok := s.Type.(string); ok {
		s.Type = []string{typ, "null"}
	}
	return s
}

// custom reports whether t chooses its own JSON form.
func custom(t reflect.Type) bool {
	for _, i := range []reflect.Type{jsonMarshalerType, textMarshalerType, jsonUnmarshalerType} {
		if t.Implements(i) || reflect.PointerTo(t).Implements(i) {
			return true
		}
	}
	return false
}

// structRef is a reference to the definition of named struct type t,
// adding the definition on first use.
func (g *generator) structRef(t reflect.Type) (*Schema, error) {
	if t.Name() == "" {
		return g.structSchema(t)
	}
	ref := &Schema{Ref: "#/$defs/" + t.Name()}
	if seen, ok := g.defTypes[t.Name()]; ok {
		if seen != t {
			return nil, fmt.Errorf("two types named %s: %s and %s", t.Name(), seen, t)
		}
		return ref, nil
	}
	g.defTypes[t.Name()] = t
	def, err := g.structSchema(t)
	if err != nil {
		return nil, err
	}
	def.Description = g.typeDoc(t)
	g.defs[t.Name()] = def
	return ref, nil
}

// structSchema is the object schema of struct type t, with the fields
// encoding/json writes.
func (g *generator) structSchema(t reflect.Type) (*Schema, error) {
	s := &Schema{Type: "object"}
	if err := g.addFields(s, t); err != nil {
		return nil, err
	}
	return s, nil
}

func (g *generator) addFields(s *Schema, t reflect.Type) error {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, hasTag := f.Tag.Lookup("json")
		name, opts, _ := strings.Cut(tag, ",")
		if tag == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			// encoding/json promotes the fields of an embedded struct.
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if err := g.addFields(s, ft); err != nil {
					return err
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if !hasTag || name == "" {
			name = f.Name
		}
		raw := g.fieldDocRaw(t, f.Name)
		options := strings.Split(opts, ",")
		if slices.Contains(options, "string") {
			return fmt.Errorf("%s.%s: the ,string option is not supported", t, f.Name)
		}
		omitted := slices.Contains(options, "omitzero") || slices.Contains(options, "omitempty") && omitsEmpty(f.Type)
		if omittedField(raw) {
			if !omitted {
				return fmt.Errorf("%s.%s: %s needs a field encoding/json can leave out (omitempty), which the operator leaves empty", t, f.Name, OmitMarker)
			}
			continue
		}
		prop, err := g.typeSchema(f.Type, !omitted)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", t, f.Name, err)
		}
		prop.Description = description(raw) // prop is the field's own: never a definition
		if enum := g.enum(raw); enum != nil {
			prop.Enum = enum
		}
		if s.Properties.get(name) != nil {
			return fmt.Errorf("%s: two fields are named %q in JSON", t, name)
		}
		s.Properties = append(s.Properties, Property{Name: name, Schema: prop})
		if !omitted {
			s.Required = append(s.Required, name)
		}
	}
	return nil
}

// omitsEmpty reports whether omitempty can leave out a value of type t:
// encoding/json never leaves out a struct.
func omitsEmpty(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct:
		return false
	case reflect.Array:
		return t.Len() == 0
	}
	return true
}

// enum is the values of a +kubebuilder:validation:Enum marker in a raw doc
// comment; a quoted value (`""`, the empty string) is unquoted, as
// controller-gen reads it.
func (g *generator) enum(raw string) []string {
	for _, line := range strings.Split(raw, "\n") {
		if values, ok := strings.CutPrefix(strings.TrimSpace(line), "+kubebuilder:validation:Enum="); ok {
			enum := strings.Split(values, ";")
			for i, v := range enum {
				if unquoted, err := strconv.Unquote(v); err == nil {
					enum[i] = unquoted
				}
			}
			return enum
		}
	}
	return nil
}

// OmitMarker in a field's doc comment keeps the field out of the schemas:
// the operator never puts it in a document (a Provider's pod settings,
// which are the operator's business, not the provider's).
const OmitMarker = "+contract:omit"

// omittedField says whether a field's raw doc comment carries OmitMarker.
func omittedField(raw string) bool {
	for _, line := range strings.Split(raw, "\n") {
		if strings.TrimSpace(line) == OmitMarker {
			return true
		}
	}
	return false
}

// description is a doc comment without its markers (lines starting with +)
// and TODOs, each paragraph on one line.
func description(raw string) string {
	var paragraphs []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			paragraphs = append(paragraphs, strings.Join(cur, " "))
			cur = nil
		}
	}
	for _, line := range strings.Split(raw, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
			flush()
		case strings.HasPrefix(line, "+"), strings.HasPrefix(line, "TODO"):
		default:
			cur = append(cur, line)
		}
	}
	flush()
	return strings.Join(paragraphs, "\n\n")
}

func (g *generator) typeDoc(t reflect.Type) string { return description(g.typeDocRaw(t)) }

func (g *generator) typeDocRaw(t reflect.Type) string {
	if t.PkgPath() == "" || t.Name() == "" {
		return ""
	}
	return g.packageDocs(t.PkgPath()).types[t.Name()]
}

func (g *generator) fieldDocRaw(t reflect.Type, field string) string {
	if t.PkgPath() == "" || t.Name() == "" {
		return ""
	}
	return g.packageDocs(t.PkgPath()).fields[t.Name()+"."+field]
}

// packageDocs are the doc comments of a package's types and their fields.
type packageDocs struct {
	types  map[string]string
	fields map[string]string // "Type.Field"
}

// packageDocs reads the doc comments of package path from its source,
// found as the go command finds it (so the generator runs inside the
// module). A package whose source cannot be read makes Generate fail.
func (g *generator) packageDocs(path string) *packageDocs {
	if d, ok := g.docs[path]; ok {
		return d
	}
	d := &packageDocs{types: map[string]string{}, fields: map[string]string{}}
	g.docs[path] = d
	wd, err := os.Getwd()
	if err != nil {
		g.fail(err)
		return d
	}
	pkg, err := build.Import(path, wd, build.FindOnly)
	if err != nil {
		g.fail(fmt.Errorf("finding the source of %s for its doc comments: %w", path, err))
		return d
	}
	files, err := filepath.Glob(filepath.Join(pkg.Dir, "*.go"))
	if err != nil || len(files) == 0 {
		g.fail(fmt.Errorf("no Go source of %s in %s", path, pkg.Dir))
		return d
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			g.fail(err)
			return d
		}
		for _, decl := range file.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.TYPE {
				continue
			}
			for _, spec := range gen.Specs {
				ts := spec.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil && len(gen.Specs) == 1 {
					doc = gen.Doc
				}
				d.types[ts.Name.Name] = doc.Text()
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, field := range st.Fields.List {
					text := field.Doc.Text()
					if text == "" {
						text = field.Comment.Text()
					}
					for _, n := range field.Names {
						d.fields[ts.Name.Name+"."+n.Name] = text
					}
				}
			}
		}
	}
	return d
}
