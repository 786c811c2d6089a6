package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/kfpcel"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/launcher"
)

// items fans out a KFP loop over a run-time list (a compiled pipeline's
// items task): it reads the list (JSON, or text holding it), and writes
// each --result file as a Tekton array result: every item as text (a
// string as it is, anything else as JSON), or, with a selector, the field
// the selector picks from each item (the SDK's parseJson(string_value)).
//
//	kfp-task items --list JSON --result SELECTOR PATH [--result SELECTOR PATH ...]
//
// An empty selector is the whole item.
//
// With --nest SELECTOR, a loop over a field of the item of an outer loop
// whose list is --list: the items are the (outer item, inner item) pairs,
// the outer items in order and for each the items of the list SELECTOR
// picks from it; --result selects from the inner items, --outer-result
// SELECTOR PATH from the outer item of each pair, so every array is
// aligned with the pairs.
func items(args []string) error {
	var list, nest string
	haveList, nested := false, false
	type output struct {
		selector, path string
		outer          bool
	}
	var outputs []output
	for len(args) > 0 {
		switch {
		case args[0] == "--list" && len(args) >= 2:
			list, haveList, args = args[1], true, args[2:]
		case args[0] == "--nest" && len(args) >= 2:
			nest, nested, args = args[1], true, args[2:]
		case (args[0] == "--result" || args[0] == "--outer-result") && len(args) >= 3:
			outputs = append(outputs, output{args[1], args[2], args[0] == "--outer-result"})
			args = args[3:]
		default:
			return fmt.Errorf("items: unexpected %q (want --list JSON [--nest SELECTOR] --result SELECTOR PATH ...)", args[0])
		}
	}
	if !haveList || len(outputs) == 0 {
		return errors.New("items: --list and at least one --result are required")
	}
	values, err := listItems(list)
	if err != nil {
		return err
	}
	outers := values
	if nested {
		if outers, values, err = pairs(values, nest); err != nil {
			return err
		}
	}
	for _, out := range outputs {
		if out.outer && !nested {
			return errors.New("items: --outer-result without --nest")
		}
		texts := make([]string, 0, len(values))
		for i, v := range values {
			if out.outer {
				v = outers[i]
			}
			if out.selector != "" {
				if v, err = kfpcel.Select(out.selector, v); err != nil {
					return fmt.Errorf("items: item %d: %w", i, err)
				}
			}
			texts = append(texts, launcher.Text(v))
		}
		data, err := json.Marshal(texts)
		if err != nil {
			return err
		}
		if err := os.WriteFile(out.path, data, 0o644); err != nil {
			return fmt.Errorf("items: %w", err)
		}
	}
	fmt.Printf("the loop has %d items\n", len(values))
	return nil
}

// listItems reads a loop's list: a JSON list, or a JSON string holding one.
func listItems(text string) ([]*structpb.Value, error) {
	v := &structpb.Value{}
	if err := v.UnmarshalJSON([]byte(text)); err != nil {
		return nil, fmt.Errorf("items: the list is not JSON: %q", text)
	}
	if s, ok := v.GetKind().(*structpb.Value_StringValue); ok {
		if err := v.UnmarshalJSON([]byte(s.StringValue)); err != nil {
			return nil, fmt.Errorf("items: the list is not JSON: %q", s.StringValue)
		}
	}
	l := v.GetListValue()
	if l == nil {
		return nil, fmt.Errorf("items: %q is not a JSON list", text)
	}
	return l.GetValues(), nil
}

// pairs are the (outer item, inner item) pairs of a loop over the field
// selector picks from each outer item (a list, or text holding one): the
// outer item of each pair, and its inner item.
func pairs(outer []*structpb.Value, selector string) ([]*structpb.Value, []*structpb.Value, error) {
	var outs, ins []*structpb.Value
	for i, o := range outer {
		v := o
		if selector != "" {
			var err error
			if v, err = kfpcel.Select(selector, o); err != nil {
				return nil, nil, fmt.Errorf("items: outer item %d: %w", i, err)
			}
		}
		text, err := v.MarshalJSON()
		if err != nil {
			return nil, nil, err
		}
		inner, err := listItems(string(text))
		if err != nil {
			return nil, nil, fmt.Errorf("outer item %d: %w", i, err)
		}
		for _, in := range inner {
			outs, ins = append(outs, o), append(ins, in)
		}
	}
	return outs, ins, nil
}
