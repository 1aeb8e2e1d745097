package chaos

import (
	"sync"
	"time"

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

// Fold counts a measured failed acquire in the bin it ended in.
func (f *failureTimes) Fold(r *workloads.Record) {
	if r.Op != workloads.OpAcquire || !r.Measured || r.Won() {
		return
	}
	f.add(r.Failure(), r.End)
}

func (f *failureTimes) add(why results.AcquireFailure, at time.Time) {
	bin := int64(at.Sub(f.t0) / FailureBin)
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
