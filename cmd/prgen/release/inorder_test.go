package release

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInOrderEmitsAsASequentialLoopWould(t *testing.T) {
	cases := []struct {
		name                 string
		n, chunk, workers    int
		failAt               int // the item whose work fails; -1 none
		failEmitAt           int // the chunk whose emit fails; -1 none
		wantEmitted, wantErr string
	}{
		{"nothing", 0, 4, 2, -1, -1, "", ""},
		{"one partial chunk", 3, 4, 2, -1, -1, "[0 3)", ""},
		{"chunks finish out of order", 10, 3, 3, -1, -1, "[0 3)[3 6)[6 9)[9 10)", ""},
		{"more workers than chunks", 5, 5, 8, -1, -1, "[0 5)", ""},
		{"a zero chunk is one item", 3, 0, 2, -1, -1, "[0 1)[1 2)[2 3)", ""},
		{"the first failure in item order wins", 12, 2, 3, 5, -1, "[0 2)[2 4)", "item 5"},
		{"a failed emit stops the rest", 12, 2, 3, -1, 1, "[0 2)[2 4)", "emit 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var emitted string
			chunks := 0
			work := func(lo, hi int) (string, error) {
				// Later chunks finish first, so order comes from inOrder, not luck.
				time.Sleep(time.Duration(tc.n-lo) * time.Millisecond)
				for i := lo; i < hi; i++ {
					if i == tc.failAt || (tc.failAt >= 0 && i == tc.failAt+4) {
						return "", fmt.Errorf("item %d", i)
					}
				}
				return fmt.Sprintf("[%d %d)", lo, hi), nil
			}
			emit := func(s string) error {
				defer func() { chunks++ }()
				if chunks == tc.failEmitAt {
					emitted += s
					return fmt.Errorf("emit %d", chunks)
				}
				emitted += s
				return nil
			}
			err := inOrder(tc.n, tc.chunk, tc.workers, work, emit)
			if tc.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.EqualError(t, err, tc.wantErr)
			}
			assert.Equal(t, tc.wantEmitted, emitted)
		})
	}
}

func TestInOrderBoundsWorkAheadOfASlowEmit(t *testing.T) {
	var (
		worked, emitted atomic.Int32
		mu              sync.Mutex
		maxAhead        int32
	)
	work := func(lo, hi int) (int, error) {
		ahead := worked.Add(1) - emitted.Load()
		mu.Lock()
		defer mu.Unlock()
		maxAhead = max(maxAhead, ahead)
		return lo, nil
	}
	emit := func(int) error {
		time.Sleep(time.Millisecond)
		emitted.Add(1)
		return nil
	}
	require.NoError(t, inOrder(200, 1, 2, work, emit))
	assert.EqualValues(t, 200, emitted.Load())
	assert.LessOrEqual(t, maxAhead, int32(2*2+1), "at most 2×workers chunks are worked ahead of emit")
}

func TestInOrderStopsStartingChunksAfterAFailure(t *testing.T) {
	var started atomic.Int32
	work := func(lo, hi int) (int, error) {
		started.Add(1)
		if lo == 0 {
			return 0, errors.New("first")
		}
		return lo, nil
	}
	require.EqualError(t, inOrder(1000, 1, 2, work, func(int) error { return nil }), "first")
	assert.Less(t, started.Load(), int32(10), "chunks after a failure are not worked")
}
