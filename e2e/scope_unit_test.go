package e2e

import "testing"

func TestOwnEvent(t *testing.T) {
	ours := map[string]bool{"e2e-events-1a2b3c": true, "e2e-owner-4d5e6f": true}
	for _, tc := range []struct {
		name, resource, source string
		want                   bool
	}{
		{"a Run of ours", "Run e2e-events-1a2b3c/ok-1", "e2e-events-1a2b3c/kfp", true},
		{"a RunConfiguration of ours", "RunConfiguration e2e-events-1a2b3c/examples", "e2e-events-1a2b3c/kfp", true},
		{"ours through another of our namespaces' Provider", "Run e2e-prober-000000/real", "e2e-owner-4d5e6f/kfp", true},
		{"ours without the extension", "", "e2e-events-1a2b3c/kfp", true},
		{"make demo's every-minute RunConfiguration", "RunConfiguration team-a/demo-training", "team-a/kfp", false},
		{"an earlier run's namespace of the same prefix", "Run e2e-events-ffffff/ok-1", "e2e-events-ffffff/kfp", false},
		{"a namespace only prefixed by ours", "Run e2e-events-1a2b3c-x/ok-1", "e2e-events-1a2b3c-x/kfp", false},
		{"no namespace at all", "Run ok-1", "kfp", false},
		{"nothing", "", "", false},
	} {
		if got := ownEvent(tc.resource, tc.source, ours); got != tc.want {
			t.Errorf("%s: ownEvent(%q, %q) = %v, want %v", tc.name, tc.resource, tc.source, got, tc.want)
		}
	}
}

func TestWithoutTestSinks(t *testing.T) {
	modelServing := map[string]any{"name": "model-serving", "url": "http://model-updater.serving.svc/events"}
	leftover := map[string]any{"name": testSinkName, "url": "http://10.200.0.1:40001/"}
	values := map[string]any{"replicas": float64(2), "eventSinks": []any{modelServing, leftover}}
	got := withoutTestSinks(values)
	if sinks, _ := got["eventSinks"].([]any); len(sinks) != 1 || sinks[0].(map[string]any)["name"] != "model-serving" {
		t.Errorf("eventSinks = %v, want the model-serving sink alone", got["eventSinks"])
	}
	if got["replicas"] != float64(2) {
		t.Errorf("replicas = %v, want the value kept", got["replicas"])
	}
	if sinks := values["eventSinks"].([]any); len(sinks) != 2 {
		t.Errorf("the values given changed: %v", sinks)
	}
	if _, ok := withoutTestSinks(map[string]any{"replicas": float64(2)})["eventSinks"]; ok {
		t.Error("eventSinks added to values that had none")
	}
	if got := otherSinks(nil); got == nil || len(got) != 0 {
		t.Errorf("otherSinks(nil) = %#v, want an empty list (JSON [])", got)
	}
}
