package completion

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pipelinesv1beta1 "github.com/kfp-tekton-operator/kfp-tekton-operator/api/v1beta1"
	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/controller/outcome"
)

func TestEnded(t *testing.T) {
	runErr, rcErr := errors.New("run"), errors.New("runconfiguration")
	for name, tc := range map[string]struct {
		run   outcome.Outcome
		rcErr error
		want  outcome.Class
		after time.Duration
		errs  []error
	}{
		"both done":                      {run: outcome.DoneOutcome(), want: outcome.Done},
		"waiting for the provider's id":  {run: outcome.WaitFor(waitForID), want: outcome.Waiting, after: waitForID},
		"the Run's failure is retried":   {run: outcome.Retry(runErr), want: outcome.Transient, errs: []error{runErr}},
		"the record's failure too":       {run: outcome.WaitFor(waitForID), rcErr: rcErr, want: outcome.Transient, errs: []error{rcErr}},
		"both failures are in the error": {run: outcome.Retry(runErr), rcErr: rcErr, want: outcome.Transient, errs: []error{runErr, rcErr}},
	} {
		t.Run(name, func(t *testing.T) {
			got := ended(tc.run, tc.rcErr)
			assert.Equal(t, tc.want, got.Class)
			assert.Equal(t, tc.after, got.After)
			for _, err := range tc.errs {
				assert.ErrorIs(t, got.Err, err)
			}
		})
	}
}

func TestRetention(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 12, 3, 20, 0, 0, 0, time.UTC))
	done := &pipelinesv1beta1.Run{}
	done.Status.CompletionState, done.Status.MarkedCompletedAt = pipelinesv1beta1.CompletionStateSucceeded, &at
	for name, tc := range map[string]struct {
		run   *pipelinesv1beta1.Run
		ttl   time.Duration
		now   time.Time
		due   bool
		want  outcome.Class
		after time.Duration
	}{
		"not completed":   {run: &pipelinesv1beta1.Run{}, ttl: time.Hour, now: at.Time, want: outcome.Done},
		"retention off":   {run: done, now: at.Add(time.Hour), want: outcome.Done},
		"not yet expired": {run: done, ttl: time.Hour, now: at.Add(15 * time.Minute), want: outcome.Waiting, after: 45 * time.Minute},
		"expired":         {run: done, ttl: time.Hour, now: at.Add(time.Hour), due: true, want: outcome.Done},
	} {
		t.Run(name, func(t *testing.T) {
			o, due := retention(tc.run, tc.ttl, tc.now)
			assert.Equal(t, tc.due, due)
			assert.Equal(t, tc.want, o.Class)
			assert.Equal(t, tc.after, o.After)
		})
	}
}
