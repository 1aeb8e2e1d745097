package workloads

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"

	"lockbench/lock"
	"lockbench/results"
)

// Cycle is the pluggable part of a worker's cycle. The loop around it
// stops, acquires, counts, records and releases; the cycle says what the
// worker does with a lock it won (plain runs hold it for a drawn time,
// chaos reads, changes and writes a protected resource), what it does
// before an acquire and after losing one.
type Cycle interface {
	// Ready returns when the worker may start an acquire (chaos: its
	// client is not paused).
	Ready()
	// Use uses the lock the worker won; the loop releases it afterwards,
	// also when the run ended meanwhile.
	Use(w *Worker, h Held)
	// Lost follows a failed acquire (chaos: the retry delay).
	Lost(w *Worker)
}

// Worker is one worker's own state, handed to its cycle.
type Worker struct {
	ID      int
	Rand    *rand.Rand
	Counts  Counts
	ctx     context.Context // ends when the run does
	opCtx   context.Context // its acquires run under: the loop's, its own child
	waits   workerWaits
	calls   int // acquires ended, with the lock or without
	loop    *loop
	scratch Record // the record being made (see record)
}

// ownOpCtx gives the worker its own child of the loop's op context: a
// client that watches each call's context (pgx, gRPC) then registers on
// the worker's, not on one context that every worker's calls contend for.
// A context that never ends (finish_cycles) is kept as it is.
func (w *Worker) ownOpCtx(op context.Context) context.CancelFunc {
	if op.Done() == nil {
		w.opCtx = op
		return func() {}
	}
	var cancel context.CancelFunc
	w.opCtx, cancel = context.WithCancel(op)
	return cancel
}

// Done is closed when the run ends: no new acquire starts after it.
func (w *Worker) Done() <-chan struct{} { return w.ctx.Done() }

// Context ends when the run does.
func (w *Worker) Context() context.Context { return w.ctx }

// Held is a lock a worker won.
type Held struct {
	Lock     *lock.Lock
	Key      uint64    // the key's index
	Start    time.Time // when the acquire was sent (not the intended start)
	Acquired time.Time // when it returned
	Measured bool      // inside the measured window: the use's outcomes count (its findings always)
}

// Counts are what workers counted: outcomes in the measured window, and
// what uses found (overlaps, lost updates, refused writes) whenever they
// happened (see Counts.Fold). Each worker has its own; Add folds them (and
// a chaos cell folds its clients' the same way).
type Counts struct {
	Started int64 `json:"started,omitempty"` // open loop: intended starts begun
	results.Tally
	Extends        int64 `json:"extends,omitempty"`         // successful auto-extensions
	ExtendFailures int64 `json:"extend_failures,omitempty"` // auto-extensions that lost the lock
	HoldOverruns   int64 `json:"overruns"`                  // uses cut short because the validity ran out
	UseErrors      int64 `json:"use_errors,omitempty"`      // uses that failed (chaos: resource reads and writes)
	AttemptsMade   int64 `json:"attempts_made,omitempty"`   // the lock client's attempts, retries included
	CommandsSent   int64 `json:"commands_sent,omitempty"`   // by measured acquires and releases (0: not counted)
	Violations     int64 `json:"violations,omitempty"`      // holds that overlapped another's (the probe's, or the checker's)
	// LostUpdates and StaleWritesRejected are what the protected resource
	// saw (chaos): acknowledged writes overwritten, fenced writes refused.
	LostUpdates         int64                     `json:"lost_updates,omitempty"`
	StaleWritesRejected int64                     `json:"stale_writes_rejected,omitempty"`
	PerMaster           [][lock.NumOutcomes]int64 `json:"per_master"`
}

// fields are the scalar counts, in one list: Add and Sub go through it, so
// a count added to the struct is added and subtracted everywhere.
func (c *Counts) fields() [14]*int64 {
	return [...]*int64{&c.Started, &c.Acquired, &c.NotAcquired, &c.Errors, &c.Unconfirmed, &c.Extends, &c.ExtendFailures,
		&c.HoldOverruns, &c.UseErrors, &c.AttemptsMade, &c.CommandsSent, &c.Violations, &c.LostUpdates, &c.StaleWritesRejected}
}

// Add folds o into c.
func (c *Counts) Add(o *Counts) { c.fold(o, 1) }

// Sub is c − prev (prev may have fewer masters): the growth since a
// reading, as live metrics take it.
func (c Counts) Sub(prev Counts) Counts {
	d := Counts{PerMaster: make([][lock.NumOutcomes]int64, 0, len(c.PerMaster))}
	d.Add(&c)
	d.fold(&prev, -1)
	return d
}

// fold adds sign × o to c, field by field and master by master.
func (c *Counts) fold(o *Counts, sign int64) {
	to, from := c.fields(), o.fields()
	for i := range to {
		*to[i] += sign * *from[i]
	}
	for len(c.PerMaster) < len(o.PerMaster) {
		c.PerMaster = append(c.PerMaster, [lock.NumOutcomes]int64{})
	}
	for m := range o.PerMaster {
		for k, v := range o.PerMaster[m] {
			c.PerMaster[m][k] += sign * v
		}
	}
}

// replied files one acquire's per-master outcomes (rows added for
// servers the counts had none for).
func (c *Counts) replied(res lock.Result) {
	for len(c.PerMaster) < len(res.PerMaster) {
		c.PerMaster = append(c.PerMaster, [lock.NumOutcomes]int64{})
	}
	for m, o := range res.PerMaster {
		if o < lock.NumOutcomes {
			c.PerMaster[m][o]++
		}
	}
}

// failed files a failed acquire: contention, errors or few acks.
func (c *Counts) failed(res lock.Result) {
	c.replied(res)
	c.Tally.Failed(FailureOf(res))
}

// loop is what every worker of one Run shares.
type loop struct {
	ctx         context.Context // ends the run: no acquire starts after it
	opCtx       context.Context // what acquires run under
	stop        context.CancelFunc
	lk          lock.Locker
	cfg         *RunConfig
	cycle       Cycle
	pace        *pacer // nil in closed loop
	rec         *results.Recorder
	hist        histograms // folds into rec
	obs         Observer   // cfg.Observer; nil: none
	names       keyNames
	probe       *Probe
	handoffs    handoffs
	use         keyUse
	measureFrom time.Time
	end         time.Time    // of the measured window
	acquired    atomic.Int64 // toward cfg.Quota
}

// work is one worker's loop: in closed loop it starts the next acquire as
// soon as the last cycle ends, in open loop it claims the oldest due
// intended start.
func (l *loop) work(w *Worker) {
	for l.ctx.Err() == nil && (l.cfg.Calls == 0 || w.calls < l.cfg.Calls) {
		l.cycle.Ready()
		intended, measured, ok := l.next(w)
		if !ok || !l.attempt(w, intended, measured) {
			return
		}
	}
}

// next waits for the worker's next start; false: the run is over. In
// closed loop the start is now (the zero time here).
func (l *loop) next(w *Worker) (intended time.Time, measured, ok bool) {
	if l.pace == nil {
		return time.Time{}, false, l.ctx.Err() == nil
	}
	n, t, lag, ok := l.pace.claim(l.ctx)
	if !ok {
		return t, false, false
	}
	if measured = n >= l.pace.first; measured {
		w.Counts.Started++
		l.pace.lag.record(w.ID, lag)
		if l.obs != nil {
			l.obs.Started(lag)
		}
	}
	return t, measured, true
}

// attempt is one acquire, its record, and when it wins the cycle's use
// and the release. False: the run ended mid-acquire (not an outcome).
func (l *loop) attempt(w *Worker, intended time.Time, measured bool) bool {
	r := w.record(OpAcquire)
	r.Key = l.cfg.Chooser.Next(w.Rand)
	r.Start = time.Now()
	r.Intended, r.Measured, r.OpenLoop = intended, measured, l.pace != nil
	if l.pace == nil {
		r.Intended, r.Measured = r.Start, !r.Start.Before(l.measureFrom)
	}
	l.handoffs.join(r.Key)
	if l.obs != nil {
		l.obs.AcquireStarted()
	}
	r.Lock, r.Result = l.lk.Acquire(w.opCtx, l.names.name(r.Key))
	r.End = time.Now()
	if l.obs != nil {
		l.obs.AcquireEnded()
	}
	if !r.Won() {
		l.handoffs.leave(r.Key)
		if r.Result.Err != nil {
			return false
		}
		w.calls++
		r.GaveUp = l.cfg.CallersWait && l.ctx.Err() == nil
		l.fold(w, r)
		l.cycle.Lost(w)
		return true
	}
	w.calls++
	r.Gap, r.Handed = l.handoffs.taken(r.Key, r.End)
	h := Held{Lock: r.Lock, Key: r.Key, Start: r.Start, Acquired: r.End, Measured: r.Measured}
	// Folded as it returns, so its latency lands in the second it
	// happened, however long the use.
	l.fold(w, r)
	if q := l.cfg.Quota; q > 0 && h.Measured && l.acquired.Add(1) >= q {
		l.stop()
	}
	l.useAndRelease(w, h)
	return true
}

// useAndRelease runs the cycle's use of a won lock and releases it.
func (l *loop) useAndRelease(w *Worker, h Held) {
	l.cycle.Use(w, h)
	freed := time.Now() // the release's start: a handoff's gap counts from it
	l.handoffs.freed(h.Key, freed)
	// Released even when the run ended meanwhile: never leave a lock behind.
	rel := l.lk.Release(context.Background(), h.Lock)
	r := w.record(OpRelease)
	r.Key, r.Measured, r.Start, r.Reply, r.Held = h.Key, h.Measured, freed, rel, freed.Sub(h.Acquired)
	l.fold(w, r)
}

// holdCycle is the plain cycle of run and sweep: hold the lock for a drawn
// time inside the probe, extending it when asked to.
type holdCycle struct {
	lk    lock.Locker
	cfg   *RunConfig
	probe *Probe
}

func (holdCycle) Ready()       {}
func (holdCycle) Lost(*Worker) {}

// Use keeps the lock for a drawn hold time inside the probe. A hold is
// judged on the lock's validity window: it ends when the hold does or when
// the validity runs out, whichever is first, unless auto-extension keeps the
// lock alive. A hold of 0 is no use of the lock, so the probe has nothing
// to judge (and no use is recorded).
func (c holdCycle) Use(w *Worker, h Held) {
	d := c.cfg.Hold.Next(w.Rand)
	if d <= 0 {
		return
	}
	ph := c.probe.Enter(h.Key, h.Lock.ValidUntil)
	ext, canExtend := c.lk.(lock.Extender)
	if !c.cfg.AutoExtend || !canExtend {
		ext = nil
	}
	overran := c.hold(w, h, ph, time.Now().Add(d), ext)
	c.probe.Exit(ph)
	r := w.record(OpUse)
	r.Key, r.Measured, r.Start, r.End = h.Key, h.Measured, h.Acquired, time.Now()
	r.Judged, r.Clear, r.Overran = ph.Judged, ph.Clear, overran
	w.Fold(r)
}

// hold sleeps until the hold ends or the validity runs out, extending the
// lock (ext non-nil) once a third of the TTL is left; overran: the
// validity ran out first.
func (c holdCycle) hold(w *Worker, h Held, ph Hold, until time.Time, ext lock.Extender) (overran bool) {
	cfg, lock := c.cfg, h.Lock
	for {
		now := time.Now()
		if !now.Before(until) {
			return false
		}
		if until.Before(lock.ValidUntil) && !(ext != nil && lock.ValidUntil.Sub(now) < cfg.TTL/3) {
			time.Sleep(until.Sub(now))
			return false
		}
		if ext == nil {
			// The lock runs out before the hold ends: stop using it then.
			time.Sleep(lock.ValidUntil.Sub(now))
			return true
		}
		wake := lock.ValidUntil.Add(-cfg.TTL / 3)
		if wake.After(until) {
			wake = until
		}
		time.Sleep(time.Until(wake))
		if !time.Now().Before(until) || !c.extend(w, h, ph, ext) {
			return false
		}
	}
}

// extend extends the held lock by the TTL; false: it was lost, or the run
// ended (then the use ends with it: an extension the run's end cut short
// is not an outcome, as an acquire it cut short is not).
func (c holdCycle) extend(w *Worker, h Held, ph Hold, ext lock.Extender) bool {
	if w.ctx.Err() != nil {
		return false
	}
	rep := ext.Extend(w.ctx, h.Lock, c.cfg.TTL)
	if !rep.OK && w.ctx.Err() != nil {
		return false
	}
	r := w.record(OpExtend)
	r.Key, r.Measured, r.Reply = h.Key, h.Measured, rep
	w.Fold(r)
	if !rep.OK {
		return false
	}
	c.probe.Extend(ph, h.Lock.ValidUntil)
	return true
}

// IsContention says whether a failed acquire lost to contention (some master
// held the key, or a quorum accepted but too slowly) rather than to masters
// that timed out or errored. A SET that won with too few replicas'
// acknowledgements (Unconfirmed) is neither: see FailureOf.
func IsContention(res lock.Result) bool {
	if IsUnconfirmed(res) {
		return false
	}
	if res.Taken {
		return true
	}
	for _, o := range res.PerMaster {
		if o == lock.Taken {
			return true
		}
	}
	return res.Successes >= lock.Quorum(len(res.PerMaster))
}

// IsUnconfirmed says whether a failed acquire's grant was acknowledged by
// fewer replicas than its client asked for (lock.Unconfirmed).
func IsUnconfirmed(res lock.Result) bool {
	return slices.Contains(res.PerMaster, lock.Unconfirmed)
}

// FailureOf is why a failed acquire failed.
func FailureOf(res lock.Result) results.AcquireFailure {
	switch {
	case IsUnconfirmed(res):
		return results.LostUnconfirmed
	case IsContention(res):
		return results.LostToContention
	}
	return results.LostToError
}
