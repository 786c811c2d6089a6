package outcome

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	ctrl "sigs.k8s.io/controller-runtime"
)

func TestResult(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		outcome Outcome
		class   Class
		result  ctrl.Result
		err     error
	}{
		{outcome: DoneOutcome(), class: Done},
		{outcome: Stall(), class: Stalled},
		{outcome: WaitFor(time.Minute), class: Waiting, result: ctrl.Result{RequeueAfter: time.Minute}},
		{outcome: Retry(boom), class: Transient, err: boom},
		{outcome: DoneOr(nil), class: Done},
		{outcome: DoneOr(boom), class: Transient, err: boom},
	} {
		t.Run(tc.outcome.String(), func(t *testing.T) {
			assert.True(t, tc.outcome.Is(tc.class))
			result, err := tc.outcome.Result()
			assert.Equal(t, tc.result, result)
			assert.Equal(t, tc.err, err)
		})
	}
}
