package engine

import (
	"context"
	"runtime"
	"testing"
	"time"

	"lockbench/internal/bound"
)

// testCall is a call of an engine with n masters and no connections: the
// test plays the dispatchers by calling deliver itself.
func testCall(t *testing.T, n int, cfg Config) *call {
	t.Helper()
	e := &Engine{cfg: cfg, timeouts: startTimeouts(cfg.Timeout), late: newLateCounts(n)}
	e.links = make([]*link, n)
	t.Cleanup(e.timeouts.stop)
	// "k596" hashes to slot 0: the zero Builder (no client here) builds
	// keyed commands only for slot 0.
	c := e.newCall(opSet, "k596", "t", 1000, false)
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
	// 250 ms: an upper bound, over ten times the largest lateness
	// scripts/stress measured (22 ms; mostly under 1 ms).
	if now := time.Now(); now.Before(deadline) || !bound.Max(t, "wait.past_deadline", now.Sub(deadline), 250*time.Millisecond) {
		t.Fatalf("wait ended %v after its start; want at its 30ms deadline", now.Sub(start))
	}
	if c.outs[0] != Timeout {
		t.Fatalf("master 0: %v, want timeout", c.outs[0])
	}
}

// A reply that lands after the watchdog woke the caller, but before the
// caller took the wake-up, is the answer to that wait: it must be counted
// once. Filed by deliver and then overwritten as a timeout, a stuck
// master's Timeout (the dispatcher's and the watchdog's fire together)
// counted twice, so that sequential wait=quorum gave up after one master
// of three; an OK was counted in Successes but shown as a timeout.
func TestReplyBetweenExpireAndWakeCountedOnce(t *testing.T) {
	for _, o := range []Outcome{Timeout, OK} {
		judged := 0
		for i := 0; judged < 50 && i < 5000; i++ {
			c := testCall(t, 3, DefaultConfig())
			c.early, c.waitFor = true, 0
			done := make(chan struct{})
			go func() {
				defer close(done)
				c.wait(time.Now().Add(time.Hour)) // the test plays the watchdog
			}()
			c.expire(waitingGen(c))
			c.deliver(0, o) // usually before the caller runs again
			<-done
			c.mu.Lock()
			out, ok, bad := c.outs[0], c.ok, c.bad
			c.waitFor = -1
			decided := c.decided()
			c.mu.Unlock()
			want := o
			if c.e.late.acquire[0][0][o].Load() > 0 {
				want = Timeout // the caller took the wake-up first: the reply is late
			} else {
				judged++
			}
			if out != want || ok != b2i(want == OK) || bad != b2i(want != OK) {
				t.Fatalf("reply %v between expire and wake-up: master 0 %v, ok %d, bad %d; want %v counted once", o, out, ok, bad, want)
			}
			if decided {
				t.Fatalf("reply %v: one master of three answered, yet wait=quorum is decided (ok %d, bad %d)", o, ok, bad)
			}
		}
		if judged == 0 {
			t.Fatalf("reply %v: the caller always took the wake-up before the reply: nothing judged", o)
		}
	}
}

// waitingGen returns the generation of the wait c's caller is in, once it is in it.
func waitingGen(c *call) uint64 {
	for {
		if gen := c.inWait.Load(); gen != 0 {
			return gen
		}
		runtime.Gosched()
	}
}

// Waits that end on their own do not wake the watchdog: it sleeps until
// the first wait still open, about once per timeout, not once per
// millisecond (which cost CPU per cycle at low concurrency).
func TestWatchdogSleepsWhileWaitsEndOnTheirOwn(t *testing.T) {
	c := testCall(t, 1, DefaultConfig())
	e := c.e
	c.deliver(0, OK)
	c.finish(time.Now(), make([]Outcome, 1))
	start, waits := time.Now(), 0
	for time.Since(start) < 300*time.Millisecond {
		// "k596" hashes to slot 0: the zero Builder (no client here) builds
		// keyed commands only for slot 0.
		c := e.newCall(opSet, "k596", "t", 1000, false)
		c.refs++
		c.deliver(0, OK)
		c.wait(time.Now().Add(e.cfg.Timeout))
		c.finish(time.Now(), make([]Outcome, 1))
		waits++
		time.Sleep(200 * time.Microsecond)
	}
	wakes := e.timeouts.wakes.Load()
	// 300 ms of waits, 50 ms timeout: about 7 wake-ups; once per
	// millisecond would be about 300.
	if wakes > 40 {
		t.Fatalf("%d waits, all ended on their own, woke the watchdog %d times", waits, wakes)
	}
	t.Logf("%d waits, %d wake-ups", waits, wakes)
}

// A dispatcher's context is reused from batch to batch while its deadline
// has not passed; one that ended stays ended for whoever still holds it
// (the context contract: a closed Done with a nil Err panics in the
// standard library's cancel propagation), and the next batch gets a new one.
func TestBatchContextEndsForGoodAndTheNextBatchStartsAfresh(t *testing.T) {
	d := &lane{ctx: newBatchCtx()}
	d.ctx.arm(time.Now().Add(time.Hour))
	first := d.ctx
	d.next()
	if d.ctx != first {
		t.Fatal("a context whose deadline did not pass was not reused")
	}
	d.ctx.arm(time.Now().Add(5 * time.Millisecond))
	ended := d.ctx
	<-ended.Done()
	d.next()
	if ended.Err() != context.DeadlineExceeded {
		t.Fatalf("an ended batch's context says %v once the lane moved on, want DeadlineExceeded", ended.Err())
	}
	d.ctx.arm(time.Now().Add(time.Hour))
	select {
	case <-d.ctx.Done():
		t.Fatal("the next batch started expired")
	case <-time.After(20 * time.Millisecond):
	}
	if d.ctx.Err() != nil {
		t.Fatalf("next batch: %v", d.ctx.Err())
	}
	d.next()
}

// A context derived from a batch's (as net's dial does when rueidis
// redials) is watched by a goroutine that reads the parent's Err once its
// Done closes: the lane moving on meanwhile must not make it nil.
func TestContextDerivedFromABatchSurvivesTheLaneMovingOn(t *testing.T) {
	d := &lane{ctx: newBatchCtx()}
	for range 5000 {
		d.ctx.arm(time.Now().Add(20 * time.Microsecond))
		_, cancel := context.WithCancel(d.ctx)
		<-d.ctx.Done()
		d.next()
		cancel()
	}
	d.ctx.timer.Stop()
}
