package operator

import (
	"fmt"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// maxEventSinks is what PendingCompletionEvent.Sinks holds.
const maxEventSinks = 32

// ValidateEventSinks refuses sinks without a usable name or URL, and
// names used twice: a sink's name is what the outbox records.
func ValidateEventSinks(sinks []EventSink) error {
	if len(sinks) > maxEventSinks {
		return fmt.Errorf("%d event sinks: at most %d (an outbox entry names the sinks still to deliver to)", len(sinks), maxEventSinks)
	}
	seen := map[string]bool{}
	for _, s := range sinks {
		if errs := validation.IsDNS1123Label(s.Name); len(errs) > 0 {
			return fmt.Errorf("event sink name %q: %s", s.Name, strings.Join(errs, "; "))
		}
		if seen[s.Name] {
			return fmt.Errorf("event sink name %q is used twice", s.Name)
		}
		seen[s.Name] = true
		u, err := url.Parse(s.URL)
		if err != nil {
			return fmt.Errorf("event sink %s: %w", s.Name, err)
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("event sink %s: URL %q must be absolute http:// or https://", s.Name, s.URL)
		}
	}
	return nil
}

// SinkNames are the names of sinks, in order.
func SinkNames(sinks []EventSink) []string {
	names := make([]string, len(sinks))
	for i, s := range sinks {
		names[i] = s.Name
	}
	return names
}
