package cronspec

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestValidate(t *testing.T) {
	valid := []string{"0 2 * * *", "*/15 * * * *", "0 0 2 * * *", "0 9 * * MON-FRI", "0 0 1 JAN *", "@daily", "@weekly", "@every 5m", "@every 1h30m", "0 2 ? * *"}
	for _, expr := range valid {
		assert.NoError(t, Validate(expr), expr)
	}
	invalid := map[string]string{
		"99 99 99 99 99":       "above maximum",
		"foo bar baz qux quux": "foo",
		"*/0 * * * *":          "step",
		"-1 -1 -1 -1 -1":       "-1",
		"0 2 * *":              "",
		"@every":               "",
		"@every -5m":           "at least 1m0s",
		"@every 10s":           "at least 1m0s",
		"@fortnightly":         "",
		"0 0 0 0 0 0 0":        "",
		"60 * * * *":           "above maximum",
		"0 24 * * *":           "above maximum",
		"0 0 32 * *":           "above maximum",
		"0 0 * 13 *":           "above maximum",
	}
	for expr, why := range invalid {
		err := Validate(expr)
		if assert.Error(t, err, expr) {
			assert.Contains(t, err.Error(), why, expr)
			assert.Contains(t, err.Error(), "cron expression \""+expr+"\"")
		}
	}
}
