package redsyncdriver

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"lockbench/internal/bound"
	"lockbench/internal/redistest"
	"lockbench/redislock/engine"
	"lockbench/redislock/localmasters"
	"lockbench/workloads"
)

func newDriver(t *testing.T, cfg engine.Config, workers int) *Driver {
	t.Helper()
	d, err := New(context.Background(), cfg, workers)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}

func TestRedsyncDriver(t *testing.T) {
	set := redistest.StartMasters(t, 3, localmasters.PersistNone)
	cfg := engine.DefaultConfig()
	cfg.Masters = set.Addrs()
	cfg.TTL = 2 * time.Second
	d := newDriver(t, cfg, 4)
	ctx := context.Background()
	lock, res := d.Acquire(ctx, "rs:key")
	if lock == nil || !res.Acquired || res.Validity <= 0 || !strings.HasPrefix(lock.Token, d.TokenPrefix()) {
		t.Fatalf("acquire: %+v %+v", lock, res)
	}
	for _, a := range set.Addrs() {
		if v, _ := redistest.Do(a, "GET", "rs:key"); v != lock.Token {
			t.Fatalf("%s holds %q, want the driver's token", a, v)
		}
	}
	// A second acquire of the held key fails, and says which masters had it.
	if l2, r2 := d.Acquire(ctx, "rs:key"); l2 != nil || r2.PerMaster[0] != engine.Taken {
		t.Fatalf("second acquire of a held key: %v %v", l2 != nil, r2.PerMaster)
	}
	if rel := d.Release(ctx, lock); !rel.OK {
		t.Fatal("release failed")
	}
	if v, _ := redistest.Do(set.Addrs()[0], "EXISTS", "rs:key"); v != "0" {
		t.Fatal("key left after release")
	}
	cfg.Mode = engine.Sequential
	if _, err := New(context.Background(), cfg, 4); err == nil || !strings.HasPrefix(err.Error(), "mode:") {
		t.Fatalf("sequential with redsync: %v", err)
	}
}

// TestRedsyncOnEqualTerms: the pool holds every worker's commands, each
// master's OK is counted (Successes too), the per-master timeout bounds the
// release, the lock window is the engine's (t1 + TTL − drift), Extend goes
// through redsync and resets the TTL, and a quorum that came too late is
// contention, not an error.
func TestRedsyncOnEqualTerms(t *testing.T) {
	set := redistest.StartMasters(t, 3, localmasters.PersistNone)
	cfg := engine.DefaultConfig()
	cfg.Masters = set.Addrs()
	// Every master must answer (the test counts them): 500 ms each, not
	// the default 50 ms a loaded machine can miss.
	cfg.TTL, cfg.Timeout = 2*time.Second, 500*time.Millisecond
	d := newDriver(t, cfg, 300)
	if st := d.Settings(); st.PoolSize < 300 || d.clients[0].Options().PoolSize != st.PoolSize {
		t.Fatalf("pool %d (client %d) for 300 workers", st.PoolSize, d.clients[0].Options().PoolSize)
	}
	ctx := context.Background()

	lock, res := d.Acquire(ctx, "eq:a")
	if lock == nil || res.Successes != 3 || !allAre(res.PerMaster, engine.OK) {
		t.Fatalf("acquire: successes %d, per master %v", res.Successes, res.PerMaster)
	}
	// Same drift as the engine: the window ends at t1 + TTL − drift (t1 is
	// taken just before redsync's own start, so up to 1 ms later here).
	want := cfg.TTL - engine.Drift(cfg.TTL, cfg.DriftFactor)
	if got := lock.ValidUntil.Sub(lock.Start); got < want || got > want+time.Millisecond {
		t.Fatalf("window %v, want TTL − drift = %v", got, want)
	}
	if d.Settings().Drift != engine.Drift(cfg.TTL, cfg.DriftFactor).String() {
		t.Fatalf("recorded drift %s", d.Settings().Drift)
	}

	// Extend through redsync: every master's TTL is reset, the window moves.
	time.Sleep(300 * time.Millisecond)
	old := lock.ValidUntil
	extendFrom := time.Now()
	ext := d.Extend(ctx, lock, cfg.TTL)
	if !ext.OK || ext.Count != 3 || !allAre(ext.PerMaster, engine.OK) || !lock.ValidUntil.After(old) {
		t.Fatalf("extend: %+v, window %v → %v", ext, old, lock.ValidUntil)
	}
	// Reset no earlier than the extend began: the PTTL read is at least
	// the TTL less the time since then, measured after the read, less 2 ms
	// for whole milliseconds (was the TTL less a flat 150 ms); a key not
	// reset lacks the 300 ms slept.
	for _, a := range set.Addrs() {
		ms, _ := redistest.Do(a, "PTTL", "eq:a")
		if limit := (cfg.TTL - time.Since(extendFrom)).Milliseconds() - 2; !bound.Min(t, "redsync.pttl_after_extend_ms", int64(atoi(ms)), limit) {
			t.Fatalf("%s: PTTL %s ms after extend; want at least %d ms (the TTL %v less the time since the extend began)", a, ms, limit, cfg.TTL)
		}
	}

	// Too slow by construction: the TTL is 2 ms above the per-master
	// timeout, which the stuck master costs whole, less than the drift,
	// while the two healthy masters have all of it (200 ms; was 5 ms, one
	// scheduler slice on a busy machine).
	slow := cfg
	slow.TTL, slow.Timeout = 202*time.Millisecond, 200*time.Millisecond
	ds := newDriver(t, slow, 4) // connects (PING) before the master is stuck

	// One master stuck: its SET times out, the other two are counted OK,
	// and the release comes back after the per-master timeout.
	stuck := set.Masters()[2]
	if err := stuck.Pause(); err != nil {
		t.Fatal(err)
	}
	defer stuck.Resume()
	l2, r2 := d.Acquire(ctx, "eq:b")
	if l2 == nil || r2.Successes != 2 || r2.PerMaster[0] != engine.OK || r2.PerMaster[1] != engine.OK || r2.PerMaster[2] != engine.Timeout {
		t.Fatalf("acquire with a stuck master: successes %d, per master %v", r2.Successes, r2.PerMaster)
	}
	done := make(chan engine.OpResult, 1)
	go func() { done <- d.Release(ctx, l2) }()
	select {
	case rel := <-done:
		if !rel.OK || rel.Count != 2 || rel.PerMaster[2] != engine.Timeout {
			t.Fatalf("release with a stuck master: %+v", rel)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("release waited on the stuck master (no per-master timeout)")
	}

	// Quorum but too slow: TTL 202 ms, per-master timeout 200 ms,
	// wait=all: the stuck master costs the whole timeout, so validity =
	// 202 − ≥200 − 4.02 (the drift) < 0.
	l3, r3 := ds.Acquire(ctx, "eq:c")
	if l3 != nil || r3.Successes != 2 || r3.Validity > 0 {
		t.Fatalf("too slow: acquired %v, successes %d, validity %v", l3 != nil, r3.Successes, r3.Validity)
	}
	if !workloads.IsContention(r3) {
		t.Fatalf("a quorum that came too late is filed as an error: %+v", r3)
	}
}

func allAre(outs []engine.Outcome, o engine.Outcome) bool {
	for _, x := range outs {
		if x != o {
			return false
		}
	}
	return len(outs) > 0
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// A context that ends in the retry delay ends the acquire at once with the
// last attempt's result, as the engine's; no further attempt is made.
func TestAcquireStopsWhenTheContextEndsInTheRetryDelay(t *testing.T) {
	set := redistest.StartMasters(t, 3, localmasters.PersistNone)
	cfg := engine.DefaultConfig()
	cfg.Masters = set.Addrs()
	cfg.Retries, cfg.RetryMin, cfg.RetryMax = 5, time.Hour, time.Hour
	d := newDriver(t, cfg, 2)
	held, _ := d.Acquire(context.Background(), "rs:held")
	if held == nil {
		t.Fatal("first acquire failed")
	}
	defer d.Release(context.Background(), held)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	lock, res := d.Acquire(ctx, "rs:held")
	// 2 s: an acquire that slept through its context's end would take the
	// hour's retry delay.
	if lock != nil || time.Since(start) > 2*time.Second {
		t.Fatalf("lock %v after %v", lock != nil, time.Since(start))
	}
	if res.Attempts != 1 || !errors.Is(res.Err, context.DeadlineExceeded) || !allAre(res.PerMaster, engine.Taken) {
		t.Fatalf("attempts %d, err %v, per master %v; want 1 attempt that saw the key taken", res.Attempts, res.Err, res.PerMaster)
	}
}

// redsync's unlock does not publish, so notify is refused in one line,
// before anything connects.
func TestRedsyncRefusesNotify(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.Masters, cfg.Strategy = []string{"127.0.0.1:1"}, engine.StrategyNotify
	_, err := New(context.Background(), cfg, 4)
	if want := "wait-strategy: notify is not accepted with driver redsync; use retry, backoff or spin"; err == nil || err.Error() != want {
		t.Fatalf("redsync + notify: %v, want %q", err, want)
	}
}
