package measure

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRequestsByMethod(t *testing.T) {
	got, err := RequestsByMethod(strings.NewReader(`# HELP rest_client_requests_total Number of HTTP requests.
# TYPE rest_client_requests_total counter
rest_client_requests_total{code="200",host="10.96.0.1:443",method="GET"} 12
rest_client_requests_total{code="201",host="10.96.0.1:443",method="POST"} 3
rest_client_requests_total{code="409",host="10.96.0.1:443",method="POST"} 1
rest_client_requests_total{code="200",host="10.96.0.1:443",method="PATCH"} 2.5e+01
rest_client_request_duration_seconds_count{host="x",verb="GET"} 99
`))
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{"GET": 12, "POST": 4, "PATCH": 25}, got)

	_, err = RequestsByMethod(strings.NewReader(`rest_client_requests_total{method="GET"} many`))
	assert.ErrorContains(t, err, "many")
}

func TestOwnProcessFigures(t *testing.T) {
	// Burn a little CPU so the counter moves past a tick.
	x := 0
	for i := range 300_000_000 {
		x += i % 7
	}
	_ = x
	assert.Positive(t, CPUSeconds(os.Getpid()))
	assert.Positive(t, StatusKiB(os.Getpid(), "VmHWM"))
	assert.GreaterOrEqual(t, StatusKiB(os.Getpid(), "VmHWM"), StatusKiB(os.Getpid(), "VmRSS")/2)
	assert.Zero(t, StatusKiB(os.Getpid(), "NoSuchField"))
	assert.Zero(t, CPUSeconds(-1))
}

func TestParallelRunsEveryIndexAndReturnsAnError(t *testing.T) {
	var seen [100]atomic.Int32
	boom := errors.New("boom")
	err := Parallel(context.Background(), len(seen), 8, func(i int) error {
		seen[i].Add(1)
		if i == 42 {
			return boom
		}
		return nil
	})
	assert.ErrorIs(t, err, boom)
	for i := range seen {
		assert.EqualValues(t, 1, seen[i].Load(), "index %d", i)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, Parallel(ctx, 10, 2, func(int) error { return nil }), context.Canceled)
}
