package lifecycle

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCheckVersionRefusesWhatALabelCannotHoldWhole(t *testing.T) {
	for _, tc := range []struct {
		version string
		ok      bool
	}{
		{"0a1b2c3d4e", true},
		{"0.3.1-abcdef0", true},
		{strings.Repeat("a", 63), true},
		{"", false},
		{strings.Repeat("a", 64), false},
		{"1.0.0+build", false},
		{"-abc", false},
		{"abc.", false},
	} {
		err := checkVersion(tc.version)
		assert.Equal(t, tc.ok, err == nil, "%q: %v", tc.version, err)
	}
}
