// Package slots is a lock client's contenders: one session (an etcd
// lease, a database connection) per contender, taken for an acquire and
// given back with its release. A slot whose session was lost, or never
// opened, is empty; its next taker opens a new one.
package slots

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// A slot whose session failed to open waits before its next try, doubling
// from reopenBase to reopenCap: contenders that reconnect at once to a
// server in crash recovery fork it a backend (or a session) per try and
// starve the recovery they wait for (a CI run's PostgreSQL took 5 s to
// come back under 16 such loops, 0.2 s alone).
const (
	reopenBase = 10 * time.Millisecond
	reopenCap  = 250 * time.Millisecond
)

// Pool holds n slots of sessions of type T.
type Pool[T any] struct {
	ch    chan slot[T]
	open  func(context.Context) (T, error)
	alive func(T) bool
	lost  atomic.Int64

	mu  sync.Mutex
	all []T // every session opened, for Close
}

type slot[T any] struct {
	v  T
	ok bool // false: empty
	// fails counts the opens that failed in a row; the next waits until
	// retryAt.
	fails   int
	retryAt time.Time
}

// New is a pool of n slots: open makes a session, alive says one is still
// usable.
func New[T any](n int, open func(context.Context) (T, error), alive func(T) bool) *Pool[T] {
	return &Pool[T]{ch: make(chan slot[T], n), open: open, alive: alive}
}

// Fill opens a session in every slot (the first error stops it).
func (p *Pool[T]) Fill(ctx context.Context) error {
	for range cap(p.ch) {
		v, err := p.opened(ctx)
		if err != nil {
			return err
		}
		p.ch <- slot[T]{v: v, ok: true}
	}
	return nil
}

func (p *Pool[T]) opened(ctx context.Context) (T, error) {
	v, err := p.open(ctx)
	if err == nil {
		p.mu.Lock()
		p.all = append(p.all, v)
		p.mu.Unlock()
	}
	return v, err
}

// Take waits for a slot and returns its session, a new one when the slot
// is empty or its session is no longer alive (counted lost). On an error
// the slot goes back empty.
func (p *Pool[T]) Take(ctx context.Context) (T, error) {
	var s slot[T]
	select {
	case s = <-p.ch:
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
	if s.ok && p.alive(s.v) {
		return s.v, nil
	}
	if s.ok {
		p.lost.Add(1)
	}
	if err := waitUntil(ctx, s.retryAt); err != nil {
		p.ch <- s
		var zero T
		return zero, err
	}
	v, err := p.opened(ctx)
	if err != nil {
		p.ch <- failed[T](s.fails + 1)
	}
	return v, err
}

// failed is an empty slot after fails opens failed in a row: its next
// open waits a jittered [d/2, d], d doubling from reopenBase to reopenCap.
func failed[T any](fails int) slot[T] {
	d := min(reopenBase<<min(fails-1, 16), reopenCap)
	d = d/2 + rand.N(d/2+1)
	return slot[T]{fails: fails, retryAt: time.Now().Add(d)}
}

func waitUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Put gives a session back to its slot.
func (p *Pool[T]) Put(v T) { p.ch <- slot[T]{v: v, ok: true} }

// Drop leaves a slot empty (its session is ended or in doubt); lost
// counts it as lost.
func (p *Pool[T]) Drop(lost bool) {
	if lost {
		p.lost.Add(1)
	}
	p.ch <- slot[T]{}
}

// Lost counts the sessions that were lost or dropped as lost.
func (p *Pool[T]) Lost() int64 { return p.lost.Load() }

// Opened returns every session the pool opened, in use or not, and
// forgets them (Close's list).
func (p *Pool[T]) Opened() []T {
	p.mu.Lock()
	defer p.mu.Unlock()
	all := p.all
	p.all = nil
	return all
}
