// Package meta holds what the Tekton provider and the operator share
// beyond the keys on its objects (those are in internal/contract): how a
// scheduled run's due time is read, and the Provider parameter naming the
// account its steps run as (params.go).
package meta

import (
	"fmt"
	"strings"
	"time"
)

// ScheduledTime reads the scheduled time from the name the CronJob
// controller gives a Job: the CronJob's name, "-", and the scheduled time
// in minutes since the Unix epoch.
func ScheduledTime(jobName string) (time.Time, error) {
	i := strings.LastIndexByte(jobName, '-')
	var minutes int64
	if i < 0 {
		return time.Time{}, fmt.Errorf("job name %q has no scheduled time", jobName)
	}
	if _, err := fmt.Sscanf(jobName[i+1:], "%d", &minutes); err != nil || fmt.Sprint(minutes) != jobName[i+1:] {
		return time.Time{}, fmt.Errorf("job name %q does not end in the scheduled minute", jobName)
	}
	return time.Unix(minutes*60, 0).UTC(), nil
}
