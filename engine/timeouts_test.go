package engine

import (
	"testing"
	"time"
)

// testCall is a call of an engine with n masters and no connections: the
// test plays the dispatchers by calling deliver itself.
func testCall(t *testing.T, n int, cfg Config) *call {
	t.Helper()
	e := &Engine{cfg: cfg, timeouts: startTimeouts(), late: newLateCounts(n)}
	e.links = make([]*link, n)
	t.Cleanup(e.timeouts.stop)
	c := e.newCall(opSet, "k", "t", 1000, false)
	c.refs += n // as send does, one per request
	return c
}

// A deadline that passes after its wait was decided must not end the next
// wait of the same call (sequential mode waits once per master).
func TestStaleDeadlineDoesNotEndNextWait(t *testing.T) {
	c := testCall(t, 2, DefaultConfig())
	c.waitFor = 0
	c.deliver(0, OK)
	if !c.wait(time.Now().Add(20 * time.Millisecond)) {
		t.Fatal("first wait: decided before it, yet timed out")
	}
	time.Sleep(60 * time.Millisecond) // the first deadline passes, its waiter is popped
	c.mu.Lock()
	c.waitFor = 1
	c.mu.Unlock()
	go func() {
		time.Sleep(50 * time.Millisecond)
		c.deliver(1, OK)
	}()
	start := time.Now()
	if !c.wait(time.Now().Add(5 * time.Second)) {
		t.Fatalf("second wait ended as a timeout after %v: the first wait's deadline woke it", time.Since(start))
	}
	if c.outs[1] != OK {
		t.Fatalf("master 1: %v, want ok", c.outs[1])
	}
}

// A wait nobody answers ends at its deadline (give or take scheduling),
// and the master awaited counts as a timeout.
func TestWaitEndsAtDeadline(t *testing.T) {
	c := testCall(t, 1, DefaultConfig())
	c.waitFor = 0
	start := time.Now()
	deadline := start.Add(30 * time.Millisecond)
	if c.wait(deadline) {
		t.Fatal("nobody answered, yet the wait was decided")
	}
	if now := time.Now(); now.Before(deadline) || now.Sub(deadline) > 250*time.Millisecond {
		t.Fatalf("wait ended %v after its start; want at its 30ms deadline", now.Sub(start))
	}
	if c.outs[0] != Timeout {
		t.Fatalf("master 0: %v, want timeout", c.outs[0])
	}
}
