package rueidislockdriver_test

import (
	"context"
	"testing"
	"time"

	"lockbench/internal/redistest"
	"lockbench/redislock/engine"
	"lockbench/redislock/localmasters"
	"lockbench/redislock/rueidislockdriver"
)

func newDriver(t *testing.T, ttl, wait time.Duration) (*rueidislockdriver.Driver, string) {
	t.Helper()
	set := redistest.StartMasters(t, 1, localmasters.PersistNone)
	cfg := engine.DefaultConfig()
	cfg.Masters, cfg.TTL, cfg.WaitTime = set.Addrs(), ttl, wait
	d, err := rueidislockdriver.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d, set.Addrs()[0]
}

// One holder at a time through rueidislock's own API: a second try is
// refused as taken, a release lets the next in, and a lock lives past its
// key validity while its holder does (rueidislock extends it).
func TestRueidislockExcludesAndExtends(t *testing.T) {
	const ttl = 600 * time.Millisecond
	d, _ := newDriver(t, ttl, 0)
	l, res := d.Acquire(context.Background(), "k")
	if !res.Acquired {
		t.Fatalf("first acquire: %+v", res)
	}
	if _, res := d.Acquire(context.Background(), "k"); res.Acquired || !res.Taken {
		t.Fatalf("second acquire while held: %+v; want refused as taken", res)
	}
	time.Sleep(3 * ttl) // a lower bound on time held: load only lengthens it
	if _, res := d.Acquire(context.Background(), "k"); res.Acquired {
		t.Fatal("acquired after 3 key validities while the holder lives: the lock was not extended")
	}
	select {
	case <-l.Lost:
		t.Fatal("the holder was told its lock was lost while it could be extended")
	default:
	}
	d.Release(context.Background(), l)
	l2, res := d.Acquire(context.Background(), "k")
	if !res.Acquired {
		t.Fatalf("acquire after the release: %+v", res)
	}
	d.Release(context.Background(), l2)
}

// The holder learns of a lost lock through its context: the keys taken
// from under it, an extension fails and Lost closes.
func TestRueidislockTellsTheHolder(t *testing.T) {
	const ttl = 600 * time.Millisecond
	d, addr := newDriver(t, ttl, 0)
	l, res := d.Acquire(context.Background(), "k")
	if !res.Acquired {
		t.Fatalf("acquire: %+v", res)
	}
	if _, err := redistest.Do(addr, "FLUSHALL"); err != nil {
		t.Fatal(err)
	}
	select { // waits on the event; 20 validities is only the give-up point
	case <-l.Lost:
	case <-time.After(20 * ttl):
		t.Fatal("the keys were taken and the holder was never told")
	}
	d.Release(context.Background(), l)
}
