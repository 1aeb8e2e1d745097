package workloads

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"lockbench/engine"
	"lockbench/results"
)

// waiting is a worker's wait for one key, what a caller of a lock library
// sees: from its first attempt on the key until it holds the lock, across
// every failed attempt, retry and wait, or until it gives up.
type waiting struct {
	key    uint64
	since  time.Time // the first attempt's start (its intended start in open loop)
	active bool      // the worker wants key: it is among the key's waiters
}

// workerWaits are one worker's times to lock, in a small histogram of its
// own (two significant digits: enough for its p99 and max, and 2,000
// workers cost megabytes, not the recorder's 140 KB each).
type workerWaits struct {
	h      *hdrhistogram.Histogram
	gaveUp int64
}

func (ww *workerWaits) record(d time.Duration) {
	if ww.h == nil {
		ww.h = hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 2)
	}
	_ = ww.h.RecordValue(max(d.Microseconds(), 1))
}

// begin returns when the worker's wait for key began: its ongoing wait
// for key, or a new one from start. A wait for another key ends as given up
// (the worker wants another lock now). A caller waits from its first
// attempt on: the locker's own retries happen inside one acquire.
func (l *loop) begin(w *Worker, key uint64, start time.Time, measured bool) time.Time {
	if w.wait.active && w.wait.key == key {
		return w.wait.since
	}
	if w.wait.active {
		l.gaveUp(w, start, measured)
	}
	w.wait = waiting{key: key, since: start, active: true}
	l.handoffs.join(key)
	return start
}

// lost follows a failed acquire: the wait goes on into the next attempt,
// unless the locker gives up after its wait time, which ends it (an
// acquire cut short by the run's end did not give up).
func (l *loop) lost(w *Worker, at time.Time, measured bool) {
	if l.cfg.GiveUp && l.ctx.Err() == nil {
		l.gaveUp(w, at, measured)
	}
}

// gaveUp ends the worker's wait without the lock.
func (l *loop) gaveUp(w *Worker, at time.Time, measured bool) {
	l.handoffs.leave(w.wait.key)
	w.wait.active = false
	w.calls++
	if measured {
		d := at.Sub(w.wait.since)
		l.rec.Record(w.ID, results.GaveUp, d)
		w.waits.gaveUp++
		if obs := l.cfg.Observer; obs != nil {
			obs.Waited(d, false)
		}
	}
}

// locked ends the worker's wait with the lock: its time to lock, and the
// key's handoff gap when callers were waiting for it.
func (l *loop) locked(w *Worker, key uint64, since, at time.Time, measured bool) {
	waited := w.wait.active && w.wait.key == key
	w.wait.active = false
	w.calls++
	gap, ok := l.handoffs.taken(key, waited, at)
	if !measured {
		return
	}
	d := at.Sub(since)
	l.rec.Record(w.ID, results.TimeToLock, d)
	w.waits.record(d)
	if obs := l.cfg.Observer; obs != nil {
		obs.Waited(d, true)
	}
	if ok {
		l.rec.Record(w.ID, results.HandoffGap, gap)
	}
}

// handoffs follow the keys callers wait for (from their first attempt
// until they hold the lock or give up), so a release of such a key can be
// timed to its next holder's acquire: the lock's idle time while callers
// waited. Only keys with waiters take memory.
type handoffs struct {
	shards [64]handoffShard
}

type handoffShard struct {
	mu   sync.Mutex
	keys map[uint64]*keyWaiters
}

type keyWaiters struct {
	waiters int
	freed   time.Time // the last release while someone waited; zero once taken
}

func (h *handoffs) shard(key uint64) *handoffShard { return &h.shards[key%uint64(len(h.shards))] }

// join: a worker now waits for key.
func (h *handoffs) join(key uint64) {
	s := h.shard(key)
	s.mu.Lock()
	if s.keys == nil {
		s.keys = map[uint64]*keyWaiters{}
	}
	kw := s.keys[key]
	if kw == nil {
		kw = &keyWaiters{}
		s.keys[key] = kw
	}
	kw.waiters++
	s.mu.Unlock()
}

// leave: a waiter of key stopped waiting (it gave up or took the lock).
func (h *handoffs) leave(key uint64) {
	s := h.shard(key)
	s.mu.Lock()
	h.leaveLocked(s, key)
	s.mu.Unlock()
}

func (h *handoffs) leaveLocked(s *handoffShard, key uint64) {
	if kw := s.keys[key]; kw != nil {
		if kw.waiters--; kw.waiters <= 0 {
			delete(s.keys, key)
		}
	}
}

// freed: key's holder started its release at t; remembered while someone
// waits for the key.
func (h *handoffs) freed(key uint64, t time.Time) {
	s := h.shard(key)
	s.mu.Lock()
	if kw := s.keys[key]; kw != nil {
		kw.freed = t
	}
	s.mu.Unlock()
}

// taken: key's next holder got it at t (waited: it was one of the
// waiters, and now leaves them). ok when the key had been freed while callers waited: gap is
// then from that release to t.
func (h *handoffs) taken(key uint64, waited bool, t time.Time) (gap time.Duration, ok bool) {
	s := h.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	kw := s.keys[key]
	if kw == nil {
		return 0, false
	}
	if !kw.freed.IsZero() {
		gap, ok = max(t.Sub(kw.freed), 0), true
		kw.freed = time.Time{}
	}
	if waited {
		h.leaveLocked(s, key)
	}
	return gap, ok
}

// keyUse sums how long each key was held in the window, for the hottest
// keys' utilisation. It follows at most maxKeyUse keys, the first seen:
// under skew the hot keys are among them, and a 10M keyspace costs nothing.
type keyUse struct {
	mu    sync.Mutex
	keys  map[uint64]*results.KeyUse
	full  atomic.Bool
	names func(uint64) string
}

const maxKeyUse = 4096

// held adds one hold of key, from its acquire to its release.
func (u *keyUse) held(key uint64, d time.Duration) {
	u.mu.Lock()
	defer u.mu.Unlock()
	ku := u.keys[key]
	if ku == nil {
		if len(u.keys) >= maxKeyUse {
			u.full.Store(true)
			return
		}
		if u.keys == nil {
			u.keys = map[uint64]*results.KeyUse{}
		}
		ku = &results.KeyUse{Key: u.names(key)}
		u.keys[key] = ku
	}
	ku.Acquired++
	ku.HeldSeconds += d.Seconds()
}

// hottest are the n keys held longest, their share of the window set.
func (u *keyUse) hottest(n int, window time.Duration) []results.KeyUse {
	u.mu.Lock()
	all := make([]results.KeyUse, 0, len(u.keys))
	for _, ku := range u.keys {
		all = append(all, *ku)
	}
	u.mu.Unlock()
	return results.HottestKeys(all, n, window.Seconds())
}

// waited is the worker's time to lock in the result's shape.
func (w *Worker) waited() results.WorkerWait {
	ww := results.WorkerWait{Worker: w.ID, Acquired: w.Counts.Acquired, GaveUp: w.waits.gaveUp}
	if h := w.waits.h; h != nil {
		ww.P99, ww.Max = float64(h.ValueAtQuantile(99)), float64(h.Max())
	}
	return ww
}

// wakeupsOf reads a notify waiter's wake-ups; nil when it does not notify.
func wakeupsOf(lk Locker) *results.Wakeups {
	if e, ok := lk.(*engine.Engine); ok && e.Notifying() {
		n := e.NotifyCounts()
		return &results.Wakeups{ByMessage: n.WokenByMessage, ByTimeout: n.WokenByTimeout}
	}
	return nil
}

// commandsOf reads a locker's command counts; false when it keeps none.
func commandsOf(lk Locker) (engine.Commands, bool) {
	if c, ok := lk.(interface{ Commands() engine.Commands }); ok {
		return c.Commands(), true
	}
	return engine.Commands{}, false
}

// starvedFactor: a wait this many times the median time to lock starved.
const starvedFactor = 10

// contention is what the stats say of waiting callers; nil when no
// caller ended a wait (nothing to say).
func (s *Stats) contention() *results.Contention {
	if total(s.TimeToLock)+total(s.GaveUpWait) == 0 {
		return nil
	}
	c := &results.Contention{TimeToLock: results.Summarize(s.TimeToLock), GaveUp: total(s.GaveUpWait),
		HotKeys: s.HotKeys, KeysFollowed: s.KeysFollowed, Wakeups: s.Wakeups}
	if c.GaveUp > 0 {
		l := results.Summarize(s.GaveUpWait)
		c.GaveUpWait = &l
	}
	if total(s.HandoffGap) > 0 {
		l := results.Summarize(s.HandoffGap)
		c.HandoffGap = &l
	}
	if s.Acquired > 0 {
		c.AttemptsPerLock = float64(s.AttemptsMade) / float64(s.Acquired)
		if s.Commands != nil {
			c.Commands = s.Commands
			c.CommandsPerLock = float64(s.Commands.Total()) / float64(s.Acquired)
		}
	}
	c.Starved, c.StarvedWaits, c.SlowestWaits = s.starved(float64(s.TimeToLock.ValueAtQuantile(50)) * starvedFactor)
	return c
}

// starved counts the waits longer than bound (µs), the workers that had
// one or gave up, and names the five slowest workers.
func (s *Stats) starved(bound float64) (workers int, waits int64, slowest []results.WorkerWait) {
	for _, b := range s.TimeToLock.Distribution() {
		if float64(b.From) > bound {
			waits += b.Count
		}
	}
	for _, w := range s.Waits {
		if w.GaveUp > 0 || w.Max > bound {
			workers++
		}
	}
	slowest = append([]results.WorkerWait(nil), s.Waits...)
	slices.SortStableFunc(slowest, func(a, b results.WorkerWait) int { return cmp.Compare(b.P99, a.P99) })
	return workers, waits, slowest[:min(5, len(slowest))]
}

// total is h's count, 0 for none.
func total(h *hdrhistogram.Histogram) int64 {
	if h == nil {
		return 0
	}
	return h.TotalCount()
}
