// Package contract holds what the operator and the shared Tasks agree on
// beyond the Task definitions themselves (tasks/README.md): how params are
// encoded so they reach the provider unchanged.
package contract

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// EncodedPrefix marks a JSON param the operator encoded with base64.
//
// Params reach the steps through environment variables, and two rounds of
// substitution run over them before a step starts: Tekton replaces
// $(context.…), $(params.…) and similar inside the values, and the kubelet
// expands $(NAME) from other variables and turns $$ into $. A user's
// `pa$$word` would reach the provider as `pa$word`. Base64 has no `$`, so
// every byte a user wrote reaches the provider unchanged.
const EncodedPrefix = "base64:"

// EncodeParam is the param value carrying data.
func EncodeParam(data []byte) string {
	return EncodedPrefix + base64.StdEncoding.EncodeToString(data)
}

// DecodeParam returns the data a param value carries: base64 after
// EncodedPrefix, or the value itself (JSON never starts with the prefix, and
// runs created before the encoding carry plain JSON).
func DecodeParam(value string) ([]byte, error) {
	encoded, ok := strings.CutPrefix(value, EncodedPrefix)
	if !ok {
		return []byte(value), nil
	}
	data, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return nil, fmt.Errorf("param is not valid base64 after %q: %w", EncodedPrefix, err)
	}
	return data, nil
}
