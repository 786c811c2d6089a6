package cronspec

import (
	"strings"
	"testing"
	"time"
)

// FuzzValidate: any text is accepted or refused with an error naming it,
// never a panic; what is accepted has a schedule that answers Next, and an
// @every schedule is never shorter than MinInterval.
func FuzzValidate(f *testing.F) {
	for _, s := range []string{
		"0 * * * *", "*/5 * * * *", "0 0 12 * * ?", "0 0 1 1 *", "0 0 * * MON-FRI", "0 0 1 JAN,JUL *",
		"@daily", "@midnight", "@yearly", "@every 90m", "@every 1m", "@every 59s", "@every -1h", "@every 0",
		"@every 1h30m", "@every  1h", "@every", "@hourly ", "", " ", "* * * *", "* * * * * * *",
		"60 * * * *", "*/0 * * * *", "5-1 * * * *", "1-2-3 * * * *", "0 0 30 2 *", "TZ=UTC 0 * * * *",
		"CRON_TZ=Europe/Berlin 0 6 * * *", "CRON_TZ=Nowhere/X 0 * * * *", "0 0 ? ? ?", "L * * * *",
		"9999999999999999999 * * * *", "*/9999999999999999999 * * * *", "\x00 * * * *", "0 0 * * 7",
	} {
		f.Add(s)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, expr string) {
		err := Validate(expr)
		if err != nil {
			if !strings.Contains(err.Error(), "cron expression") {
				t.Fatalf("Validate(%q): error %q does not say what it refuses", expr, err)
			}
			return
		}
		sched, perr := parser.Parse(expr)
		if perr != nil {
			t.Fatalf("Validate accepted %q that the parser refuses: %v", expr, perr)
		}
		next := sched.Next(start)
		if every, ok := strings.CutPrefix(expr, "@every "); ok {
			d, _ := time.ParseDuration(strings.TrimSpace(every))
			if d < MinInterval {
				t.Fatalf("Validate accepted %q: shorter than %s", expr, MinInterval)
			}
			if got := next.Sub(start); got < MinInterval {
				t.Fatalf("%q: first run after %s", expr, got)
			}
		}
	})
}
