package publish

import (
	"maps"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// resourceKey names a resource of a kind; reconciles of a deleted one know
// only its name.
type resourceKey struct {
	kind string
	types.NamespacedName
}

// failures are the consecutive delivery failures of each resource's sinks,
// kept in memory while the resource holds undelivered events, and the
// consecutive-failures gauge they determine.
type failures struct {
	mu sync.Mutex
	of map[resourceKey]*resourceFailures
}

type resourceFailures struct {
	uid   types.UID // a new resource of the same name starts afresh
	sinks map[string]sinkFailure
}

func newFailures() *failures { return &failures{of: map[resourceKey]*resourceFailures{}} }

// current are the failing sinks of the resource key with uid.
func (f *failures) current(key resourceKey, uid types.UID) map[string]sinkFailure {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.of[key]
	if r == nil || r.uid != uid {
		return map[string]sinkFailure{}
	}
	return maps.Clone(r.sinks)
}

// failed records a failure of sink on the resource, due for a retry after
// backoff, and returns the sink's run of failures.
func (f *failures) failed(key resourceKey, uid types.UID, sink string, err error, now time.Time, backoff Backoff) sinkFailure {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.of[key]
	if r == nil || r.uid != uid {
		f.dropLocked(key)
		r = &resourceFailures{uid: uid, sinks: map[string]sinkFailure{}}
		f.of[key] = r
	}
	s := r.sinks[sink]
	s.count++
	s.lastError = err.Error()
	s.retryAt = now.Add(backoff.after(s.count))
	r.sinks[sink] = s
	f.updateGaugeLocked(sink)
	return s
}

// succeeded ends sink's run of failures on the resource.
func (f *failures) succeeded(key resourceKey, uid types.UID, sink string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r := f.of[key]; r != nil && r.uid == uid {
		delete(r.sinks, sink)
	}
	f.updateGaugeLocked(sink)
}

// forget drops the resource: it is gone or owes no sink anything.
func (f *failures) forget(key resourceKey) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dropLocked(key)
}

func (f *failures) dropLocked(key resourceKey) {
	r := f.of[key]
	if r == nil {
		return
	}
	delete(f.of, key)
	for sink := range r.sinks {
		f.updateGaugeLocked(sink)
	}
}

// updateGaugeLocked sets sink's gauge to its longest run of failures on
// any resource.
func (f *failures) updateGaugeLocked(sink string) {
	longest := 0
	for _, r := range f.of {
		longest = max(longest, r.sinks[sink].count)
	}
	sinkConsecutiveFailures.WithLabelValues(sink).Set(float64(longest))
}
