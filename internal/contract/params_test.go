package contract

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParamEncodingKeepsEveryByte(t *testing.T) {
	for _, value := range []string{
		`pa$$word`, `$(KFP_RESOURCE)`, `$(context.taskRun.name)`, `$(params.resource)`, `$(results.provider-id.path)`,
		"quote \" backslash \\ newline \n tab \t", "non-ASCII: żółć 日本 🚀", "\x00\x01", strings.Repeat("$", 1000),
	} {
		data, err := json.Marshal(map[string]string{"value": value})
		require.NoError(t, err)
		encoded := EncodeParam(data)
		assert.NotContains(t, encoded, "$", "nothing for Tekton or the kubelet to substitute")
		decoded, err := DecodeParam(encoded)
		require.NoError(t, err)
		assert.Equal(t, data, decoded)
	}
}

func TestDecodeParam(t *testing.T) {
	plain, err := DecodeParam(`{"legacy":true}`)
	require.NoError(t, err)
	assert.Equal(t, `{"legacy":true}`, string(plain), "plain JSON from runs made before the encoding")
	_, err = DecodeParam(EncodedPrefix + "not base64!")
	assert.ErrorContains(t, err, "not valid base64")
}
