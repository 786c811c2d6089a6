package tektonprovider

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kfp-tekton-operator/kfp-tekton-operator/internal/cronspec"
)

// CronSchedule turns a RunSchedule's cron expression (cronspec's dialect)
// into a CronJob's schedule and time zone. CronJobs have no seconds field:
// a six-field expression is accepted only when its seconds field is 0,
// as KFP writes it.
func CronSchedule(expr string) (string, *string, error) {
	if err := cronspec.Validate(expr); err != nil {
		return "", nil, err
	}
	var tz *string
	rest := expr
	for _, prefix := range []string{"CRON_TZ=", "TZ="} {
		if after, ok := strings.CutPrefix(expr, prefix); ok {
			zone, schedule, _ := strings.Cut(after, " ")
			if _, err := time.LoadLocation(zone); err != nil {
				return "", nil, fmt.Errorf("cron expression %q: unknown time zone %q", expr, zone)
			}
			tz, rest = &zone, strings.TrimSpace(schedule)
		}
	}
	fields := strings.Fields(rest)
	if len(fields) == 6 {
		if fields[0] != "0" {
			return "", nil, fmt.Errorf("cron expression %q: the Tekton provider schedules with Kubernetes CronJobs, which run at whole minutes: the seconds field must be 0", expr)
		}
		fields = fields[1:]
	}
	return strings.Join(fields, " "), tz, nil
}

// InWindow says whether a run scheduled at t falls within the schedule's
// start and end times (either may be zero: no bound).
func InWindow(t, start, end time.Time) bool {
	return (start.IsZero() || !t.Before(start)) && (end.IsZero() || !t.After(end))
}

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }
