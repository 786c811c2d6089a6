// Package spechash hashes a spec to a short, stable string. The lifecycle
// engine asks each kind for a version (any string) and the kinds, the
// engine itself and the RunConfiguration controller (for RunSchedule
// names) make theirs with this one function; it is no part of the engine's
// interface, so it lives apart from it.
package spechash

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Of is a short, stable hash of v's JSON: the version of specs that have
// no version of their own. Versions made with it are stored in statuses
// and RunSchedule names: never change what it returns for a given JSON.
func Of(v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])[:10], nil
}
