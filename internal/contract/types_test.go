package contract

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCheckVersion(t *testing.T) {
	assert.NoError(t, CheckVersion("provider", "resource", Version))
	err := CheckVersion("provider", "resource", "v2")
	assert.EqualError(t, err, `the resource has contractVersion "v2", but this provider understands only contractVersion v1: use a provider image made for this operator's version`)
	assert.ErrorContains(t, CheckVersion("compiler", "pipeline-config", ""), "the pipeline-config has no contractVersion")
}
