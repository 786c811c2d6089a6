package artifactpath

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// A compiled filter evaluates to true, false or an error, as go-bexpr's
// (*Evaluator).Evaluate does; kfp-operator selects the artifact only on
// true without an error. An error ends the evaluation wherever it arises:
// under not, and, or, any and all alike.

type expr interface {
	eval(metadata map[string]any, scope []local) (bool, error)
}

type orExpr struct{ l, r expr }
type andExpr struct{ l, r expr }
type notExpr struct{ x expr }

type matchOp int

const (
	opEqual matchOp = iota
	opNotEqual
	opIn // also contains
	opNotIn
	opIsEmpty
	opIsNotEmpty
	opMatches
	opNotMatches
	opIsNil
	opIsNotNil
)

// absent is what an operator yields for a key missing from a map nested
// in the metadata (a missing top-level key is an error).
func (o matchOp) absent() bool {
	switch o {
	case opNotEqual, opNotIn, opIsEmpty, opNotMatches, opIsNil:
		return true
	}
	return false
}

type matchExpr struct {
	sel   selector
	op    matchOp
	value *string // nil for is (not) empty / nil
}

// selector is a path into the metadata: its keys and list indices.
type selector struct {
	path    []string
	pointer bool // written as a JSON pointer
}

// String is a selector's text as a value: the steps joined by "." (by "/"
// for a JSON pointer, without the leading "/").
func (s selector) String() string {
	if s.pointer {
		return strings.Join(s.path, "/")
	}
	return strings.Join(s.path, ".")
}

type collectionExpr struct {
	all   bool // all, else any
	sel   selector
	bind  binding
	inner expr
}

// binding names what any/all bind: plain (NAME), index and value (INDEX,
// VALUE), index alone (INDEX, _) or value alone (_, VALUE).
type binding struct {
	plain, index, value string
	both                bool
}

// local is a name any/all bound: to a path into the metadata, or (a map's
// key, a list's index) to a value.
type local struct {
	name  string
	path  []string
	value any
}

func (e *orExpr) eval(m map[string]any, scope []local) (bool, error) {
	if ok, err := e.l.eval(m, scope); err != nil || ok {
		return ok, err
	}
	return e.r.eval(m, scope)
}

func (e *andExpr) eval(m map[string]any, scope []local) (bool, error) {
	if ok, err := e.l.eval(m, scope); err != nil || !ok {
		return ok, err
	}
	return e.r.eval(m, scope)
}

func (e *notExpr) eval(m map[string]any, scope []local) (bool, error) {
	ok, err := e.x.eval(m, scope)
	return !ok, err
}

var errNotFound = errors.New("no such key")

// lookup resolves a selector's path: the value, and false for a key
// missing from a nested map.
func lookup(m map[string]any, path []string, scope []local) (any, bool, error) {
	for i := len(scope) - 1; i >= 0 && len(path) > 0; i-- {
		if path[0] != scope[i].name {
			continue
		}
		if scope[i].path == nil {
			if len(path) > 1 {
				return nil, false, fmt.Errorf("%s is a key or index: %s has no %s", path[0], path[0], strings.Join(path[1:], "."))
			}
			return scope[i].value, true, nil
		}
		path = append(append([]string(nil), scope[i].path...), path[1:]...)
	}
	v, err := get(m, path)
	if errors.Is(err, errNotFound) && len(path) > 1 {
		if parent, perr := get(m, path[:len(path)-1]); perr == nil && reflect.ValueOf(parent).Kind() == reflect.Map {
			return nil, false, nil
		}
	}
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

// get follows path from the metadata map: keys of maps, indices of lists.
func get(m map[string]any, path []string) (any, error) {
	cur := reflect.ValueOf(m)
	for i, step := range path {
		for cur.Kind() == reflect.Interface || cur.Kind() == reflect.Pointer {
			cur = cur.Elem()
		}
		switch cur.Kind() {
		case reflect.Map:
			if cur.Type().Key().Kind() != reflect.String {
				return nil, fmt.Errorf("%s: a map not keyed by strings", strings.Join(path[:i], "."))
			}
			v := cur.MapIndex(reflect.ValueOf(step).Convert(cur.Type().Key()))
			if !v.IsValid() {
				return nil, fmt.Errorf("%s: %w", strings.Join(path[:i+1], "."), errNotFound)
			}
			cur = v
		case reflect.Slice, reflect.Array:
			s := step
			if s == "" {
				s = "0"
			}
			n, err := strconv.ParseInt(s, 0, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %q is not a list index", strings.Join(path[:i], "."), step)
			}
			if n < 0 || n >= int64(cur.Len()) {
				return nil, fmt.Errorf("%s: index %d out of range (length %d)", strings.Join(path[:i], "."), n, cur.Len())
			}
			cur = cur.Index(int(n))
		default:
			return nil, fmt.Errorf("%s: %s is neither a map nor a list", strings.Join(path[:i+1], "."), cur.Kind())
		}
	}
	return cur.Interface(), nil
}

func (e *matchExpr) eval(m map[string]any, scope []local) (bool, error) {
	v, present, err := lookup(m, e.sel.path, scope)
	if err != nil {
		return false, err
	}
	if !present {
		return e.op.absent(), nil
	}
	if n, ok := v.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			v = i
		} else if f, err := n.Float64(); err == nil {
			v = f
		} else {
			return false, fmt.Errorf("number %s is neither an int nor a float", n)
		}
	}
	rv := reflect.Indirect(reflect.ValueOf(v))
	var ok bool
	switch e.op {
	case opEqual, opNotEqual:
		ok, err = equal(*e.value, rv)
	case opIn, opNotIn:
		ok, err = contains(*e.value, rv)
	case opIsEmpty, opIsNotEmpty:
		ok, err = empty(rv)
	case opMatches, opNotMatches:
		ok, err = matches(*e.value, rv)
	case opIsNil, opIsNotNil:
		ok, err = isNil(rv)
	}
	if err != nil {
		return false, err
	}
	switch e.op {
	case opNotEqual, opNotIn, opIsNotEmpty, opNotMatches, opIsNotNil:
		return !ok, nil
	}
	return ok, nil
}

// coerce reads a value's text as a value of kind k (as go-bexpr does:
// strconv, integers with base prefixes); other kinds take the text.
func coerce(raw string, k reflect.Kind) (any, error) {
	switch k {
	case reflect.Bool:
		return strconv.ParseBool(raw)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.ParseInt(raw, 0, 64)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.ParseUint(raw, 0, 64)
	case reflect.Float32:
		f, err := strconv.ParseFloat(raw, 32)
		return float32(f), err
	case reflect.Float64:
		return strconv.ParseFloat(raw, 64)
	}
	return raw, nil
}

// comparable says whether == can compare a value of kind k.
func comparable(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// same compares want (coerced to v's kind) with v.
func same(want any, v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Bool:
		return want.(bool) == v.Bool()
	case reflect.String:
		return want.(string) == v.String()
	case reflect.Float32:
		return want.(float32) == float32(v.Float())
	case reflect.Float64:
		return want.(float64) == v.Float()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return want.(int64) == v.Int()
	default:
		return want.(uint64) == v.Uint()
	}
}

func equal(raw string, v reflect.Value) (bool, error) {
	if !comparable(v.Kind()) {
		return false, fmt.Errorf("cannot compare a %s with ==", kindName(v))
	}
	want, err := coerce(raw, v.Kind())
	if err != nil {
		return false, fmt.Errorf("%q is not a %s: %w", raw, v.Kind(), err)
	}
	return same(want, v), nil
}

func contains(raw string, v reflect.Value) (bool, error) {
	if _, err := coerce(raw, v.Kind()); err != nil {
		return false, err
	}
	switch v.Kind() {
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return false, fmt.Errorf("in: a map not keyed by strings")
		}
		return v.MapIndex(reflect.ValueOf(raw).Convert(v.Type().Key())).IsValid(), nil
	case reflect.String:
		return strings.Contains(v.String(), raw), nil
	case reflect.Slice, reflect.Array:
	default:
		return false, fmt.Errorf("in/contains needs a list, a map or a string, not a %s", kindName(v))
	}
	if elem := derefType(v.Type().Elem()); elem.Kind() != reflect.Interface {
		want, err := coerce(raw, elem.Kind())
		if err != nil {
			return false, err
		}
		if !comparable(elem.Kind()) {
			return false, fmt.Errorf("in: cannot compare with a list of %s", elem.Kind())
		}
		for i := 0; i < v.Len(); i++ {
			if same(want, reflect.Indirect(v.Index(i))) {
				return true, nil
			}
		}
		return false, nil
	}
	// A list of mixed values (as JSON decodes): each compared in its own
	// kind, skipping those the text does not read as.
	for i := 0; i < v.Len(); i++ {
		item := v.Index(i).Elem()
		if !item.IsValid() {
			// go-bexpr panics on a null in the list; no match here.
			return false, errors.New("in: the list holds a null")
		}
		k := derefType(item.Type()).Kind()
		want, err := coerce(raw, k)
		if err != nil {
			if errors.Is(err, strconv.ErrSyntax) {
				continue
			}
			return false, err
		}
		if !comparable(k) {
			return false, fmt.Errorf("in: cannot compare with a %s in the list", k)
		}
		if same(want, reflect.Indirect(item)) {
			return true, nil
		}
	}
	return false, nil
}

func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func empty(v reflect.Value) (bool, error) {
	switch v.Kind() {
	case reflect.Map, reflect.Slice, reflect.Array, reflect.Chan, reflect.String:
		return v.Len() == 0, nil
	}
	return false, fmt.Errorf("is empty needs a list, a map or a string, not a %s", kindName(v))
}

func isNil(v reflect.Value) (bool, error) {
	switch v.Kind() {
	case reflect.Invalid:
		return true, nil
	case reflect.Map, reflect.Slice, reflect.Chan, reflect.Pointer:
		return v.IsNil(), nil
	case reflect.Struct:
		return false, nil
	}
	return false, fmt.Errorf("is nil needs a list or a map, not a %s", kindName(v))
}

var bytesType = reflect.TypeOf([]byte(nil))

func matches(raw string, v reflect.Value) (bool, error) {
	if !v.IsValid() || !v.Type().ConvertibleTo(bytesType) {
		// (go-bexpr panics on a null here; no match either way.)
		return false, fmt.Errorf("matches needs a string, not a %s", kindName(v))
	}
	re, err := regexp.Compile(raw)
	if err != nil {
		return false, fmt.Errorf("matches: %w", err)
	}
	return re.Match(v.Convert(bytesType).Bytes()), nil
}

func kindName(v reflect.Value) string {
	if !v.IsValid() {
		return "null"
	}
	return v.Kind().String()
}

func (e *collectionExpr) eval(m map[string]any, scope []local) (bool, error) {
	v, present, err := lookup(m, e.sel.path, scope)
	if err != nil {
		return false, err
	}
	if !present {
		return e.all, nil
	}
	rv := reflect.ValueOf(v)
	var keys []string
	switch rv.Kind() {
	case reflect.Map:
		if rv.Type().Key() != reflect.TypeOf("") {
			return false, errors.New("any/all go over maps keyed by strings only")
		}
		for _, k := range rv.MapKeys() {
			keys = append(keys, k.String())
		}
		// go-bexpr goes over a map in Go's random order, which only
		// matters when some entries fail (an error) and others decide.
		sort.Strings(keys)
	case reflect.Slice, reflect.Array:
	default:
		return false, fmt.Errorf("%s is not a list or a map", e.sel)
	}
	for i := 0; i < rv.Len(); i++ {
		if e.bind.both && e.bind.index == e.bind.value {
			return false, fmt.Errorf("%q names both the index and the value", e.bind.index)
		}
		inner := append([]local(nil), scope...)
		bindTo := func(name string, path []string, value any) {
			if name != "" {
				inner = append(inner, local{name: name, path: path, value: value})
			}
		}
		if keys != nil {
			bindTo(e.bind.plain, nil, keys[i])
			bindTo(e.bind.index, nil, keys[i])
			bindTo(e.bind.value, append(append([]string(nil), e.sel.path...), keys[i]), nil)
		} else {
			bindTo(e.bind.index, nil, i)
			at := append(append([]string(nil), e.sel.path...), strconv.Itoa(i))
			bindTo(e.bind.plain, at, nil)
			bindTo(e.bind.value, at, nil)
		}
		ok, err := e.inner.eval(m, inner)
		if err != nil {
			return false, err
		}
		if ok != e.all {
			return ok, nil
		}
	}
	return e.all, nil
}
