package workloads

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"lockbench/results"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"
)

// pacerQuantum is the least time between two wake-ups of the pacer. Each
// nanosleep costs ~8 µs of CPU on a virtual machine (timer exits), so at
// rates above 1/quantum the pacer wakes the workers for all the starts
// that fell due since its last wake-up at once: they are up to a quantum
// late, in exchange for a tenth of the wake-ups at 100k/s.
const pacerQuantum = 100 * time.Microsecond

// PacerLagLimit is the pacer lag p99 above which an open-loop result says
// the generator, not the lock, set part of the corrected latency. It is
// also how late past the end a start may still be made when it was due
// just before the end (the generator's own lateness, not a backlog).
const PacerLagLimit = time.Millisecond

// pacer is the open loop's schedule: ticket n is an acquire intended to
// start at begin + n/rate. It hands out no tickets itself. A free worker
// claims the oldest due ticket (so when the lock falls behind, workers take
// the backlog one after another at the cost of an atomic, as in the closed
// loop); only workers with nothing due wait, and the pacer wakes them when
// tickets fall due — several per wake-up when it is behind.
//
// Go's timers wake up to ~1 ms late on an idle process (measured here: a
// 50 µs Sleep takes 1.08 ms), and in open loop that lag would be charged to
// the lock as latency. So the pacer sleeps on its own OS thread with
// nanosleep and a 1 ns timer slack: ~20-30 µs late instead (up to a
// pacerQuantum more at rates above 10k/s).
type pacer struct {
	begin    time.Time
	measure  time.Time // the measured window opens: warm-up tickets not yet started are dropped
	end      time.Time // no ticket intended at or after end
	interval float64   // ns between tickets
	first    int64     // first ticket intended at or after measure
	last     int64     // first ticket intended at or after end

	next atomic.Int64 // the oldest ticket not yet claimed
	idle atomic.Int64 // workers waiting for a ticket
	// lateAtEnd: a start left unserved at the end had a free worker in
	// time; lockbench was late, not the lock.
	lateAtEnd atomic.Bool
	// wake carries one token per idle worker to wake, and is closed when
	// the pacer stops; wentIdle tells a pacer waiting on busy workers that
	// one is free.
	wake     chan struct{}
	wentIdle chan struct{}

	lag lagRecorder
}

func newPacer(rate float64, begin, measure, end time.Time, workers int) *pacer {
	p := &pacer{
		begin: begin, measure: measure, end: end, interval: float64(time.Second) / rate,
		wake: make(chan struct{}, workers), wentIdle: make(chan struct{}, 1),
		lag: newLagRecorder(min(workers, 16)),
	}
	p.first = p.ticketsBefore(measure)
	p.last = p.ticketsBefore(end)
	return p
}

// at is when ticket n is intended to start.
func (p *pacer) at(n int64) time.Time {
	return p.begin.Add(time.Duration(float64(n) * p.interval))
}

// ticketsBefore counts the tickets intended before t.
func (p *pacer) ticketsBefore(t time.Time) int64 {
	d := t.Sub(p.begin)
	if d <= 0 {
		return 0
	}
	n := int64(float64(d) / p.interval)
	// Float rounding: make at(n-1) < t <= at(n) exact.
	for n > 0 && !p.at(n-1).Before(t) {
		n--
	}
	for p.at(n).Before(t) {
		n++
	}
	return n
}

// offered counts the window's tickets intended before t (the window's end,
// or an interrupt).
func (p *pacer) offered(t time.Time) int64 {
	if t.After(p.end) {
		t = p.end
	}
	return max(0, p.ticketsBefore(t)-p.first)
}

// claim gives a free worker the oldest due ticket, waiting for one if none
// is due. It returns false when the schedule is over: every ticket handed
// out, ctx done, or the end passed with only a backlog left (those tickets
// stay unserved). lag is how late the start is against the later of the
// ticket's time and the moment the worker became free: the generator's own
// lateness, not queueing behind busy workers.
func (p *pacer) claim(ctx context.Context) (n int64, intended time.Time, lag time.Duration, ok bool) {
	free := time.Now()
	for {
		now := time.Now()
		n = p.next.Load()
		if n < p.first && !now.Before(p.measure) {
			// The warm-up's backlog does not spill into the window.
			p.next.CompareAndSwap(n, p.first)
			continue
		}
		if n >= p.last {
			return 0, time.Time{}, 0, false
		}
		intended = p.at(n)
		if ctx.Err() != nil || !now.Before(p.end) && now.Sub(intended) > PacerLagLimit {
			// Left unserved. If this worker was free by the time the start
			// was due (plus the lag limit), lockbench, not the lock, was
			// too slow for it.
			if !intended.After(now) && !free.After(intended.Add(PacerLagLimit)) {
				p.lateAtEnd.Store(true)
			}
			return 0, time.Time{}, 0, false
		}
		if !intended.After(now) {
			if p.next.CompareAndSwap(n, n+1) {
				return n, intended, now.Sub(later(intended, free)), true
			}
			continue
		}
		p.wait()
	}
}

// wait parks an idle worker until the pacer wakes it (or a ticket is
// already due, or the schedule ends).
func (p *pacer) wait() {
	p.idle.Add(1)
	defer p.idle.Add(-1)
	select {
	case p.wentIdle <- struct{}{}:
	default:
	}
	// Counted idle before looking again: a ticket that fell due meanwhile
	// is seen here, or the pacer saw this worker idle and sends a token.
	if n := p.next.Load(); n >= p.last || !p.at(n).After(time.Now()) {
		return
	}
	// One channel only: the pacer closes wake when it stops, also on ctx.
	<-p.wake
}

// run wakes idle workers as tickets fall due, until every ticket is due or
// ctx ends; then it closes wake. When every worker is busy it sleeps until
// one goes idle: busy workers take due tickets themselves.
func (p *pacer) run(ctx context.Context) {
	defer close(p.wake)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// PR_SET_TIMERSLACK applies to this thread only; it ends with it.
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	var covered int64 // tickets below this have a worker woken for them
	var woke time.Time
	for ctx.Err() == nil {
		c := max(covered, p.next.Load())
		if c >= p.last {
			return
		}
		now := time.Now()
		if t := later(p.at(c), woke.Add(pacerQuantum)); t.After(now) {
			sleepUntil(ctx, t)
			continue
		}
		idle := p.idle.Load() - int64(len(p.wake))
		if idle <= 0 {
			select {
			case <-p.wentIdle:
			case <-ctx.Done():
			}
			continue
		}
		due := min(p.ticketsBefore(now.Add(1)), p.last) - c
		k := min(due, idle)
		for range k {
			select {
			case p.wake <- struct{}{}:
			default:
			}
		}
		covered = c + k
		woke = now
	}
}

// sleepUntil sleeps on this thread until t or ctx ends, in slices short
// enough to keep an interrupt prompt.
func sleepUntil(ctx context.Context, t time.Time) {
	for ctx.Err() == nil {
		d := time.Until(t)
		if d <= 0 {
			return
		}
		ts := unix.NsecToTimespec(int64(min(d, 50*time.Millisecond)))
		_ = unix.Nanosleep(&ts, nil)
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// lagRecorder is the pacer lag histogram, sharded like results.Recorder so
// workers do not queue on one lock.
type lagRecorder struct {
	shards []lagShard
}

type lagShard struct {
	mu sync.Mutex
	h  *hdrhistogram.Histogram
	_  [64]byte
}

func newLagRecorder(n int) lagRecorder {
	r := lagRecorder{shards: make([]lagShard, max(n, 1))}
	for i := range r.shards {
		r.shards[i].h = results.NewHistogram()
	}
	return r
}

func (r *lagRecorder) record(shard int, d time.Duration) {
	s := &r.shards[shard%len(r.shards)]
	s.mu.Lock()
	results.RecordDuration(s.h, d)
	s.mu.Unlock()
}

// total merges the shards; call it once the workers are done.
func (r *lagRecorder) total() *hdrhistogram.Histogram {
	h := results.NewHistogram()
	for i := range r.shards {
		h.Merge(r.shards[i].h)
	}
	return h
}
