package measure

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// APIServerCounts sums kube-apiserver's own counters from its Prometheus
// text exposition, so a phase's work is seen from the server whoever asked:
// "VERB resource[/subresource]" from apiserver_request_total, "watch
// events resource" from apiserver_watch_events_total (what was sent to
// every watcher), and "webhook NAME OPERATION" from the admission webhooks'
// call counts.
func APIServerCounts(metrics io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	lines := bufio.NewScanner(metrics)
	lines.Buffer(make([]byte, 64*1024), 1<<20)
	for lines.Scan() {
		line := lines.Text()
		metric, rest, ok := strings.Cut(line, "{")
		if !ok {
			continue
		}
		var key string
		labels := promLabels(rest)
		switch metric {
		case "apiserver_request_total":
			key = labels["verb"] + " " + labels["resource"]
			if sub := labels["subresource"]; sub != "" {
				key += "/" + sub
			}
		case "apiserver_watch_events_total":
			key = "watch events " + labels["resource"]
		case "apiserver_admission_webhook_admission_duration_seconds_count":
			key = "webhook " + labels["name"] + " " + labels["operation"]
		default:
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", line, err)
		}
		out[key] += v
	}
	return out, lines.Err()
}

// promLabels reads `a="x",b="y"} value` into its labels (the values these
// counters carry hold no quotes or commas).
func promLabels(s string) map[string]string {
	labels := map[string]string{}
	s, _, _ = strings.Cut(s, "}")
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok {
			labels[k] = strings.Trim(v, `"`)
		}
	}
	return labels
}

// CountDelta is one counter's growth over a span.
type CountDelta struct {
	Key   string
	Delta float64
}

// Grown is how much each counter grew from before to after, the largest
// first, without those that did not; nothing if either is missing (nil: a
// read that failed), rather than every counter's total since the start.
func Grown(before, after map[string]float64) []CountDelta {
	if before == nil || after == nil {
		return nil
	}
	var out []CountDelta
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			out = append(out, CountDelta{Key: k, Delta: d})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Delta != out[j].Delta {
			return out[i].Delta > out[j].Delta
		}
		return out[i].Key < out[j].Key
	})
	return out
}
