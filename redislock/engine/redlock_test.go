package engine_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lockbench/internal/bound"
	"lockbench/internal/redistest"
	"lockbench/redislock/engine"
	"lockbench/redislock/localmasters"
)

func newEngine(t *testing.T, set *localmasters.Set, mutate func(*engine.Config)) *engine.Engine {
	t.Helper()
	cfg := engine.DefaultConfig()
	cfg.Masters = set.Addrs()
	if mutate != nil {
		mutate(&cfg)
	}
	e, err := engine.New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("engine: %v", err)
	}
	t.Cleanup(e.Close)
	return e
}

func get(t *testing.T, addr, key string) string {
	t.Helper()
	v, err := redistest.Do(addr, "GET", key)
	if err != nil && !strings.Contains(err.Error(), "nil") {
		t.Fatalf("GET %s on %s: %v", key, addr, err)
	}
	return v
}

func count(outs []engine.Outcome, o engine.Outcome) int {
	n := 0
	for _, x := range outs {
		if x == o {
			n++
		}
	}
	return n
}

func TestQuorumSurvivesTwoOfFiveDown(t *testing.T) {
	set := redistest.StartMasters(t, 5, localmasters.PersistNone)
	modes := []engine.Mode{engine.Multiplexed, engine.Sequential}
	// Engines connect while every master is up (New refuses unreachable
	// masters); the masters die under them, as in production.
	// A 1 s per-master timeout: the test counts which masters answered,
	// and a loaded -race machine can stall a live master's reply past the
	// default 50 ms (a stopped master refuses at once either way).
	engines := map[engine.Mode]*engine.Engine{}
	for _, mode := range modes {
		engines[mode] = newEngine(t, set, func(c *engine.Config) { c.Mode, c.Timeout = mode, time.Second })
		lock, res := engines[mode].Acquire(context.Background(), "q1:"+string(mode))
		if lock == nil || res.Successes != 5 {
			t.Fatalf("%s, all masters up: acquired=%v outs=%v", mode, lock != nil, res.PerMaster)
		}
		engines[mode].Release(context.Background(), lock)
	}
	ms := set.Masters()
	for _, m := range ms[:2] {
		if err := m.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	for _, mode := range modes {
		e := engines[mode]
		lock, res := e.Acquire(context.Background(), "q2:"+string(mode))
		if lock == nil {
			t.Fatalf("%s: 3 of 5 up must acquire: outs=%v validity=%v", mode, res.PerMaster, res.Validity)
		}
		if res.Successes != 3 || count(res.PerMaster, engine.Error)+count(res.PerMaster, engine.Timeout) != 2 {
			t.Fatalf("%s: want 3 ok and 2 failed masters, got %v", mode, res.PerMaster)
		}
		if rel := e.Release(context.Background(), lock); rel.Count != 3 {
			t.Fatalf("%s: release freed %d masters, want 3: %v", mode, rel.Count, rel.PerMaster)
		}
	}
	if err := ms[2].Stop(); err != nil {
		t.Fatal(err)
	}
	for _, mode := range modes {
		key := "q3:" + string(mode)
		lock, res := engines[mode].Acquire(context.Background(), key)
		if lock != nil || res.Acquired {
			t.Fatalf("%s: 2 of 5 up must not acquire: %v", mode, res.PerMaster)
		}
		if res.Successes != 2 {
			t.Fatalf("%s: the 2 live masters should have taken the SET, got %v", mode, res.PerMaster)
		}
		for _, m := range ms[3:] {
			if v := get(t, m.Addr(), key); v != "" {
				t.Fatalf("%s: failed acquire left %s=%q on live master %s", mode, key, v, m.Addr())
			}
		}
	}
}

// Two of five masters silent: each engine pays what its mode makes it
// wait for them, no more. Each check interleaves 5 acquires with 5 of an
// engine of the same mode on the 3 answering masters alone, which
// measures this machine's round trips at the same moment. Bounded: the
// fastest acquire at least the timeouts the mode must wait (load only
// lengthens it); the median at most those plus the healthy engine's median
// plus half a timeout, below the whole timeout one wait too many costs
// (was a flat 80 ms of slack).
func TestSilentMasterCostsOneTimeout(t *testing.T) {
	set := redistest.StartMasters(t, 5, localmasters.PersistNone)
	const timeout = 100 * time.Millisecond
	ms := set.Masters()
	mk := func(mode engine.Mode, wait engine.Wait, masters []string) *engine.Engine {
		return newEngine(t, set, func(c *engine.Config) {
			c.Mode, c.Wait, c.Timeout = mode, wait, timeout
			if masters != nil {
				c.Masters = masters
			}
		})
	}
	multi, seq, quorum := mk(engine.Multiplexed, engine.WaitAll, nil), mk(engine.Sequential, engine.WaitAll, nil), mk(engine.Multiplexed, engine.WaitQuorum, nil)
	healthyMulti, healthySeq := mk(engine.Multiplexed, engine.WaitAll, set.Addrs()[2:]), mk(engine.Sequential, engine.WaitAll, set.Addrs()[2:])
	for _, m := range ms[:2] {
		if err := m.Pause(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, m := range ms[:2] {
			_ = m.Resume()
		}
	})
	acquire := func(name string, e *engine.Engine, key string) time.Duration {
		t.Helper()
		lock, res := e.Acquire(context.Background(), key)
		if lock == nil {
			t.Fatalf("%s: 3 answering masters must acquire: %v", name, res.PerMaster)
		}
		e.Release(context.Background(), lock)
		return res.Elapsed
	}
	check := func(name string, e, healthy *engine.Engine, waited time.Duration) {
		t.Helper()
		var got, base []time.Duration
		for k := range 5 {
			got = append(got, acquire(name, e, "silent:"+name+":"+strconv.Itoa(k)))
			base = append(base, acquire(name+" (healthy)", healthy, "healthy:"+name+":"+strconv.Itoa(k)))
		}
		med, hmed := quantile(got, 0.5), quantile(base, 0.5)
		t.Logf("%s: %v, healthy %v", name, got, base)
		if !bound.Min(t, "silent."+name+".fastest", slices.Min(got), waited) {
			t.Errorf("%s: an acquire took %v with 2 silent masters; it must wait %v for them", name, slices.Min(got), waited)
		}
		if !bound.Max(t, "silent."+name+".p50", med, waited+hmed+timeout/2) {
			t.Errorf("%s: median acquire %v with 2 silent masters; want at most %v waited for them plus the healthy engine's median %v plus half a timeout", name, med, waited, hmed)
		}
	}
	// Both silent masters are waited on at the same time: one timeout.
	check("multiplexed", multi, healthyMulti, timeout)
	if outs := func() []engine.Outcome {
		_, r := multi.Acquire(context.Background(), "silent:again")
		return r.PerMaster
	}(); outs[0] != engine.Timeout || outs[1] != engine.Timeout {
		t.Fatalf("silent masters must be reported as timeouts: %v", outs)
	}
	// Master after master: each silent one costs its own timeout.
	check("sequential", seq, healthySeq, 2*timeout)
	// The quorum answers first; nobody waits for the silent ones.
	check("quorum", quorum, healthyMulti, 0)
}

func TestValidityShrinksAndSlowAcquireFails(t *testing.T) {
	ttl := 10 * time.Second
	if got, want := engine.Validity(ttl, 100*time.Millisecond, 0.01), ttl-100*time.Millisecond-102*time.Millisecond; got != want {
		t.Fatalf("Validity = %v, want %v", got, want)
	}
	if engine.Validity(time.Second, time.Second, 0.01) > 0 {
		t.Fatal("an acquire as slow as the TTL must have no validity")
	}
	set := redistest.StartMasters(t, 5, localmasters.PersistNone)
	// Every master must answer: 1 s each, not the default 50 ms a loaded
	// -race machine can miss.
	e := newEngine(t, set, func(c *engine.Config) { c.Timeout = time.Second })
	lock, res := e.Acquire(context.Background(), "validity")
	if lock == nil {
		t.Fatalf("acquire: %v", res.PerMaster)
	}
	// The attempt's own elapsed time is inside the call's, so validity lies
	// between ttl-drift-elapsed(call) and ttl-drift, strictly below the latter.
	if hi, lo := ttl-engine.Drift(ttl, 0.01), ttl-engine.Drift(ttl, 0.01)-res.Elapsed; res.Validity >= hi || res.Validity < lo {
		t.Fatalf("validity %v must be ttl-drift-elapsed, within [%v, %v)", res.Validity, lo, hi)
	}
	if time.Until(lock.ValidUntil) > res.Validity {
		t.Fatalf("lock valid for %v more, later than the validity %v left at the end of the acquire", time.Until(lock.ValidUntil), res.Validity)
	}
	e.Release(context.Background(), lock)

	// Sequential, two silent masters tried first: 2×300 ms > 500 ms TTL.
	// The three others accept (each has 300 ms to, which load does not
	// reach), but the lock expired before the quorum was had.
	slow := newEngine(t, set, func(c *engine.Config) {
		c.Mode, c.TTL, c.Timeout = engine.Sequential, 500*time.Millisecond, 300*time.Millisecond
	})
	ms := set.Masters()
	for _, m := range ms[:2] {
		if err := m.Pause(); err != nil {
			t.Fatal(err)
		}
		defer m.Resume()
	}
	lock, res = slow.Acquire(context.Background(), "validity:slow")
	if lock != nil || res.Successes != 3 || res.Validity > 0 {
		t.Fatalf("slow acquire: acquired=%v successes=%d validity=%v; want a failure with 3 successes and no validity", lock != nil, res.Successes, res.Validity)
	}
	for _, m := range ms[2:] {
		if v := get(t, m.Addr(), "validity:slow"); v != "" {
			t.Fatalf("failed acquire left a key on %s", m.Addr())
		}
	}
}

func TestReleaseAndExtendRespectOtherHolders(t *testing.T) {
	set := redistest.StartMasters(t, 3, localmasters.PersistNone)
	// A TTL short enough to wait out, with room for an extend within it
	// and per-master timeouts a loaded -race machine does not reach: the
	// test counts which masters answered.
	const ttl = time.Second
	short := func(c *engine.Config) { c.TTL, c.Timeout = ttl, 300*time.Millisecond }
	a, b := newEngine(t, set, short), newEngine(t, set, short)
	ctx := context.Background()
	lockA, _ := a.Acquire(ctx, "holder")
	if lockA == nil {
		t.Fatal("a could not acquire a free key")
	}
	if l, _ := b.Acquire(ctx, "holder"); l != nil {
		t.Fatal("b acquired a key a holds")
	}
	if ext := a.Extend(ctx, lockA, ttl); !ext.OK || ext.Count != 3 {
		t.Fatalf("a's extend within validity: %+v", ext)
	}
	time.Sleep(ttl + 100*time.Millisecond) // a's lock expires
	if ext := a.Extend(ctx, lockA, ttl); ext.OK {
		t.Fatal("extend after expiry succeeded")
	}
	lockB, res := b.Acquire(ctx, "holder")
	if lockB == nil {
		t.Fatalf("b could not take the expired key: %v", res.PerMaster)
	}
	// a still believes in its lock (a paused client); its release and
	// extend must not touch b's.
	stale := *lockA
	stale.ValidUntil = time.Now().Add(time.Second)
	if rel := a.Release(ctx, &stale); rel.Count != 0 {
		t.Fatalf("a's release deleted b's lock on %d masters", rel.Count)
	}
	if ext := a.Extend(ctx, &stale, time.Second); ext.OK || ext.Count != 0 {
		t.Fatalf("a's extend moved b's lock: %+v", ext)
	}
	for _, addr := range set.Addrs() {
		if v := get(t, addr, "holder"); v != lockB.Token {
			t.Fatalf("%s holds %q, want b's token %q", addr, v, lockB.Token)
		}
	}
	if rel := b.Release(ctx, lockB); rel.Count != 3 {
		t.Fatalf("b's release freed %d masters, want 3", rel.Count)
	}
}

func TestReleaseFallsBackToEvalAfterScriptFlush(t *testing.T) {
	set := redistest.StartMasters(t, 3, localmasters.PersistNone)
	// The release must reach all 3: 1 s each, not the default 50 ms.
	e := newEngine(t, set, func(c *engine.Config) { c.Timeout = time.Second })
	lock, _ := e.Acquire(context.Background(), "noscript")
	if lock == nil {
		t.Fatal("acquire failed")
	}
	for _, addr := range set.Addrs() {
		if _, err := redistest.Do(addr, "SCRIPT", "FLUSH"); err != nil {
			t.Fatal(err)
		}
	}
	if rel := e.Release(context.Background(), lock); rel.Count != 3 {
		t.Fatalf("release after SCRIPT FLUSH freed %d masters: %v", rel.Count, rel.PerMaster)
	}
}

// Under batching, a stuck master's late batches must not hold up anyone
// beyond their own per-master timeout. 64 workers alternate between an
// engine on 5 masters, one stuck, and one on the 4 that answer (both need
// 3 answers), so the healthy engine measures this machine's round trip
// and its own timeouts at the same moment. Bounded: the stuck engine's
// median acquire is at least the timeout (wait=all waits for the stuck
// master) and at most the timeout plus the healthy engine's p90 plus half
// a timeout (late batches queued behind the stuck one cost whole timeouts
// more); its failures at most twice the healthy engine's plus 1%. The
// timeout is 150 ms, not the default 50: under -race on a loaded 2-core
// machine the healthy masters' p90 reached 35 ms, and a healthy master
// missing a 50 ms timeout failed acquires (6 of 524 once) that had
// nothing to do with the stuck one.
func TestStuckMasterUnderLoadCostsOneTimeoutEach(t *testing.T) {
	set := redistest.StartMasters(t, 5, localmasters.PersistNone)
	const timeout = 150 * time.Millisecond
	stuckEngine := newEngine(t, set, func(c *engine.Config) { c.Timeout = timeout })
	healthy := newEngine(t, set, func(c *engine.Config) { c.Timeout, c.Masters = timeout, set.Addrs()[:4] })
	stuck := set.Masters()[4]
	if err := stuck.Pause(); err != nil {
		t.Fatal(err)
	}
	defer stuck.Resume()
	stuckRun, healthyRun := alternate(t, 64, 2*time.Second, "stuck:", stuckEngine, healthy)
	if stuckRun.acquired < 64 || healthyRun.acquired < 64 {
		t.Fatalf("acquired %d (stuck) and %d (healthy): nothing judged", stuckRun.acquired, healthyRun.acquired)
	}
	med, hp90 := quantile(stuckRun.elapsed, 0.5), quantile(healthyRun.elapsed, 0.9)
	t.Logf("stuck: %d acquired, %d failed, p50 %v, slowest %v; healthy: %d acquired, %d failed, p90 %v",
		stuckRun.acquired, stuckRun.failed, med, slices.Max(stuckRun.elapsed), healthyRun.acquired, healthyRun.failed, hp90)
	if !bound.Max(t, "stuck.failed", stuckRun.failed, 2*healthyRun.failed+(stuckRun.acquired+stuckRun.failed)/100) {
		t.Errorf("%d of %d acquires failed beside a stuck master, %d with only the 4 answering: 4 of 5 masters answer, all must succeed", stuckRun.failed, stuckRun.acquired+stuckRun.failed, healthyRun.failed)
	}
	if !bound.Min(t, "stuck.p50", med, timeout) {
		t.Errorf("median acquire %v below the timeout %v: the stuck master was not waited for (wait=all)", med, timeout)
	}
	if !bound.Max(t, "stuck.p50", med, timeout+hp90+timeout/2) {
		t.Errorf("median acquire %v; a stuck master must cost at most its timeout %v beyond the healthy engine's p90 %v", med, timeout, hp90)
	}
}

// engineRun is what one engine did in alternate: its acquires' elapsed times.
type engineRun struct {
	elapsed          []time.Duration
	acquired, failed int
}

// alternate has workers acquire and release on a, then b, then a... for
// d, on keys of their own: both engines see the same machine at once.
func alternate(t *testing.T, workers int, d time.Duration, prefix string, a, b *engine.Engine) (engineRun, engineRun) {
	t.Helper()
	var mu sync.Mutex
	var runs [2]engineRun
	var wg sync.WaitGroup
	stop := time.Now().Add(d)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(stop); i++ {
				e := []*engine.Engine{a, b}[i%2]
				lock, res := e.Acquire(context.Background(), prefix+strconv.Itoa(w)+":"+strconv.Itoa(i))
				mu.Lock()
				r := &runs[i%2]
				r.elapsed = append(r.elapsed, res.Elapsed)
				if lock != nil {
					r.acquired++
				} else {
					r.failed++
				}
				mu.Unlock()
				if lock != nil {
					e.Release(context.Background(), lock)
				}
			}
		}()
	}
	wg.Wait()
	return runs[0], runs[1]
}

// quantile is the q-quantile (0-1) of d.
func quantile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// Sequential with wait=quorum and the first master stopped: its timeout is
// one failure, so every attempt goes on to the other two masters. Counting
// that timeout twice (the dispatcher's deadline and the caller's fire
// together) made attempts give up after master 0 alone.
func TestSequentialQuorumGoesOnPastOneStuckMaster(t *testing.T) {
	set := redistest.StartMasters(t, 3, localmasters.PersistNone)
	e := newEngine(t, set, func(c *engine.Config) { c.Mode, c.Wait = engine.Sequential, engine.WaitQuorum })
	if err := set.Masters()[0].Pause(); err != nil {
		t.Fatal(err)
	}
	defer set.Masters()[0].Resume()
	var attempts, gaveUp atomic.Int64
	var wg sync.WaitGroup
	stop := time.Now().Add(time.Second)
	for w := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(stop); i++ {
				lock, res := e.TryAcquire(context.Background(), "seqstuck:"+strconv.Itoa(w)+":"+strconv.Itoa(i))
				attempts.Add(1)
				if res.PerMaster[1] == engine.NotSent {
					gaveUp.Add(1)
				}
				if lock != nil {
					e.Release(context.Background(), lock)
				}
			}
		}()
	}
	wg.Wait()
	if attempts.Load() < 64 {
		t.Fatalf("only %d attempts: nothing judged", attempts.Load())
	}
	if gaveUp.Load() > 0 {
		t.Fatalf("%d of %d attempts gave up after master 0's timeout alone", gaveUp.Load(), attempts.Load())
	}
}

// Live metrics read a master's INFO whenever Prometheus scrapes, also
// after the cell closed its engine: an error then, not a panic (a scrape
// after Close indexed the links Close had dropped).
func TestInfoAtAfterClose(t *testing.T) {
	set := redistest.StartMasters(t, 3, localmasters.PersistNone)
	e := newEngine(t, set, nil)
	addr := e.Addrs()[2]
	if info, err := e.InfoAt(context.Background(), addr); err != nil || !strings.Contains(info, "redis_version") {
		t.Fatalf("INFO before Close: %v", err)
	}
	e.Close()
	if _, err := e.InfoAt(context.Background(), addr); !errors.Is(err, engine.ErrClosed) {
		t.Fatalf("INFO after Close: %v, want ErrClosed", err)
	}
}
