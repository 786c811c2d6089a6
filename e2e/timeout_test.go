//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestOperationTimeoutIsAFailedAttempt: a provider that never answers is
// stopped by Tekton at the operation timeout, which the resource reports
// as a failed attempt, and the next attempt runs once the provider is fixed.
func TestOperationTimeoutIsAFailedAttempt(t *testing.T) {
	operatorValues(t, "operationTimeout=30s")
	ns := namespace(t, "e2e-timeout")
	installProvider(t, ns, "kfp")
	provider(t, ns, "hanging", images["FIXTURE_PROVIDER_IMAGE"], `{"Experiment/slow": {"sleep": "10m"}}`)
	create(t, ns, `
kind: Experiment
metadata: {name: slow}
spec: {provider: hanging, description: never answered}
`)
	started := time.Now()
	waitFor(t, 3*time.Minute, "the timed-out attempt reported", func() (bool, string) {
		status, reason, message := condition(get(t, "Experiment", ns, "slow"), "Ready")
		timedOut := strings.Contains(message, "timed out") || strings.Contains(message, "failed to finish within")
		return status == "False" && reason == "PipelineRunFailed" && timedOut, fmt.Sprintf("Ready=%s %s: %.300s", status, reason, message)
	})
	t.Logf("attempt 1 timed out and was reported %s after create (timeout 30s)", time.Since(started).Round(time.Second))
	runs := runsOf(t, ns, "Experiment", "slow")
	if len(runs) == 0 || runs[0].Spec.Timeouts == nil || runs[0].Spec.Timeouts.Pipeline == nil || runs[0].Spec.Timeouts.Pipeline.Duration != 30*time.Second {
		t.Fatalf("the operation's PipelineRun should carry the configured timeout: %+v", runs)
	}

	// A merge patch deletes the key with null ({} would merge into it).
	patch(t, "Provider", ns, "hanging", `{"spec":{"parameters":{"fixture":{"Experiment/slow":null}}}}`)
	waitFor(t, syncTimeout, "the next attempt synchronised", func() (bool, string) {
		return synchronised(get(t, "Experiment", ns, "slow"))
	})
}
