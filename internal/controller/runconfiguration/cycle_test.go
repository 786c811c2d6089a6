package runconfiguration

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestTriggerCycle(t *testing.T) {
	for name, tc := range map[string]struct {
		upstreams map[string][]string
		from      string
		want      []string
	}{
		"none":            {map[string][]string{"b": {"a"}, "c": {"b"}}, "c", nil},
		"self":            {map[string][]string{"a": {"a"}}, "a", []string{"a", "a"}},
		"two":             {map[string][]string{"a": {"b"}, "b": {"a"}}, "a", []string{"a", "b", "a"}},
		"three":           {map[string][]string{"a": {"c"}, "b": {"a"}, "c": {"b"}}, "b", []string{"b", "a", "c", "b"}},
		"diamond":         {map[string][]string{"d": {"b", "c"}, "b": {"a"}, "c": {"a"}}, "d", nil},
		"cycle elsewhere": {map[string][]string{"x": {"y"}, "y": {"x"}, "d": {"x"}}, "d", nil},
		"missing":         {map[string][]string{"a": {"gone"}}, "a", nil},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, triggerCycle(tc.from, tc.upstreams))
		})
	}
}
