// Package cronspec parses the cron expressions of RunSchedules and
// RunConfiguration schedules before anything reaches a backend.
//
// The dialect: five fields (minute, hour, day of month, month, day of
// week), or six with a leading seconds field as KFP uses; names for months
// and days (JAN, MON); `*`, `?`, ranges, lists and steps; or a descriptor:
// @yearly (@annually), @monthly, @weekly, @daily (@midnight), @hourly,
// @every DURATION (Go syntax, e.g. 90m; at least a minute: the parser would
// turn a shorter or negative one into every second). The API's schema refuses what is
// plainly not cron; this parser refuses values out of range, zero steps and
// the like, which a pattern cannot see.
package cronspec

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// MinInterval is the shortest @every schedule.
const MinInterval = time.Minute

var parser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Validate says why expr is not a cron expression of the dialect, or nil.
func Validate(expr string) error {
	if every, ok := strings.CutPrefix(expr, "@every "); ok {
		d, err := time.ParseDuration(strings.TrimSpace(every))
		if err != nil || d < MinInterval {
			return fmt.Errorf("cron expression %q: @every needs a duration of at least %s", expr, MinInterval)
		}
	}
	// The parser (robfig/cron v3.0.1) panics on a time zone prefix with
	// nothing after it ("TZ=", "CRON_TZ=Europe/Berlin").
	for _, tz := range []string{"TZ=", "CRON_TZ="} {
		if strings.HasPrefix(expr, tz) && !strings.Contains(expr, " ") {
			return fmt.Errorf("cron expression %q: a time zone with no schedule after it", expr)
		}
	}
	if _, err := parser.Parse(expr); err != nil {
		return fmt.Errorf("cron expression %q: %w (want 5 fields, 6 with seconds first, or a descriptor such as @daily or @every 1h)", expr, err)
	}
	return nil
}
