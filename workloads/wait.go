package workloads

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"lockbench/lock"
	"lockbench/results"
)

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

// handoffs follow the keys callers are acquiring (from the start of an
// acquire to its end, its retries and waits included), so a release of
// such a key can be timed to its next holder's acquire: the lock's idle
// time while callers waited. Only keys being acquired take memory.
type handoffs struct {
	shards [64]handoffShard
}

type handoffShard struct {
	mu   sync.Mutex
	keys map[uint64]keyWaiters
	_    [48]byte // 64 bytes each: no two shards' mutexes share a cache line
}

type keyWaiters struct {
	waiters int
	freed   time.Time // the last release while someone waited; zero once taken
}

func (h *handoffs) shard(key uint64) *handoffShard { return &h.shards[key%uint64(len(h.shards))] }

// join: a caller starts acquiring key.
func (h *handoffs) join(key uint64) {
	s := h.shard(key)
	s.mu.Lock()
	if s.keys == nil {
		s.keys = map[uint64]keyWaiters{}
	}
	kw := s.keys[key]
	kw.waiters++
	s.keys[key] = kw
	s.mu.Unlock()
}

// leave: a caller's acquire of key ended without the lock.
func (h *handoffs) leave(key uint64) {
	s := h.shard(key)
	s.mu.Lock()
	s.leaveLocked(key)
	s.mu.Unlock()
}

func (s *handoffShard) leaveLocked(key uint64) {
	kw, ok := s.keys[key]
	switch {
	case !ok:
	case kw.waiters <= 1:
		delete(s.keys, key)
	default:
		kw.waiters--
		s.keys[key] = kw
	}
}

// freed: key's holder started its release at t; remembered while someone
// is acquiring the key.
func (h *handoffs) freed(key uint64, t time.Time) {
	s := h.shard(key)
	s.mu.Lock()
	if kw, ok := s.keys[key]; ok {
		kw.freed = t
		s.keys[key] = kw
	}
	s.mu.Unlock()
}

// taken: a caller acquiring key got it at t, and stops waiting. handed
// when the key had been freed while callers waited: gap is then from that
// release to t.
func (h *handoffs) taken(key uint64, t time.Time) (gap time.Duration, handed bool) {
	s := h.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if kw := s.keys[key]; !kw.freed.IsZero() {
		gap, handed = max(t.Sub(kw.freed), 0), true
		kw.freed = time.Time{}
		s.keys[key] = kw
	}
	s.leaveLocked(key)
	return gap, handed
}

// keyUse sums how long each key was held in the window, for the hottest
// keys' utilisation. It follows at most maxKeyUse keys, the first seen:
// under skew the hot keys are among them, and a 10M keyspace costs nothing.
// Sharded by key, so that workers on different keys do not share a lock.
type keyUse struct {
	shards   [64]keyUseShard
	followed atomic.Int64
	full     atomic.Bool
	names    func(uint64) string
}

type keyUseShard struct {
	mu   sync.Mutex
	keys map[uint64]*results.KeyUse
	_    [48]byte // 64 bytes each: no two shards' mutexes share a cache line
}

const maxKeyUse = 4096

// held adds one hold of key, from its acquire to its release.
func (u *keyUse) held(key uint64, d time.Duration) {
	s := &u.shards[key%uint64(len(u.shards))]
	s.mu.Lock()
	defer s.mu.Unlock()
	ku := s.keys[key]
	if ku == nil {
		if u.followed.Add(1) > maxKeyUse {
			if !u.full.Load() {
				u.full.Store(true)
			}
			return
		}
		if s.keys == nil {
			s.keys = map[uint64]*results.KeyUse{}
		}
		ku = &results.KeyUse{Key: u.names(key)}
		s.keys[key] = ku
	}
	ku.Acquired++
	ku.HeldSeconds += d.Seconds()
}

// hottest are the n keys held longest, their share of the window set.
func (u *keyUse) hottest(n int, window time.Duration) []results.KeyUse {
	var all []results.KeyUse
	for i := range u.shards {
		s := &u.shards[i]
		s.mu.Lock()
		for _, ku := range s.keys {
			all = append(all, *ku)
		}
		s.mu.Unlock()
	}
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
func wakeupsOf(lk lock.Locker) *results.Wakeups {
	if w, ok := lk.(lock.Waker); ok {
		if n, notifying := w.Wakeups(); notifying {
			return &n
		}
	}
	return nil
}

// commandsOf reads a locker's command counts and the kinds no acquire
// owns; false when it keeps none.
func commandsOf(lk lock.Locker) (lock.Commands, []string, bool) {
	if c, ok := lk.(lock.Counter); ok {
		return c.Commands(), c.SharedKinds(), true
	}
	return nil, nil, false
}

// A wait starved when it took starvedFactor times the median time to lock,
// and at least starvedFloor: under barging the median is an uncontended
// acquire, and a wait of a few of those starves nobody.
const (
	starvedFactor = 10
	starvedFloor  = 10 * time.Millisecond
)

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
		if s.Commands != nil && s.CommandsSent > 0 {
			// The acquires' and releases' own commands, with the window's
			// pub/sub and WAIT commands, which no one acquire owns.
			var shared int64
			for _, k := range s.SharedKinds {
				shared += (*s.Commands)[k]
			}
			c.Commands = s.Commands
			c.CommandsPerLock = float64(s.CommandsSent+shared) / float64(s.Acquired)
		}
	}
	bound := max(float64(s.TimeToLock.ValueAtQuantile(50))*starvedFactor, float64(starvedFloor.Microseconds()))
	c.Starved, c.StarvedWaits, c.SlowestWaits = s.starved(bound)
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
	for _, w := range s.WorkerWaits {
		if w.GaveUp > 0 || w.Max > bound {
			workers++
		}
	}
	slowest = append([]results.WorkerWait(nil), s.WorkerWaits...)
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
