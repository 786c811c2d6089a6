package release

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResolutionStopsWhenTheContextIsDone(t *testing.T) {
	interrupted := errors.New("interrupt signal received")
	cases := []struct {
		name string
		// cancelAt is the resolve call (1-based) during which the context is
		// cancelled; 0 cancels it before Runs starts.
		cancelAt  int
		wantCalls int
		wantErr   string
	}{
		{"before the first image", 0, 0, `tools.builder: stopped before resolving "registry.example.com/kaniko:v1": interrupt signal received`},
		{"while resolving the first image", 1, 1, `tools.builder: stopped while resolving "registry.example.com/kaniko:v1": interrupt signal received`},
		{"while resolving the second image", 2, 2, `tools.git: stopped while resolving "registry.example.com/git:v2": interrupt signal received`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse("m.yaml", []byte(validMatrix+"tools:\n  builder: registry.example.com/kaniko:v1\n  git: registry.example.com/git:v2\n"))
			require.NoError(t, err)
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			if tc.cancelAt == 0 {
				cancel(interrupted)
			}
			calls := 0
			resolve := func(ctx context.Context, image string) (string, error) {
				calls++
				if calls == tc.cancelAt {
					cancel(interrupted)
					<-ctx.Done() // a registry that answers only once the caller gives up
					return "", errors.New("Head: " + ctx.Err().Error())
				}
				return image + "@sha256:0", nil
			}
			runs, err := m.Runs(ctx, Options{ResolveImage: resolve})
			require.Error(t, err)
			assert.Nil(t, runs)
			assert.Equal(t, tc.wantCalls, calls, "no image is resolved after the context is done")
			assert.EqualError(t, err, tc.wantErr)
			assert.ErrorIs(t, err, interrupted)
		})
	}
}
