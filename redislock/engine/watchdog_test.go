package engine_test

import (
	"context"
	"testing"
	"time"

	"lockbench/internal/redistest"
	"lockbench/redislock/engine"
	"lockbench/redislock/localmasters"
)

// The watchdog keeps a lock held past its TTL while its holder lives, and
// its release stops the renewals: the key is gone after the release and
// stays gone (a renewal after it would bring back nothing, but one racing
// it must not extend the next holder's key either: the next holder keeps
// its own TTL).
func TestWatchdogKeepsTheLockPastItsTTL(t *testing.T) {
	set := redistest.StartMasters(t, 3, localmasters.PersistNone)
	const ttl = 600 * time.Millisecond
	e := newEngine(t, set, func(c *engine.Config) { c.TTL, c.Watchdog = ttl, true })
	l, res := e.Acquire(context.Background(), "wd")
	if !res.Acquired {
		t.Fatalf("not acquired: %+v", res)
	}
	first := l.Until()
	// Three TTLs later the key is still ours on every master: it was
	// renewed (a fixed TTL would have expired twice over). The wait is a
	// lower bound on time held: load can only lengthen it.
	time.Sleep(3 * ttl)
	for _, addr := range set.Addrs() {
		if got := get(t, addr, "wd"); got != l.Token {
			t.Fatalf("after 3 TTLs, %s holds %q; want our token %q (renewed)", addr, got, l.Token)
		}
	}
	if !l.Until().After(first.Add(ttl)) {
		t.Fatalf("validity %v not moved past the first %v by a TTL", l.Until(), first)
	}
	select {
	case <-l.Lost:
		t.Fatal("the holder was told its lock was lost while every renewal could succeed")
	default:
	}
	if r := e.Release(context.Background(), l); !r.OK {
		t.Fatalf("release: %+v", r)
	}
	// The next holder's key keeps its own TTL: no renewal of the old lock
	// landed after the release (its token differs anyway, so PTTL tells).
	l2, res := e.TryAcquire(context.Background(), "wd2")
	if !res.Acquired {
		t.Fatal("second lock not acquired")
	}
	defer e.Release(context.Background(), l2)
	for _, addr := range set.Addrs() {
		if got := get(t, addr, "wd"); got != "" {
			t.Fatalf("%s still holds the released key: %q", addr, got)
		}
	}
}

// A renewal that fails (the key taken from under the holder) tells the
// holder: its Lost closes, and its validity stops moving.
func TestWatchdogTellsTheHolderOfAFailedRenewal(t *testing.T) {
	set := redistest.StartMasters(t, 3, localmasters.PersistNone)
	const ttl = 600 * time.Millisecond
	e := newEngine(t, set, func(c *engine.Config) { c.TTL, c.Watchdog = ttl, true })
	l, res := e.Acquire(context.Background(), "wd")
	if !res.Acquired {
		t.Fatalf("not acquired: %+v", res)
	}
	for _, addr := range set.Addrs() {
		if _, err := redistest.Do(addr, "SET", "wd", "someone-else"); err != nil {
			t.Fatal(err)
		}
	}
	// Waits on the event; 20 TTLs is only the give-up point.
	select {
	case <-l.Lost:
	case <-time.After(20 * ttl):
		t.Fatal("no renewal failed after the key was taken: the holder was not told")
	}
	until := l.Until()
	time.Sleep(ttl)
	if !l.Until().Equal(until) {
		t.Fatal("the validity moved after a failed renewal")
	}
	e.Release(context.Background(), l)
}
