package workloads

import (
	"time"

	"lockbench/lock"
	"lockbench/results"
)

// Op is the operation a Record is of.
type Op uint8

const (
	// OpAcquire: an acquire ended, with the lock (Lock set) or without.
	OpAcquire Op = iota
	// OpRelease: a won lock was released.
	OpRelease
	// OpExtend: a held lock was extended (auto-extension).
	OpExtend
	// OpUse: a won lock's use ended (a hold, a protected read and write).
	OpUse
)

// Record is one operation's outcome. The worker loop and the cycles make
// one per acquire, release, extend and use, and reducers fold it: the
// worker's counts and waits, the latency histograms, the hottest keys,
// live metrics, a fault cell's failure times. As vegeta's Result is folded
// by its Metrics. Records are folded inside the process that made them:
// what crosses to a cell from a client process is the folded counts.
type Record struct {
	Op     Op
	Worker int
	Key    uint64 // the key's index
	// Measured: inside the measured window. A record outside it counts
	// only for what a use found (an overlap, lost updates, a refused
	// write), as the probe and the resource count those.
	Measured bool
	// Intended is when an acquire was due (an open loop's schedule; its
	// start in closed loop): latency and time to lock count from it.
	Intended   time.Time
	Start, End time.Time
	// OpenLoop: an open loop's acquire, whose latency from its actual
	// start (Uncorrected) is kept apart.
	OpenLoop bool

	// Acquire: what the lock client said (attempts, commands sent, the
	// servers' outcomes; the token and validity are the Lock's), and the
	// lock won (nil: none).
	Result lock.Result
	Lock   *lock.Lock
	// GaveUp: a failed acquire was a caller that waited and gave up (the
	// locker waits, and the run did not cut it short).
	GaveUp bool
	// Handed: the key was freed while this caller waited; Gap is the time
	// from that release to this acquire's end.
	Handed bool
	Gap    time.Duration

	// Release and extend: what it saw; a release's Held is how long the
	// lock was held, from its acquire to the end of its use.
	Reply lock.OpResult
	Held  time.Duration

	// Use: the probe's verdict on the hold (Judged: it had a validity
	// window; Clear: no other holder was inside it), whether the validity
	// ran out before the hold ended (Overran), whether the use failed
	// (UseFailed: a resource's read or write), the acknowledged writes its
	// write overwrote (Lost) and whether its fenced write was refused.
	Judged, Clear, Overran, UseFailed, Rejected bool
	Lost                                        int64
}

// Reducer folds records. Fold runs on the goroutine that made the record
// (a worker's): it must be cheap, and it must not keep r, which its maker
// reuses. A reducer that workers share is safe for concurrent use.
type Reducer interface {
	Fold(r *Record)
}

// Won says whether an acquire record holds the lock.
func (r *Record) Won() bool { return r.Lock != nil }

// Latency is a won acquire's latency from its intended start, the earlier
// attempts and waits left out (time to lock keeps them), a failed
// acquire's from its intended start to giving up, and a release's or an
// extend's own time.
func (r *Record) Latency() time.Duration {
	if r.Op != OpAcquire {
		return r.Reply.Elapsed
	}
	if r.Won() {
		return r.End.Sub(r.Intended) - r.Result.LastStart
	}
	return r.End.Sub(r.Intended)
}

// Uncorrected is a won acquire's latency from its actual start (open
// loop: without the wait for a free worker).
func (r *Record) Uncorrected() time.Duration { return r.End.Sub(r.Start) - r.Result.LastStart }

// Waited is an acquire's whole wait from its intended start: the time to
// lock of a won one, what a failed one waited before it gave up.
func (r *Record) Waited() time.Duration { return r.End.Sub(r.Intended) }

// Failure is why a failed acquire failed.
func (r *Record) Failure() results.AcquireFailure { return FailureOf(r.Result) }

// Fold counts a record: the outcomes of the measured window, and what a
// use found whenever it happened.
func (c *Counts) Fold(r *Record) {
	if r.Op == OpUse {
		c.foldUse(r)
		return
	}
	if !r.Measured {
		return
	}
	switch r.Op {
	case OpAcquire:
		c.AttemptsMade += int64(max(r.Result.Attempts, 1))
		c.CommandsSent += int64(r.Result.Sent)
		if r.Won() {
			c.Acquired++
			c.replied(r.Result)
		} else {
			c.failed(r.Result)
		}
	case OpRelease:
		c.CommandsSent += int64(r.Reply.Sent)
	case OpExtend:
		if r.Reply.OK {
			c.Extends++
		} else {
			c.ExtendFailures++
		}
	}
}

func (c *Counts) foldUse(r *Record) {
	if r.Judged && !r.Clear {
		c.Violations++
	}
	c.LostUpdates += r.Lost
	if r.Rejected {
		c.StaleWritesRejected++
	}
	if !r.Measured {
		return
	}
	if r.Overran {
		c.HoldOverruns++
	}
	if r.UseFailed {
		c.UseErrors++
	}
}

// histograms folds measured records into the run's latency histograms,
// each record's samples under one shard lock.
type histograms struct {
	rec *results.Recorder
}

func (h histograms) Fold(r *Record) {
	if !r.Measured {
		return
	}
	var s [4]results.Sample
	n := 0
	add := func(metric int, d time.Duration) {
		s[n] = results.Sample{Metric: metric, D: d}
		n++
	}
	switch {
	case r.Op == OpRelease:
		add(results.Release, r.Latency())
	case r.Op != OpAcquire:
		return
	case r.Won():
		add(results.Acquire, r.Latency())
		add(results.TimeToLock, r.Waited())
		if r.OpenLoop {
			add(results.AcquireUncorrected, r.Uncorrected())
		}
		if r.Handed {
			add(results.HandoffGap, r.Gap)
		}
	default:
		add(results.Failed, r.Latency())
		if r.GaveUp {
			add(results.GaveUp, r.Waited())
		}
	}
	h.rec.RecordAll(r.Worker, s[:n])
}

// record is the worker's scratch record for op, zeroed: reducers do not
// keep it, so one per worker serves every operation without allocating.
func (w *Worker) record(op Op) *Record {
	r := &w.scratch
	*r = Record{Op: op, Worker: w.ID}
	return r
}

// Record is a new record of the worker's, for a cycle to fill and Fold
// (it is the worker's one scratch record: fold it before asking for
// another).
func (w *Worker) Record(op Op) *Record { return w.record(op) }

// Fold hands a record to every reducer of the run: the worker's own
// counts and waits, the histograms, the hottest keys, the observer.
func (w *Worker) Fold(r *Record) { w.loop.fold(w, r) }

// fold is the worker's part: its counts and its callers' waits.
func (w *Worker) fold(r *Record) {
	w.Counts.Fold(r)
	if r.Op != OpAcquire || !r.Measured {
		return
	}
	switch {
	case r.Won():
		w.waits.record(r.Waited())
	case r.GaveUp:
		w.waits.gaveUp++
	}
}

// fold is the run's list of reducers.
func (l *loop) fold(w *Worker, r *Record) {
	w.fold(r)
	l.hist.Fold(r)
	if r.Op == OpRelease && r.Measured {
		l.use.held(r.Key, r.Held)
	}
	if l.obs != nil {
		l.obs.Fold(r)
	}
	for _, red := range l.cfg.Reducers {
		red.Fold(r)
	}
}
