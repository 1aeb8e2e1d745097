package workloads_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"lockbench/lock"
	"lockbench/redislock/engine"
	"lockbench/workloads"
)

// countingCycle counts what the loop asks of it.
type countingCycle struct{ ready, uses, lost, unmeasured atomic.Int64 }

func (c *countingCycle) Ready() { c.ready.Add(1) }
func (c *countingCycle) Lost(*workloads.Worker) {
	c.lost.Add(1)
}
func (c *countingCycle) Use(w *workloads.Worker, h workloads.Held) {
	c.uses.Add(1)
	if !h.Measured {
		c.unmeasured.Add(1)
	}
	if h.Lock == nil || h.Acquired.Before(h.Start) {
		panic("held: no lock or acquired before it started")
	}
	// The cycle's own record folds with the loop's.
	r := w.Record(workloads.OpUse)
	r.Key, r.Measured, r.UseFailed = h.Key, h.Measured, true
	w.Fold(r)
}

// flakyLocker grants every other acquire and loses the rest to contention.
type flakyLocker struct {
	n        atomic.Int64
	released atomic.Int64
}

func (l *flakyLocker) Acquire(ctx context.Context, key string) (*lock.Lock, lock.Result) {
	now := time.Now()
	if l.n.Add(1)%2 == 0 {
		return nil, lock.Result{Attempts: 1, PerMaster: []engine.Outcome{engine.Taken}}
	}
	return &lock.Lock{Key: key, Start: now, ValidUntil: now.Add(time.Minute)},
		lock.Result{Acquired: true, Attempts: 1, Successes: 1, PerMaster: []engine.Outcome{engine.OK}}
}

func (l *flakyLocker) Release(context.Context, *lock.Lock) lock.OpResult {
	l.released.Add(1)
	return lock.OpResult{OK: true, Count: 1, PerMaster: []engine.Outcome{engine.OK}}
}

func (l *flakyLocker) Addrs() []string { return []string{"flaky"} }
func (l *flakyLocker) LateOutcomes() [][engine.NumOutcomes]int64 {
	return make([][engine.NumOutcomes]int64, 1)
}

// The worker loop with a pluggable cycle (chaos' client is one): the cycle
// is asked before every acquire, uses every lock won, hears of every one
// lost; the loop releases every lock, counts once (with the cycle's own
// counts) and stops at the quota.
func TestPluggableCycleAndQuota(t *testing.T) {
	lk := &flakyLocker{}
	cy := &countingCycle{}
	ch, _ := workloads.NewChooser(workloads.ChooserConfig{Keys: 100})
	const quota = 2000
	st, err := workloads.Run(context.Background(), lk, workloads.RunConfig{
		Workers: 4, Duration: time.Minute, Keys: workloads.Keys{Prefix: "cycle:", Count: 100}, Chooser: ch, Seed: 1,
		Cycle: cy, Quota: quota, FinishCycles: true, Start: time.Now().Add(20 * time.Millisecond),
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Interrupted {
		t.Error("a run stopped by its quota is not interrupted")
	}
	if st.Acquired < quota || st.Acquired >= quota+4 {
		t.Errorf("acquired %d; want the quota %d (at most one more per worker)", st.Acquired, quota)
	}
	if cy.uses.Load() != st.Acquired || lk.released.Load() != st.Acquired || st.UseErrors != st.Acquired {
		t.Errorf("uses %d, releases %d, use errors %d; want each = acquired %d", cy.uses.Load(), lk.released.Load(), st.UseErrors, st.Acquired)
	}
	if cy.unmeasured.Load() != 0 {
		t.Errorf("%d uses outside the window; with no warm-up every one is measured", cy.unmeasured.Load())
	}
	if cy.lost.Load() != st.NotAcquired || st.NotAcquired == 0 {
		t.Errorf("lost %d, not acquired %d; want equal and > 0", cy.lost.Load(), st.NotAcquired)
	}
	if cy.ready.Load() < st.Attempts() {
		t.Errorf("ready asked %d times for %d attempts", cy.ready.Load(), st.Attempts())
	}
	if pm := st.PerMaster[0]; pm[engine.OK] != st.Acquired || pm[engine.Taken] != st.NotAcquired {
		t.Errorf("per master %v; want ok = acquired %d, taken = not acquired %d", pm, st.Acquired, st.NotAcquired)
	}
	if st.Acquire.TotalCount() != st.Acquired || st.Release.TotalCount() != st.Acquired || st.AcquireFailed.TotalCount() != st.NotAcquired {
		t.Errorf("histograms %d/%d/%d; want %d acquires and releases, %d failed",
			st.Acquire.TotalCount(), st.Release.TotalCount(), st.AcquireFailed.TotalCount(), st.Acquired, st.NotAcquired)
	}
}
