package lifecycle

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestBackoffDoublesUpToTheCap(t *testing.T) {
	b := Backoff{Base: 10 * time.Second, Max: time.Minute}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, time.Minute}
	for i, w := range want {
		assert.Equal(t, w, b.after(i+1), "after %d failures", i+1)
	}
}
