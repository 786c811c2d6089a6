package artifactpath

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The filter language is go-bexpr v0.1.16's (kfp-operator compiles FILTER
// with bexpr.CreateEvaluator). Its parser is a PEG with ordered choice and
// backtracking; any error an action or predicate raises fails the whole
// parse, even on a branch later given up; and it stops after maxSteps
// expression visits. The grammar below mirrors that PEG rule for rule, so
// that the same filters parse, to the same expressions, within the same
// number of steps: a filter go-bexpr cannot compile is refused here, one it
// compiles is accepted with the same meaning.

// maxSteps is go-bexpr's default parse budget (bexpr.CreateEvaluator).
const maxSteps = 2000000

// FilterError says why a FILTER does not compile. kfp-operator admits such
// a path but never selects anything with it (its run-completion handler
// skips an artifact whose filter does not compile).
type FilterError struct {
	Filter string
	// Column is the 1-based column (in characters) of the filter where
	// the problem is.
	Column int
	Reason string
}

func (e *FilterError) Error() string {
	return fmt.Sprintf("filter %q: column %d: %s", e.Filter, e.Column, e.Reason)
}

// node kinds of the grammar.
type kind int

const (
	kLit    kind = iota // a literal text
	kClass              // one character of a class
	kAny                // any one character
	kRef                // another rule
	kSeq                // all of kids, in order
	kChoice             // the first of kids that matches
	kOpt                // kid, or nothing
	kStar               // kid, any number of times
	kPlus               // kid, at least once
	kAnd                // looks ahead: kid matches here (consumes nothing)
	kNot                // looks ahead: kid does not match here
	kFail               // an error: reaching it fails the parse with msg
	kLabel              // kid (a step of its own, as in the PEG)
	kAction             // kid, its value made by act
)

type gnode struct {
	kind kind
	text string // kLit: the text; kClass: what it is, for messages; kRef: the rule; kFail: the error
	in   func(rune) bool
	kids []*gnode
	rule *gnode
	act  func(p *fparser, start int, v any) any
}

func lit(s string) *gnode { return &gnode{kind: kLit, text: s} }
func class(what string, in func(rune) bool) *gnode {
	return &gnode{kind: kClass, text: what, in: in}
}
func ref(rule string) *gnode       { return &gnode{kind: kRef, text: rule} }
func seq(kids ...*gnode) *gnode    { return &gnode{kind: kSeq, kids: kids} }
func choice(kids ...*gnode) *gnode { return &gnode{kind: kChoice, kids: kids} }
func opt(kid *gnode) *gnode        { return &gnode{kind: kOpt, kids: []*gnode{kid}} }
func star(kid *gnode) *gnode       { return &gnode{kind: kStar, kids: []*gnode{kid}} }
func plus(kid *gnode) *gnode       { return &gnode{kind: kPlus, kids: []*gnode{kid}} }
func ahead(kid *gnode) *gnode      { return &gnode{kind: kAnd, kids: []*gnode{kid}} }
func notAhead(kid *gnode) *gnode   { return &gnode{kind: kNot, kids: []*gnode{kid}} }
func fail(msg string) *gnode       { return &gnode{kind: kFail, text: msg} }
func label(kid *gnode) *gnode      { return &gnode{kind: kLabel, kids: []*gnode{kid}} }
func anyChar() *gnode              { return &gnode{kind: kAny} }
func action(kid *gnode, act func(p *fparser, start int, v any) any) *gnode {
	return &gnode{kind: kAction, kids: []*gnode{kid}, act: act}
}

// value of the i-th element of a sequence's value.
func nth(v any, i int) any { return v.([]any)[i] }

// self is the action returning its expression's value.
func self(_ *fparser, _ int, v any) any { return v }

// constant is the action returning x.
func constant(x any) func(*fparser, int, any) any {
	return func(*fparser, int, any) any { return x }
}

var grammar = buildGrammar()

// ws is required whitespace; ows, optional whitespace.
func ws() *gnode  { return ref("_") }
func ows() *gnode { return opt(ref("_")) }

// op is an operator rule: a sequence of words or symbols, each maybe
// separated by whitespace as given.
func op(o matchOp, parts ...*gnode) *gnode { return action(seq(parts...), constant(o)) }

// buildGrammar puts together the rules of each part of the grammar and
// resolves their references.
func buildGrammar() map[string]*gnode {
	g := map[string]*gnode{}
	for _, part := range []map[string]*gnode{expressionRules(), matchRules(), selectorRules(), literalRules()} {
		for name, rule := range part {
			if g[name] != nil {
				panic("artifactpath: rule " + name + " defined twice")
			}
			g[name] = rule
		}
	}
	for _, n := range g {
		resolve(n, g)
	}
	return g
}

// expressionRules are the rules from the whole input down to a
// parenthesized expression: or, and, not, and collection expressions.
func expressionRules() map[string]*gnode {
	return map[string]*gnode{
		"Input": choice(
			action(seq(ows(), lit("("), ows(), label(ref("OrExpression")), ows(), lit(")"), ows(), ref("EOF")),
				func(_ *fparser, _ int, v any) any { return nth(v, 3) }),
			action(seq(ows(), label(ref("OrExpression")), ows(), ref("EOF")),
				func(_ *fparser, _ int, v any) any { return nth(v, 1) }),
		),
		"OrExpression": choice(
			action(seq(label(ref("AndExpression")), ws(), lit("or"), ws(), label(ref("OrExpression"))),
				func(_ *fparser, _ int, v any) any { return &orExpr{nth(v, 0).(expr), nth(v, 4).(expr)} }),
			action(label(ref("AndExpression")), self),
			action(label(ref("CollectionExpression")), self),
		),
		"AndExpression": choice(
			action(seq(label(ref("NotExpression")), ws(), lit("and"), ws(), label(ref("AndExpression"))),
				func(_ *fparser, _ int, v any) any { return &andExpr{nth(v, 0).(expr), nth(v, 4).(expr)} }),
			action(label(ref("NotExpression")), self),
		),
		"NotExpression": choice(
			action(seq(lit("not"), ws(), label(ref("NotExpression"))),
				func(_ *fparser, _ int, v any) any {
					// not not X is X (go-bexpr drops the pair too).
					if n, ok := nth(v, 2).(*notExpr); ok {
						return n.x
					}
					return &notExpr{nth(v, 2).(expr)}
				}),
			action(label(ref("ParenthesizedExpression")), self),
		),
		"CollectionExpression": action(seq(
			label(choice(ref("CollectionOpAny"), ref("CollectionOpAll"))), label(ref("Selector")), ws(), lit("as"), ws(),
			label(ref("CollectionIdentifiers")), ows(), lit("{"), ows(), label(ref("OrExpression")), ows(), lit("}")),
			func(_ *fparser, _ int, v any) any {
				return &collectionExpr{all: nth(v, 0).(bool), sel: nth(v, 1).(selector), bind: nth(v, 5).(binding), inner: nth(v, 9).(expr)}
			}),
		"CollectionIdentifiers": choice(
			action(seq(label(ref("Identifier")), ows(), lit(","), ows(), label(ref("Identifier"))),
				func(_ *fparser, _ int, v any) any {
					return binding{index: nth(v, 0).(string), value: nth(v, 4).(string), both: true}
				}),
			action(seq(label(ref("Identifier")), ows(), lit(","), ows(), lit("_")),
				func(_ *fparser, _ int, v any) any { return binding{index: nth(v, 0).(string)} }),
			action(seq(lit("_"), ows(), lit(","), ows(), label(ref("Identifier"))),
				func(_ *fparser, _ int, v any) any { return binding{value: nth(v, 4).(string)} }),
			action(label(ref("Identifier")), func(_ *fparser, _ int, v any) any { return binding{plain: v.(string)} }),
		),
		"CollectionOpAny": action(seq(lit("any"), ws()), constant(false)),
		"CollectionOpAll": action(seq(lit("all"), ws()), constant(true)),
		"ParenthesizedExpression": choice(
			action(seq(lit("("), ows(), label(ref("OrExpression")), ows(), lit(")")),
				func(_ *fparser, _ int, v any) any { return nth(v, 2) }),
			action(label(ref("MatchExpression")), self),
			seq(lit("("), ows(), ref("OrExpression"), ows(), notAhead(lit(")")), fail("unmatched parenthesis: ( without )")),
		),
	}
}

// matchRules are the rules of a match expression: a selector, an
// operator, and maybe a value.
func matchRules() map[string]*gnode {
	return map[string]*gnode{
		"MatchExpression": choice(ref("MatchSelectorOpValue"), ref("MatchSelectorOp"), ref("MatchValueOpSelector")),
		"MatchSelectorOpValue": action(seq(label(ref("Selector")),
			label(choice(ref("MatchEqual"), ref("MatchNotEqual"), ref("MatchContains"), ref("MatchNotContains"), ref("MatchMatches"), ref("MatchNotMatches"))),
			label(ref("Value"))),
			func(_ *fparser, _ int, v any) any {
				raw := nth(v, 2).(string)
				return &matchExpr{sel: nth(v, 0).(selector), op: nth(v, 1).(matchOp), value: &raw}
			}),
		"MatchSelectorOp": action(seq(label(ref("Selector")),
			label(choice(ref("MatchIsEmpty"), ref("MatchIsNotEmpty"), ref("MatchIsNil"), ref("MatchIsNotNil")))),
			func(_ *fparser, _ int, v any) any {
				return &matchExpr{sel: nth(v, 0).(selector), op: nth(v, 1).(matchOp)}
			}),
		"MatchValueOpSelector": choice(
			action(seq(label(ref("Value")), label(choice(ref("MatchIn"), ref("MatchNotIn"))), label(ref("Selector"))),
				func(_ *fparser, _ int, v any) any {
					raw := nth(v, 0).(string)
					return &matchExpr{sel: nth(v, 2).(selector), op: nth(v, 1).(matchOp), value: &raw}
				}),
			seq(ref("Value"), label(choice(ref("MatchIn"), ref("MatchNotIn"))), notAhead(ref("Selector")),
				fail("want a selector (a metadata key) after in")),
		),
		"MatchEqual":       op(opEqual, ows(), lit("=="), ows()),
		"MatchNotEqual":    op(opNotEqual, ows(), lit("!="), ows()),
		"MatchIsEmpty":     op(opIsEmpty, ws(), lit("is"), ws(), lit("empty")),
		"MatchIsNotEmpty":  op(opIsNotEmpty, ws(), lit("is"), ws(), lit("not"), ws(), lit("empty")),
		"MatchIn":          op(opIn, ws(), lit("in"), ws()),
		"MatchNotIn":       op(opNotIn, ws(), lit("not"), ws(), lit("in"), ws()),
		"MatchContains":    op(opIn, ws(), lit("contains"), ws()),
		"MatchNotContains": op(opNotIn, ws(), lit("not"), ws(), lit("contains"), ws()),
		"MatchMatches":     op(opMatches, ws(), lit("matches"), ws()),
		"MatchNotMatches":  op(opNotMatches, ws(), lit("not"), ws(), lit("matches"), ws()),
		"MatchIsNil":       op(opIsNil, ws(), lit("is"), ws(), lit("nil")),
		"MatchIsNotNil":    op(opIsNotNil, ws(), lit("is"), ws(), lit("not"), ws(), lit("nil")),
	}
}

// selectorRules are the rules of a selector: dotted identifiers or a
// quoted JSON pointer.
func selectorRules() map[string]*gnode {
	return map[string]*gnode{
		"Selector": choice(
			action(seq(label(ref("Identifier")), label(star(ref("SelectorOrIndex")))),
				func(_ *fparser, _ int, v any) any {
					path := []string{nth(v, 0).(string)}
					for _, step := range asList(nth(v, 1)) {
						path = append(path, step.(string))
					}
					return selector{path: path}
				}),
			action(seq(lit(`"`), label(star(ref("JsonPointerSegment"))), lit(`"`)),
				func(_ *fparser, _ int, v any) any {
					// A JSON pointer: "/" and the segments joined by "/",
					// read back as RFC 6901 says (~1 is /, ~0 is ~); no
					// segments is the pointer "/", one empty key.
					var path []string
					for _, s := range asList(nth(v, 1)) {
						path = append(path, strings.ReplaceAll(strings.ReplaceAll(s.(string), "~1", "/"), "~0", "~"))
					}
					if len(path) == 0 {
						path = []string{""}
					}
					return selector{path: path, pointer: true}
				}),
		),
		"JsonPointerSegment": action(seq(lit("/"), label(plus(class("a JSON pointer character", func(r rune) bool {
			return unicode.IsLetter(r) || unicode.IsNumber(r) || strings.ContainsRune("-_.~:|", r)
		})))), func(p *fparser, start int, _ any) any { return p.src[start+1 : p.pos] }),
		"Identifier": action(seq(class("a letter", isLetter), star(class("a letter, digit, _ or /", func(r rune) bool {
			return isLetter(r) || isDigit(r) || r == '_' || r == '/'
		}))), func(p *fparser, start int, _ any) any { return p.src[start:p.pos] }),
		"SelectorOrIndex": choice(
			action(seq(lit("."), label(ref("Identifier"))), func(_ *fparser, _ int, v any) any { return nth(v, 1) }),
			action(label(ref("IndexExpression")), self),
			action(seq(lit("."), label(plus(class("a digit", isDigit)))),
				func(p *fparser, start int, _ any) any { return p.src[start+1 : p.pos] }),
		),
		// An index in brackets: never in a path's FILTER (which has no
		// brackets), kept so that the parse takes the same steps.
		"IndexExpression": choice(
			action(seq(lit("["), ows(), label(ref("StringLiteral")), ows(), lit("]")), func(_ *fparser, _ int, v any) any { return nth(v, 2) }),
			seq(lit("["), ows(), notAhead(ref("StringLiteral")), fail("want a quoted key after [")),
			seq(lit("["), ows(), ref("StringLiteral"), ows(), notAhead(lit("]")), fail("want ] after the key")),
		),
	}
}

// literalRules are the rules of values, numbers, strings, whitespace and
// the end of the input.
func literalRules() map[string]*gnode {
	return map[string]*gnode{
		"Value": choice(
			action(label(ref("Selector")), func(_ *fparser, _ int, v any) any { return v.(selector).String() }),
			action(label(ref("NumberLiteral")), self),
			action(label(ref("StringLiteral")), self),
		),
		"NumberLiteral": choice(
			action(seq(opt(lit("-")), ref("IntegerOrFloat"), ahead(ref("AfterNumbers"))),
				func(p *fparser, start int, _ any) any { return p.src[start:p.pos] }),
			seq(opt(lit("-")), ref("IntegerOrFloat"), notAhead(ref("AfterNumbers")),
				fail("a number must be followed by a space, ) or the end of the filter (and written -?(0|[1-9][0-9]*)(.[0-9]+)?)")),
		),
		"AfterNumbers": ahead(choice(ref("_"), ref("EOF"), lit(")"))),
		"IntegerOrFloat": seq(choice(lit("0"), seq(class("a digit", func(r rune) bool { return r >= '1' && r <= '9' }), star(class("a digit", isDigit)))),
			opt(seq(lit("."), plus(class("a digit", isDigit))))),
		"StringLiteral": choice(
			action(choice(seq(lit("`"), star(ref("RawStringChar")), lit("`")), seq(lit(`"`), star(ref("DoubleStringChar")), lit(`"`))),
				func(p *fparser, start int, _ any) any {
					s, err := strconv.Unquote(p.src[start:p.pos])
					if err != nil {
						p.failAt(start, fmt.Sprintf("string %s: not a valid Go string literal (bad escape, or a line break in \"...\")", p.src[start:p.pos]))
					}
					return s
				}),
			seq(choice(seq(lit("`"), star(ref("RawStringChar"))), seq(lit(`"`), star(ref("DoubleStringChar")))), ref("EOF"),
				fail("unterminated string")),
		),
		"RawStringChar":    seq(notAhead(lit("`")), anyChar()),
		"DoubleStringChar": seq(notAhead(lit(`"`)), anyChar()),
		"_":                plus(class("whitespace", func(r rune) bool { return r == ' ' || r == '\t' || r == '\r' || r == '\n' })),
		"EOF":              notAhead(anyChar()),
	}
}

func resolve(n *gnode, g map[string]*gnode) {
	if n.kind == kRef {
		if n.rule = g[n.text]; n.rule == nil {
			panic("artifactpath: no rule " + n.text)
		}
		return
	}
	for _, k := range n.kids {
		resolve(k, g)
	}
}

func isLetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }
func isDigit(r rune) bool  { return r >= '0' && r <= '9' }

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// fparser runs the grammar over one filter.
type fparser struct {
	src   string
	pos   int
	steps int
	// lookahead > 0 inside & and ! (their failures are not what the
	// filter lacks).
	lookahead int
	// farthest position a literal or class failed at, and what it wanted.
	far  int
	want map[string]bool
}

// parseAbort carries the error that ends a parse.
type parseAbort struct{ err *FilterError }

func (p *fparser) failAt(offset int, reason string) {
	panic(parseAbort{&FilterError{Filter: p.src, Column: column(p.src, offset), Reason: reason}})
}

func column(s string, offset int) int { return utf8.RuneCountInString(s[:offset]) + 1 }

// compileFilter parses a filter as go-bexpr does.
func compileFilter(filter string) (expr, error) {
	e, _, err := parseFilter(filter)
	return e, err
}

// parseFilter parses a filter: its expression and the parsing steps taken
// (to the error, for one that does not parse).
func parseFilter(filter string) (e expr, steps int, err error) {
	if !utf8.ValidString(filter) {
		i := 0
		for i < len(filter) {
			r, w := utf8.DecodeRuneInString(filter[i:])
			if r == utf8.RuneError && w == 1 {
				break
			}
			i += w
		}
		return nil, 0, &FilterError{Filter: filter, Column: column(filter, i), Reason: "not valid UTF-8"}
	}
	p := &fparser{src: filter, want: map[string]bool{}}
	defer func() {
		if r := recover(); r != nil {
			a, ok := r.(parseAbort)
			if !ok {
				panic(r)
			}
			e, steps, err = nil, p.steps, a.err
		}
	}()
	v, ok := p.run(grammar["Input"])
	if !ok {
		return nil, p.steps, p.noMatch()
	}
	return v.(expr), p.steps, nil
}

func (p *fparser) step() {
	p.steps++
	if p.steps > maxSteps {
		p.failAt(p.pos, fmt.Sprintf("too complex: go-bexpr, kfp-operator's filter parser, gives up after %d parsing steps "+
			"(it backtracks: each level of parentheses about quadruples them, 7 levels are too many)", maxSteps))
	}
}

func (p *fparser) missed(what string) {
	if p.lookahead > 0 || what == "" {
		return
	}
	if p.pos > p.far {
		p.far, p.want = p.pos, map[string]bool{}
	}
	if p.pos == p.far {
		p.want[what] = true
	}
}

// run matches n at p.pos: its value and whether it matched; on a miss
// p.pos is where it was.
func (p *fparser) run(n *gnode) (any, bool) {
	p.step()
	start := p.pos
	switch n.kind {
	case kLit:
		if strings.HasPrefix(p.src[p.pos:], n.text) {
			p.pos += len(n.text)
			return n.text, true
		}
		p.missed(strconv.Quote(n.text))
		return nil, false
	case kClass, kAny:
		r, w := utf8.DecodeRuneInString(p.src[p.pos:])
		if w > 0 && (n.kind == kAny || n.in(r)) {
			p.pos += w
			return p.src[start:p.pos], true
		}
		if n.kind == kClass {
			p.missed(n.text)
		} else {
			p.missed("any character")
		}
		return nil, false
	case kRef:
		return p.run(n.rule)
	case kSeq:
		vals := make([]any, 0, len(n.kids))
		for _, k := range n.kids {
			v, ok := p.run(k)
			if !ok {
				p.pos = start
				return nil, false
			}
			vals = append(vals, v)
		}
		return vals, true
	case kChoice:
		for _, k := range n.kids {
			if v, ok := p.run(k); ok {
				return v, true
			}
		}
		return nil, false
	case kOpt:
		v, _ := p.run(n.kids[0])
		return v, true
	case kStar, kPlus:
		var vals []any
		for {
			v, ok := p.run(n.kids[0])
			if !ok {
				break
			}
			vals = append(vals, v)
		}
		if n.kind == kPlus && len(vals) == 0 {
			return nil, false
		}
		return vals, true
	case kAnd, kNot:
		p.lookahead++
		_, ok := p.run(n.kids[0])
		p.lookahead--
		p.pos = start
		return nil, ok == (n.kind == kAnd)
	case kFail:
		p.failAt(p.pos, n.text)
	case kLabel:
		return p.run(n.kids[0])
	case kAction:
		v, ok := p.run(n.kids[0])
		if !ok {
			return nil, false
		}
		return n.act(p, start, v), true
	}
	panic("artifactpath: bad grammar node")
}

// noMatch says what the filter lacks where the parse got farthest.
func (p *fparser) noMatch() *FilterError {
	found := "the end of the filter"
	if p.far < len(p.src) {
		r, _ := utf8.DecodeRuneInString(p.src[p.far:])
		found = strconv.QuoteRune(r)
	}
	want := map[string]bool{}
	for w := range p.want {
		want[w] = true
	}
	// "[" opens an index, which a FILTER cannot hold.
	delete(want, `"["`)
	value := []string{`"-"`, `"0"`, `"\""`, "\"`\"", "a digit", "a letter"}
	if all(want, value) {
		for _, w := range value {
			delete(want, w)
		}
		want["a value (a number, \"...\", `...` or a bare word)"] = true
	}
	var wants []string
	for w := range want {
		wants = append(wants, w)
	}
	sort.Strings(wants)
	reason := fmt.Sprintf("found %s, want %s", found, strings.Join(wants, ", "))
	if len(wants) == 0 {
		reason = fmt.Sprintf("unexpected %s", found)
	}
	rest := p.src[p.far:]
	switch {
	case strings.HasSuffix(strings.TrimRight(p.src[:p.far], " \t\r\n"), "}"):
		reason += " (an any or all expression must be the whole filter or be in parentheses)"
	case strings.HasPrefix(rest, "&&") || strings.HasPrefix(rest, "||"):
		reason += ` (go-bexpr joins conditions with "and" and "or", not && and ||)`
	case strings.HasPrefix(rest, "'"):
		reason += " (strings are quoted with \"...\" or `...`, not '...')"
	case strings.HasPrefix(rest, "<") || strings.HasPrefix(rest, ">") || strings.HasPrefix(rest, "=") && !strings.HasPrefix(rest, "=="):
		reason += " (go-bexpr compares with ==, !=, contains, in, matches, is empty and is nil, and their not forms; it has no <, <=, > or >=, and = is ==)"
	}
	return &FilterError{Filter: p.src, Column: column(p.src, p.far), Reason: reason}
}

func all(set map[string]bool, keys []string) bool {
	for _, k := range keys {
		if !set[k] {
			return false
		}
	}
	return true
}
