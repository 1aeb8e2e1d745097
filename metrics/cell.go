package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"lockbench/lock"
	"lockbench/results"
	"lockbench/workloads"
)

// Cell is one cell's view of the exporter: every child series resolved when
// the cell starts, so the workers' calls are atomic adds. Its methods are
// safe for concurrent use. Counters of earlier cells stay exported: a sweep's
// counters only grow, the cell being a label.
type Cell struct {
	cycles                            prometheus.Counter
	acquired, notAcquired, errored    prometheus.Counter
	unconfirmed                       prometheus.Counter
	replies                           [][lock.NumOutcomes]prometheus.Counter // [master][outcome]
	extendOK, extendFailed            prometheus.Counter
	violations, lostUpdates, rejected prometheus.Counter
	offered, unserved, started        prometheus.Counter
	acquire, uncorrected, failed      prometheus.Observer
	release, timeToLock               prometheus.Observer
	gaveUp                            prometheus.Counter
	inFlight, workers, pacerLag, rate prometheus.Gauge
	// linearizable is made when a verdict comes, so that no cell shows a
	// 0 (not linearizable) that nothing judged.
	linearizable func() prometheus.Gauge
}

// Cell resolves the series of one cell; masters are display addresses
// (no credentials), in the engine's order.
func (e *Exporter) Cell(l Labels, masters []string) *Cell {
	lv := l.values()
	with := func(extra ...string) []string { return append(append([]string(nil), lv...), extra...) }
	v := e.vec
	c := &Cell{
		cycles:       v.cycles.WithLabelValues(lv...),
		acquired:     v.acquires.WithLabelValues(with("acquired")...),
		notAcquired:  v.acquires.WithLabelValues(with("not_acquired")...),
		errored:      v.acquires.WithLabelValues(with("error")...),
		unconfirmed:  v.acquires.WithLabelValues(with("few_acks")...),
		extendOK:     v.extends.WithLabelValues(with("ok")...),
		extendFailed: v.extends.WithLabelValues(with("failed")...),
		violations:   v.violations.WithLabelValues(lv...),
		lostUpdates:  v.lostUpdates.WithLabelValues(lv...),
		rejected:     v.staleWrites.WithLabelValues(lv...),
		offered:      v.offered.WithLabelValues(lv...),
		unserved:     v.unserved.WithLabelValues(lv...),
		started:      v.started.WithLabelValues(lv...),
		rate:         v.rate.WithLabelValues(lv...),
		acquire:      v.acquire.WithLabelValues(lv...),
		uncorrected:  v.uncorrected.WithLabelValues(lv...),
		failed:       v.failed.WithLabelValues(lv...),
		release:      v.release.WithLabelValues(lv...),
		timeToLock:   v.timeToLock.WithLabelValues(lv...),
		gaveUp:       v.gaveUp.WithLabelValues(lv...),
		inFlight:     v.inFlight.WithLabelValues(lv...),
		workers:      v.workers.WithLabelValues(lv...),
		pacerLag:     v.pacerLag.WithLabelValues(lv...),
		linearizable: func() prometheus.Gauge { return v.linearizable.WithLabelValues(lv...) },
		replies:      make([][lock.NumOutcomes]prometheus.Counter, len(masters)),
	}
	for m, addr := range masters {
		for o := range lock.NumOutcomes {
			c.replies[m][o] = v.masterReplies.WithLabelValues(with(addr, o.String())...)
		}
	}
	return c
}

// SetLinearizable shows the outside judge's verdict on a fault cell's
// history: 1 linearizable, 0 not, -1 unknown.
func (c *Cell) SetLinearizable(verdict string) {
	v := -1.0
	switch verdict {
	case results.Linearizable:
		v = 1
	case results.NotLinearizable:
		v = 0
	}
	c.linearizable().Set(v)
}

// SetWorkers shows the cell's workers (0 when it ends).
func (c *Cell) SetWorkers(n int) { c.workers.Set(float64(n)) }

// AcquireStarted and AcquireEnded bracket every acquire (in-flight gauge).
func (c *Cell) AcquireStarted() { c.inFlight.Inc() }

// AcquireEnded: see AcquireStarted.
func (c *Cell) AcquireEnded() { c.inFlight.Dec() }

// Fold counts a record and observes its latencies, as the run counts it
// (workloads.Counts.Fold): outcomes of the measured window, a use's
// findings whenever they happened. A cycle counts at its release here; a
// client process's reach AddCounts counted with their acquires.
func (c *Cell) Fold(r *workloads.Record) {
	if r.Op == workloads.OpUse {
		c.foundInUse(r)
		return
	}
	if !r.Measured {
		return
	}
	switch r.Op {
	case workloads.OpAcquire:
		c.acquireEnded(r)
	case workloads.OpRelease:
		c.cycles.Inc()
		c.release.Observe(r.Latency().Seconds())
	case workloads.OpExtend:
		if r.Reply.OK {
			c.extendOK.Inc()
		} else {
			c.extendFailed.Inc()
		}
	}
}

// acquireEnded counts an acquire: won, or lost to contention (taken, or a
// quorum too slow), to errors (servers timed out or failed) or to few
// acks (WAIT saw too few replicas); and a caller's time to lock, or its
// giving up.
func (c *Cell) acquireEnded(r *workloads.Record) {
	c.replied(r.Result.PerMaster)
	if r.Won() {
		c.acquired.Inc()
		c.acquire.Observe(r.Latency().Seconds())
		if r.OpenLoop {
			c.uncorrected.Observe(r.Uncorrected().Seconds())
		}
		c.timeToLock.Observe(r.Waited().Seconds())
		return
	}
	switch r.Failure() {
	case results.LostToContention:
		c.notAcquired.Inc()
	case results.LostUnconfirmed:
		c.unconfirmed.Inc()
	default:
		c.errored.Inc()
	}
	c.failed.Observe(r.Latency().Seconds())
	if r.GaveUp {
		c.gaveUp.Inc()
	}
}

// foundInUse counts what a use found: an overlapping hold the probe saw,
// acknowledged writes it overwrote, a fenced write refused (chaos).
func (c *Cell) foundInUse(r *workloads.Record) {
	if r.Judged && !r.Clear {
		c.violations.Inc()
	}
	c.LostUpdates(r.Lost)
	if r.Rejected {
		c.rejected.Inc()
	}
}

func (c *Cell) replied(perMaster []lock.Outcome) {
	for m, o := range perMaster {
		if m < len(c.replies) && o < lock.NumOutcomes {
			c.replies[m][o].Inc()
		}
	}
}

// SetRate shows the open-loop rate offered (0 in closed loop): live, the
// unserved rate is this minus rate(lockbench_open_loop_started_total).
func (c *Cell) SetRate(perSecond float64) { c.rate.Set(perSecond) }

// Started counts an open-loop start in the window and shows how late the
// generator made it (the pacer lag).
func (c *Cell) Started(lag time.Duration) {
	c.started.Inc()
	c.pacerLag.Set(lag.Seconds())
}

// Scheduled adds a finished cell's open-loop starts offered and unserved
// (known exactly once the schedule is over).
func (c *Cell) Scheduled(offered, unserved int64) {
	c.offered.Add(float64(offered))
	c.unserved.Add(float64(max(unserved, 0)))
}

// LostUpdates counts acknowledged writes overwritten by an overlapping
// holder (chaos).
func (c *Cell) LostUpdates(n int64) {
	if n > 0 {
		c.lostUpdates.Add(float64(n))
	}
}

// AddCounts adds counts reported in bulk: what a chaos client process
// counted since its last report (it has no latencies to give).
func (c *Cell) AddCounts(t workloads.Counts) {
	c.cycles.Add(float64(t.Acquired))
	c.acquired.Add(float64(t.Acquired))
	c.notAcquired.Add(float64(t.NotAcquired))
	c.errored.Add(float64(t.Errors))
	c.unconfirmed.Add(float64(t.Unconfirmed))
	c.violations.Add(float64(t.Violations))
	c.LostUpdates(t.LostUpdates)
	c.rejected.Add(float64(t.StaleWritesRejected))
	for m := range t.PerMaster {
		for o, n := range t.PerMaster[m] {
			if m < len(c.replies) && n > 0 {
				c.replies[m][o].Add(float64(n))
			}
		}
	}
}
