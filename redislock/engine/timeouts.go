package engine

import (
	"sync"
	"sync/atomic"
	"time"
)

// timeouts wakes callers whose deadline passed, so that a wait is one
// channel receive with no timer of its own (a timer armed and stopped twice
// per cycle, and a two-way select, were a tenth of the client's time per
// cycle at 256 workers). Every deadline is "now + the engine's timeout"
// when it is added, so the queue is in deadline order. The watchdog drops
// the waits that already ended from its front and sleeps until the first
// one still waiting: nearly every wait ends long before its deadline, so
// it wakes about once per timeout, not once per wait (waking every
// millisecond cost a tenth more CPU per cycle at 1 and 16 workers).
type timeouts struct {
	mu    sync.Mutex
	items []waiter
	head  int
	// idle is how long the watchdog sleeps with nothing queued: the
	// timeout, since a wait added meanwhile is due no sooner.
	idle   time.Duration
	wakes  atomic.Int64 // times the watchdog woke (a test counts them)
	done   chan struct{}
	exited chan struct{}
}

// waiter is one wait of one call; gen tells it from later waits of the
// same (pooled) call.
type waiter struct {
	c        *call
	gen      uint64
	deadline time.Time
}

// timeoutSlack is how late past its deadline a wait may be woken (about
// what a Go timer is late by anyway): the watchdog sleeps at least this
// long, so it wakes at most a thousand times a second, however many
// waits reach their deadline.
const timeoutSlack = time.Millisecond

func startTimeouts(timeout time.Duration) *timeouts {
	t := &timeouts{idle: timeout, done: make(chan struct{}), exited: make(chan struct{})}
	go t.watch()
	return t
}

func (t *timeouts) stop() {
	close(t.done)
	<-t.exited
}

func (t *timeouts) add(w waiter) {
	t.mu.Lock()
	t.items = append(t.items, w)
	t.mu.Unlock()
}

func (t *timeouts) watch() {
	defer close(t.exited)
	timer := time.NewTimer(time.Hour)
	var due []waiter
	for {
		t.wakes.Add(1)
		now := time.Now()
		var next time.Time
		due, next = t.popDue(now, due[:0])
		for _, w := range due {
			w.c.expire(w.gen)
		}
		clear(due) // let the calls go
		sleep := t.idle
		if !next.IsZero() {
			sleep = max(next.Sub(now), timeoutSlack)
		}
		timer.Reset(sleep)
		select {
		case <-t.done:
			return
		case <-timer.C:
		}
	}
}

// popDue takes the waits due at now, drops those that ended, and returns
// the deadline of the first one still waiting (zero when none is queued).
func (t *timeouts) popDue(now time.Time, due []waiter) ([]waiter, time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.head < len(t.items) {
		w := t.items[t.head]
		ended := w.c.inWait.Load() != w.gen
		if !ended && now.Before(w.deadline) {
			break
		}
		if !ended {
			due = append(due, w)
		}
		t.items[t.head] = waiter{}
		t.head++
	}
	if t.head == len(t.items) {
		t.items, t.head = t.items[:0], 0
		return due, time.Time{}
	}
	if t.head > len(t.items)/2 { // reuse the front half
		n := copy(t.items, t.items[t.head:])
		clear(t.items[n:])
		t.items, t.head = t.items[:n], 0
	}
	return due, t.items[t.head].deadline
}
