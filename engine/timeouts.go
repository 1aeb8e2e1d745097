package engine

import (
	"sync"
	"time"
)

// timeouts wakes callers whose deadline passed, so that a wait is one
// channel receive with no timer of its own (a timer armed and stopped twice
// per cycle, and a two-way select, were a tenth of the client's time per
// cycle at 256 workers). Every deadline is "now + the engine's timeout"
// when it is added, so the queue is in deadline order and the watchdog
// only ever looks at its front.
type timeouts struct {
	mu     sync.Mutex
	items  []waiter
	head   int
	kick   chan struct{} // one slot: "the queue was empty and is not"
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
// long, so it wakes at most a thousand times a second, however many waits
// there are.
const timeoutSlack = time.Millisecond

func startTimeouts() *timeouts {
	t := &timeouts{kick: make(chan struct{}, 1), done: make(chan struct{}), exited: make(chan struct{})}
	go t.watch()
	return t
}

func (t *timeouts) stop() {
	close(t.done)
	<-t.exited
}

func (t *timeouts) add(w waiter) {
	t.mu.Lock()
	empty := t.head == len(t.items)
	t.items = append(t.items, w)
	t.mu.Unlock()
	if empty {
		select {
		case t.kick <- struct{}{}:
		default:
		}
	}
}

func (t *timeouts) watch() {
	defer close(t.exited)
	timer := time.NewTimer(time.Hour)
	var due []waiter
	for {
		now := time.Now()
		var next time.Time
		due, next = t.popDue(now, due[:0])
		for _, w := range due {
			w.c.expire(w.gen)
		}
		clear(due) // let the calls go
		wakeup := t.kick
		if !next.IsZero() {
			timer.Reset(max(next.Sub(now), timeoutSlack))
			wakeup = nil
		}
		select {
		case <-t.done:
			return
		case <-wakeup:
		case <-timer.C:
		}
	}
}

// popDue takes the waits due at now and returns the next deadline (zero
// when none is queued).
func (t *timeouts) popDue(now time.Time, due []waiter) ([]waiter, time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.head < len(t.items) && !now.Before(t.items[t.head].deadline) {
		due = append(due, t.items[t.head])
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
