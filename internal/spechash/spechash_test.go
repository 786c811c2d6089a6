package spechash

import "testing"

// TestOfIsStable pins the hashes: they are stored in statuses and in
// RunSchedule names, so a change would update every resource at once.
func TestOfIsStable(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{struct {
			Image string `json:"image"`
			N     int    `json:"n"`
		}{"x", 1}, "924f454279"}, // sha256 of {"image":"x","n":1}
		{[]string{"v1", "abc"}, "e7caf1736a"},
		{nil, "74234e98af"},
	} {
		if got, err := Of(tc.v); err != nil || got != tc.want {
			t.Errorf("Of(%#v) = %q, %v; want %q", tc.v, got, err, tc.want)
		}
	}
}

func TestOfRefusesWhatJSONCannotEncode(t *testing.T) {
	if _, err := Of(func() {}); err == nil {
		t.Error("Of(func) succeeded")
	}
}
