// Package seal authenticates the records the operator keeps in statuses
// that tenants may also write (DESIGN §15): a completion event waiting for
// its sinks, a RunConfiguration's latest succeeded run. Each record carries
// an HMAC-SHA256 of its fields and of the resource it belongs to, made with
// a key only the operator holds; a record whose seal does not verify was
// not written by the operator (or was moved from another resource) and is
// never acted on.
package seal

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"
)

// MinKeyBytes is the shortest key accepted: HMAC-SHA256's block of entropy.
const MinKeyBytes = 32

// version prefixes every seal, so a later scheme can tell its own apart.
const version = "v1."

// Purpose says what kind of record a seal is for, so a seal made for one
// kind of record never verifies another whose fields happen to match.
type Purpose string

// The records the operator seals.
const (
	CompletionEvent Purpose = "completion-event"
	LatestSucceeded Purpose = "latest-succeeded"
)

// Key seals and verifies records.
type Key struct{ secret []byte }

// NewKey is a Key of secret, which must have at least MinKeyBytes.
func NewKey(secret []byte) (*Key, error) {
	if len(secret) < MinKeyBytes {
		return nil, fmt.Errorf("a seal key needs at least %d bytes, got %d", MinKeyBytes, len(secret))
	}
	return &Key{secret: append([]byte(nil), secret...)}, nil
}

// Seal is the seal of a record for purpose made of fields, in order.
func (k *Key) Seal(purpose Purpose, fields ...string) string {
	return version + base64.RawURLEncoding.EncodeToString(k.mac(purpose, fields))
}

// Verify says whether seal is the seal of purpose and fields.
func (k *Key) Verify(seal string, purpose Purpose, fields ...string) bool {
	encoded, ok := strings.CutPrefix(seal, version)
	if !ok {
		return false
	}
	got, err := base64.RawURLEncoding.DecodeString(encoded)
	if err != nil {
		return false
	}
	return hmac.Equal(got, k.mac(purpose, fields))
}

// mac hashes each field with its length first, so no two different lists
// of fields ("ab","c" and "a","bc") hash the same bytes.
func (k *Key) mac(purpose Purpose, fields []string) []byte {
	h := hmac.New(sha256.New, k.secret)
	var n [binary.MaxVarintLen64]byte
	for _, f := range append([]string{string(purpose)}, fields...) {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(f)))])
		h.Write([]byte(f))
	}
	return h.Sum(nil)
}
