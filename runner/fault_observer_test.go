package runner

import (
	"sync/atomic"
	"testing"
	"time"

	"lockbench/chaos"
	"lockbench/plan"
	"lockbench/workloads"
)

// countingObserver tallies what in-process clients report live.
type countingObserver struct {
	inFlight, cycles, failed, violations, lost, rejected, workers atomic.Int64
}

func (o *countingObserver) AcquireStarted() { o.inFlight.Add(1) }
func (o *countingObserver) AcquireEnded()   { o.inFlight.Add(-1) }

// Fold counts the records itself, apart from workloads.Counts.Fold, which
// makes the result's counts.
func (o *countingObserver) Fold(r *workloads.Record) {
	switch {
	case r.Op == workloads.OpUse:
		if r.Judged && !r.Clear {
			o.violations.Add(1)
		}
		o.lost.Add(r.Lost)
		if r.Rejected {
			o.rejected.Add(1)
		}
	case !r.Measured || r.Op != workloads.OpAcquire:
	case r.Won():
		o.cycles.Add(1)
	default:
		o.failed.Add(1)
	}
}
func (o *countingObserver) Started(time.Duration)  {}
func (o *countingObserver) Scheduled(int64, int64) {}
func (o *countingObserver) SetWorkers(n int)       { o.workers.Store(int64(n)) }

// AddCounts: client processes report in bulk.
func (o *countingObserver) AddCounts(d workloads.Counts) {
	o.cycles.Add(d.Acquired)
	o.failed.Add(d.NotAcquired + d.Errors + d.Unconfirmed)
	o.violations.Add(d.Violations)
	o.lost.Add(d.LostUpdates)
	o.rejected.Add(d.StaleWritesRejected)
}

// observeWith makes opt give every fault cell obs as its observer.
func observeWith(opt *Options, obs chaos.Observer) {
	opt.observe = func(plan.Cell) chaos.Observer { return obs }
}

func (o *countingObserver) check(t *testing.T, r *CellResult) {
	t.Helper()
	out := r.Run.Outcomes
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"cycles", o.cycles.Load(), out.Acquired},
		{"failed acquires", o.failed.Load(), out.NotAcquired + out.Errors + out.Unconfirmed},
		{"in flight at the end", o.inFlight.Load(), 0},
		{"violations (live probe)", o.violations.Load(), int64(r.Value("probe_violations"))},
		{"workers after the cell", o.workers.Load(), 0},
	} {
		if c.got != c.want {
			t.Errorf("live %s: %d, the result says %d", c.name, c.got, c.want)
		}
	}
	o.checkWrites(t, r)
}

// checkWrites: what the writes saw live against the resource's ledger. A
// write whose reply was lost (a resource error: its command timed out on a
// loaded machine) may have landed, refused or overwriting: the ledger
// counts it, its client could not. So live ≤ the result, equal when no
// reply was lost, and the refused writes differ by at most one per lost
// reply (an idle stress run saw 7 live against 9 once).
func (o *countingObserver) checkWrites(t *testing.T, r *CellResult) {
	t.Helper()
	s, doubt := r.Run.Safety, int64(0)
	if cc := r.Run.Config; cc != nil && cc.ChaosConfig != nil {
		doubt = cc.Checks.ResourceErrors
	}
	lost, rejected := o.lost.Load(), o.rejected.Load()
	if lost > s.LostUpdates || (doubt == 0 && lost != s.LostUpdates) {
		t.Errorf("live lost updates (seen by the writes): %d, the result says %d (%d writes' replies lost)", lost, s.LostUpdates, doubt)
	}
	if rejected > s.StaleWritesRejected || s.StaleWritesRejected-rejected > doubt {
		t.Errorf("live stale writes rejected: %d, the result says %d (%d writes' replies lost)", rejected, s.StaleWritesRejected, doubt)
	}
}

// checkFaultTimeline: the per-second safety series adds up to the totals.
func checkFaultTimeline(t *testing.T, r *CellResult) {
	t.Helper()
	var v, l, w int64
	for _, s := range r.Run.Safety.Timeline {
		v, l, w = v+s.Violations, l+s.LostUpdates, w+s.StaleWritesRejected
	}
	s := r.Run.Safety
	if v != s.Violations || l != s.LostUpdates || w != s.StaleWritesRejected {
		t.Errorf("timeline sums to %d violations, %d lost updates, %d stale writes rejected; the check found %d, %d, %d",
			v, l, w, s.Violations, s.LostUpdates, s.StaleWritesRejected)
	}
}
