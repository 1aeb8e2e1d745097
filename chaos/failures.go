package chaos

import (
	"sync"
	"time"

	"lockbench/engine"
	"lockbench/results"
	"lockbench/workloads"
)

// failureTimes counts a client's failed acquires by FailureBin since t0 and
// by why, so that a failover's unavailability window can be counted apart
// from the rest of the cell.
type failureTimes struct {
	t0   time.Time
	mu   sync.Mutex
	bins map[int64][3]int64
}

func (f *failureTimes) add(why results.AcquireFailure) {
	bin := int64(time.Since(f.t0) / FailureBin)
	f.mu.Lock()
	b := f.bins[bin]
	b[why]++
	f.bins[bin] = b
	f.mu.Unlock()
}

func (f *failureTimes) snapshot() map[int64][3]int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[int64][3]int64, len(f.bins))
	for k, v := range f.bins {
		out[k] = v
	}
	return out
}

// failureTap is the worker loop's observer with failureTimes: it counts
// the failed acquires and hands every event on to the client's own
// observer, if it has one.
type failureTap struct {
	inner workloads.Observer
	times *failureTimes
}

func (t failureTap) Failed(latency time.Duration, perMaster []engine.Outcome, why results.AcquireFailure) {
	t.times.add(why)
	if t.inner != nil {
		t.inner.Failed(latency, perMaster, why)
	}
}

func (t failureTap) AcquireStarted() {
	if t.inner != nil {
		t.inner.AcquireStarted()
	}
}

func (t failureTap) AcquireEnded() {
	if t.inner != nil {
		t.inner.AcquireEnded()
	}
}

func (t failureTap) Cycle(acquire, uncorrected, release time.Duration, perMaster []engine.Outcome) {
	if t.inner != nil {
		t.inner.Cycle(acquire, uncorrected, release, perMaster)
	}
}

func (t failureTap) Waited(d time.Duration, locked bool) {
	if t.inner != nil {
		t.inner.Waited(d, locked)
	}
}

func (t failureTap) Extended(ok bool) {
	if t.inner != nil {
		t.inner.Extended(ok)
	}
}

func (t failureTap) Violation() {
	if t.inner != nil {
		t.inner.Violation()
	}
}

func (t failureTap) Started(lag time.Duration) {
	if t.inner != nil {
		t.inner.Started(lag)
	}
}

func (t failureTap) Scheduled(offered, unserved int64) {
	if t.inner != nil {
		t.inner.Scheduled(offered, unserved)
	}
}
