package artifactpath

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	for path, want := range map[string]Path{
		"train:model:0":                      {Component: "train", Output: "model"},
		"CsvExampleGen:examples":             {Component: "CsvExampleGen", Output: "examples"},
		"train:model:":                       {Component: "train", Output: "model"},
		"train:model:007":                    {Component: "train", Output: "model", Index: 7},
		"Pusher:pushed_model:0[pushed == 1]": {Component: "Pusher", Output: "pushed_model", Filter: "pushed == 1"},
		"Pusher:pushed_model[pushed == 1]":   {Component: "Pusher", Output: "pushed_model", Filter: "pushed == 1"},
		"a b:c-d.e/f:3[(x == 1)]":            {Component: "a b", Output: "c-d.e/f", Index: 3, Filter: "(x == 1)"},
		"t:o:9223372036854775807":            {Component: "t", Output: "o", Index: 9223372036854775807},
		`ż:ó:["/ł" == "ć"]`:                  {Component: "ż", Output: "ó", Filter: `"/ł" == "ć"`},
	} {
		got, err := Parse(path)
		if assert.NoError(t, err, path) {
			got.filter = nil
			assert.Equal(t, want, got, path)
		}
	}
	for path, want := range map[string]string{
		"":                         "want COMPONENT:ARTIFACT or COMPONENT:ARTIFACT:INDEX",
		"train":                    "no ':' before FILTER",
		"train[x == 1]":            "no ':' before FILTER",
		"a:b:c:0":                  "4 ':'-separated parts, at most 3",
		":model:0":                 "COMPONENT is empty",
		"train::0":                 "ARTIFACT is empty",
		"train:model:x":            "INDEX \"x\" is not a number",
		"train:model:-1":           "INDEX \"-1\" is not a number",
		"t:o:9223372036854775808":  "INDEX 9223372036854775808 is larger than 9223372036854775807",
		"train:model:0[]":          "FILTER is empty",
		"train:model:0[x == 1":     "FILTER has no closing ]",
		"train:model:0[x == 1]x":   "nothing may follow the ]",
		"train:model:0[[x]]":       "FILTER must not contain [ or ]",
		"train:model:0[x == a:b]":  "FILTER must not contain ':'",
		"train:model]":             "] without [",
		"train:model:0[x = 1]":     `column 3: found '=', want "!=", "==", "contains", "in", "is", "matches", "not", whitespace`,
		"train:model[x >= 0.5]":    "it has no <, <=, > or >=",
		"train:model[x == 'a']":    "not '...'",
		"train:model[x == 1 && y]": `column 8: found '&', want "and", "or", whitespace (go-bexpr joins conditions with "and" and "or"`,
		"train:model[x == 01]":     "column 7: a number must be followed by a space, ) or the end",
		"train:model[x == 1}]":     "column 7: a number must be followed",
		`train:model[x == "a]`:     "column 8: unterminated string",
		`train:model[x == "\q"]`:   `column 6: string "\q": not a valid Go string literal`,
		"train:model[(x == 1]":     "column 8: unmatched parenthesis",
		"train:model[x ==]":        `column 5: found the end of the filter, want a value (a number, "...", ` + "`...`" + ` or a bare word)`,
		"train:model[any l as v { v == 1 } and x == 1]": "must be the whole filter or be in parentheses",
		"train:model[(((((((x == 1)))))))]":             "too complex",
		"train:model[ł == 1]":                           "column 1: found 'ł'", // keys are ASCII, or a JSON pointer
		"train:model[x == \xff]":                        "column 6: not valid UTF-8",
	} {
		_, err := Parse(path)
		if assert.Error(t, err, path) {
			assert.Contains(t, err.Error(), want, path)
			assert.Contains(t, err.Error(), `artifact path "`, path)
		}
		var fe *FilterError
		// A FilterError for what kfp-operator admits (its pattern matches)
		// but go-bexpr cannot compile; a plain error for what it refuses.
		assert.Equal(t, kfpPattern.MatchString(path) && !strings.Contains(want, "larger"), errors.As(err, &fe), "%s: a FilterError only for a filter kfp-operator admits", path)
	}
	// Six levels of parentheses are within go-bexpr's parse budget.
	_, err := Parse("t:o[((((((x == 1))))))]")
	assert.NoError(t, err)
}

func TestSelect(t *testing.T) {
	run := []Component{
		{Name: "train", Outputs: []Output{{Name: "model", Artifacts: []Artifact{{URI: "file:///r/train/model"}}}}},
		{Name: "Pusher", Outputs: []Output{{Name: "pushed_model", Artifacts: []Artifact{
			{URI: "gs://a", Metadata: map[string]any{"pushed": 0.0}},
			{URI: "gs://b", Metadata: map[string]any{"pushed": 1.0, "stage": "prod"}},
			{URI: "", Metadata: map[string]any{"pushed": 1.0, "stage": "dev"}},
		}}}},
		// A second output of the same name: looked at too, in order.
		{Name: "Pusher", Outputs: []Output{{Name: "pushed_model", Artifacts: []Artifact{
			{URI: "gs://d", Metadata: map[string]any{"pushed": 1.0, "stage": "dev"}},
		}}}},
	}
	for path, want := range map[string]string{
		"train:model":                        "file:///r/train/model",
		"train:model:0":                      "file:///r/train/model",
		"train:model:1":                      "",
		"train:dataset:0":                    "",
		"eval:model:0":                       "",
		"Pusher:pushed_model":                "gs://a",
		"Pusher:pushed_model:1":              "gs://b",
		"Pusher:pushed_model:1[pushed == 1]": "gs://b",
		// INDEX picks before the filter: the filter does not skip
		// artifacts, it tests the one picked (here the first of each
		// output: gs://a fails, gs://d passes).
		"Pusher:pushed_model:0[pushed == 1]":                      "gs://d",
		"Pusher:pushed_model[stage == dev]":                       "gs://d",
		"Pusher:pushed_model:1[stage == dev]":                     "",
		"Pusher:pushed_model:2":                                   "", // no URI
		"Pusher:pushed_model:1[pushed == 1 and stage == prod]":    "gs://b",
		"Pusher:pushed_model:1[pushed == 1 and not stage == dev]": "gs://b",
		"Pusher:pushed_model:1[stage == 1]":                       "", // 1 read as the string "1": false, not an error
		"Pusher:pushed_model:1[stage != 1]":                       "gs://b",
		"Pusher:pushed_model:1[pushed == prod]":                   "", // prod is no number: an error
		"Pusher:pushed_model:1[missing == 1]":                     "",
		"Pusher:pushed_model:1[missing != 1]":                     "", // a missing key is an error, != too
		"train:model:0[pushed == 1]":                              "",
	} {
		p, err := Parse(path)
		require.NoError(t, err, path)
		got, ok := Select(p, run)
		assert.Equal(t, want != "", ok, path)
		assert.Equal(t, want, got, path)
	}
}

// TestFilter pins the filter language's meaning: every outcome here is
// the one go-bexpr v0.1.16 (kfp-operator's evaluator) gives on the same
// metadata, decoded from JSON as run-completion events are.
func TestFilter(t *testing.T) {
	var metadata map[string]any
	require.NoError(t, json.Unmarshal([]byte(`{"pushed":1,"stage":"prod","accuracy":0.93,"blessed":true,`+
		`"tags":["nightly","eu"],"labels":{"team":"ml","nested":{"x":1}},"count":3,"empty":"","nothing":null}`), &metadata))
	const isTrue, isFalse, isError = "true", "false", "error"
	for filter, want := range map[string]string{
		"pushed == 1":                   isTrue,
		"pushed == 1.0":                 isTrue,
		"pushed != 1":                   isFalse,
		`pushed == "1"`:                 isTrue,
		"pushed == true":                isError,
		"stage == prod":                 isTrue,
		`stage == "prod"`:               isTrue,
		"stage == `prod`":               isTrue,
		"stage != dev":                  isTrue,
		`stage == "/prod"`:              isTrue, // a JSON pointer: its keys, "prod"
		"blessed == true":               isTrue,
		"blessed == 1":                  isTrue,
		"blessed == yes":                isError,
		"accuracy == 0.93":              isTrue,
		"tags contains nightly":         isTrue,
		`"eu" in tags`:                  isTrue,
		`"us" not in tags`:              isTrue,
		"team in labels":                isTrue,
		"labels.team == ml":             isTrue,
		`"/labels/team" == ml`:          isTrue,
		"labels.nested.x == 1":          isTrue,
		"labels.missing == ml":          isFalse,
		"labels.missing != ml":          isTrue,
		`labels.missing matches "("`:    isFalse,
		"missing == 1":                  isError,
		"missing != 1":                  isError,
		"not missing == 1":              isError,
		"pushed == 1 or missing == 1":   isTrue,
		"missing == 1 or pushed == 1":   isError,
		"pushed == 0 and missing == 1":  isFalse,
		`stage matches "^pr"`:           isTrue,
		`stage matches "("`:             isError,
		"empty is empty":                isTrue,
		"tags is not empty":             isTrue,
		"nothing is nil":                isTrue,
		"tags.0 == nightly":             isTrue,
		"tags.5 == x":                   isError,
		"(any tags as t { t == eu })":   isTrue,
		"(all tags as t { t != us })":   isTrue,
		"(all tags as i, _ { i != 5 })": isTrue,
		"(any labels as k, v { k == team and v == ml })":    isTrue,
		"(pushed == 1 and (stage == prod or stage == dev))": isTrue,
		"count == 3 and not stage == dev":                   isTrue,
		"((((((pushed == 1))))))":                           isTrue,
		// Keys missing from a nested map: each operator's default.
		"labels.missing is empty":              isTrue,
		"labels.missing is not empty":          isFalse,
		"labels.missing is nil":                isTrue,
		"labels.missing is not nil":            isFalse,
		`"x" in labels.missing`:                isFalse,
		`"x" not in labels.missing`:            isTrue,
		"labels.missing contains x":            isFalse,
		`labels.missing not matches "("`:       isTrue,
		"(any labels.missing as v { v == 1 })": isFalse,
		"(all labels.missing as v { v == 1 })": isTrue,
		"(any labels.nested as k { k == x })":  isTrue,
		"(all tags as t { t == eu })":          isFalse,
		"(any tags as t, t { t == eu })":       isError,
		"(any nothing as t { t == eu })":       isError,
		"tags contains 1":                      isFalse,
		"stage contains ro":                    isTrue,
		"pushed contains 1":                    isError,
		"nothing is empty":                     isError,
		"stage is nil":                         isError,
		`nothing matches "x"`:                  isError, // go-bexpr panics on this one
	} {
		p, err := Parse("c:o[" + filter + "]")
		require.NoError(t, err, filter)
		ok, err := p.Explain(metadata)
		got := map[bool]string{true: isTrue, false: isFalse}[ok]
		if err != nil {
			got = isError
		}
		assert.Equal(t, want, got, "%s: %v", filter, err)
		assert.Equal(t, want == isTrue, p.Holds(metadata), filter)
	}
}

func TestHoldsWithoutFilter(t *testing.T) {
	p, err := Parse("c:o:0")
	require.NoError(t, err)
	assert.True(t, p.Holds(nil))
	ok, err := p.Explain(nil)
	assert.True(t, ok)
	assert.NoError(t, err)
	// A Path not made by Parse has no compiled filter: it selects nothing.
	assert.False(t, Path{Component: "c", Output: "o", Filter: "x == 1"}.Holds(map[string]any{"x": 1.0}))
}

// TestParseSteps pins the parser's step count, which decides where
// go-bexpr's budget of 2,000,000 steps refuses a filter: the counts are
// go-bexpr v0.1.16's for the same filters.
func TestParseSteps(t *testing.T) {
	for filter, want := range map[string]int{
		"pushed == 1":        528,
		"x == 1":             508,
		"x == 1 &&":          507,
		"((((((x == 1))))))": 542023,
		"(any l as v { v == 1 }) or a is not nil": 6405,
	} {
		_, steps, _ := parseFilter(filter)
		assert.Equal(t, want, steps, filter)
	}
	// go-bexpr takes 2,168,135 steps for this one: over budget.
	_, steps, err := parseFilter("(((((((x == 1)))))))")
	assert.Equal(t, maxSteps+1, steps)
	assert.ErrorContains(t, err, "too complex")
}
