package workloads

import (
	"context"
	"math"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"lockbench/internal/bound"
	"lockbench/internal/redistest"
	"lockbench/redislock/engine"
	"lockbench/redislock/localmasters"
	"lockbench/results"
)

// contendedRun runs workers on keys for 800 ms against three real masters.
func contendedRun(t *testing.T, workers int, keys uint64, hold time.Duration, tune func(*engine.Config)) *Stats {
	t.Helper()
	set := redistest.StartMasters(t, 3, localmasters.PersistNone)
	cfg := engine.DefaultConfig()
	cfg.Masters, cfg.Timeout = set.Addrs(), time.Second
	if tune != nil {
		tune(&cfg)
	}
	e, err := engine.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ch, _ := NewChooser(ChooserConfig{Keys: keys})
	st, err := Run(context.Background(), e, RunConfig{Workers: workers, Duration: 800 * time.Millisecond, Warmup: 100 * time.Millisecond,
		Keys: Keys{Prefix: "lockbench:test:", Count: keys}, Chooser: ch, Hold: FixedHold{D: hold}, Seed: 1, CallersWait: cfg.WaitTime > 0 || cfg.Retries > 0})
	if err != nil {
		t.Fatal(err)
	}
	if st.Acquired < 10 {
		t.Fatalf("acquired %d: too few to judge", st.Acquired)
	}
	return st
}

// Without contention every wait is one attempt: time to lock is the
// acquire latency, value for value.
func TestTimeToLockIsAcquireWithoutContention(t *testing.T) {
	// One worker: it releases each lock before its next acquire, so no
	// acquire can find a key taken.
	st := contendedRun(t, 1, 1_000_000, 0, nil)
	if st.NotAcquired != 0 {
		t.Fatalf("%d acquires of one worker found a key taken", st.NotAcquired)
	}
	a, w := st.Acquire, st.TimeToLock
	if w.TotalCount() != a.TotalCount() || w.ValueAtQuantile(50) != a.ValueAtQuantile(50) || w.Max() != a.Max() || w.Min() != a.Min() {
		t.Fatalf("time to lock n=%d p50=%d max=%d differs from acquire n=%d p50=%d max=%d",
			w.TotalCount(), w.ValueAtQuantile(50), w.Max(), a.TotalCount(), a.ValueAtQuantile(50), a.Max())
	}
	if c := st.contention(); c.HandoffGap != nil || c.AttemptsPerLock != 1 || math.Abs(c.CommandsPerLock-6) > 0.05 {
		t.Fatalf("calm run: handoff gap %v, %.2f attempts and %.2f commands per lock; want none, 1 and 6 (SET and release on 3 masters)",
			c.HandoffGap, c.AttemptsPerLock, c.CommandsPerLock)
	}
}

// Twenty workers on one key, each waiting up to 2 s: a caller's time to
// lock spans its failed attempts and waits, so it is well above the
// winning attempt's latency; the lock's handoffs are timed and the
// waiting's commands counted.
func TestTimeToLockSpansTheWait(t *testing.T) {
	wait := func(c *engine.Config) {
		c.WaitTime, c.RetryMin, c.RetryMax = 2*time.Second, time.Millisecond, 2*time.Millisecond
	}
	st := contendedRun(t, 20, 1, 2*time.Millisecond, wait)
	a, w := st.Acquire, st.TimeToLock
	// The mean, not the p50: the releaser often takes the lock straight
	// back (one attempt), so the median wait can be a single attempt.
	if w.TotalCount() != st.Acquired || w.Min() < a.Min() || w.Mean() < 3*a.Mean() || w.Max() < a.Max() {
		t.Fatalf("time to lock n=%d min=%d mean=%.0f max=%d; acquire min=%d mean=%.0f max=%d: want ≥, the mean ≥ 3×",
			w.TotalCount(), w.Min(), w.Mean(), w.Max(), a.Min(), a.Mean(), a.Max())
	}
	c := st.contention()
	if c.HandoffGap == nil || c.HandoffGap.Count < st.Acquired/2 || c.AttemptsPerLock < 3 || c.CommandsPerLock < 6*c.AttemptsPerLock-1 {
		t.Fatalf("handoff gap %+v, %.1f attempts and %.1f commands per lock (acquired %d)", c.HandoffGap, c.AttemptsPerLock, c.CommandsPerLock, st.Acquired)
	}
	// The key was held at least its locks' 2 ms holds (one may be cut
	// short by the run's end), a floor load can only raise; was a flat
	// 20% of the window, which load lowers by widening the handoffs.
	if len(c.HotKeys) != 1 || c.HotKeys[0].Utilisation > 1 {
		t.Fatalf("hot keys %+v: want the one key, held at most the whole window", c.HotKeys)
	}
	k := c.HotKeys[0]
	if floor := float64(k.Acquired-1) * (2 * time.Millisecond).Seconds(); !bound.Min(t, "wait.hot_key_held_s", k.HeldSeconds, floor) {
		t.Fatalf("hot key held %.3f s, below its %d locks' 2 ms holds (%.3f s)", k.HeldSeconds, k.Acquired, floor)
	}
	if c.GaveUp != 0 {
		t.Fatalf("%d gave up within a 2 s wait time in an 0.8 s run", c.GaveUp)
	}
}

// With a wait time shorter than a hold, callers give up: counted apart,
// with what they waited, and never in time to lock.
func TestGaveUpAfterWaitTime(t *testing.T) {
	short := func(c *engine.Config) {
		c.WaitTime, c.RetryMin, c.RetryMax = 10*time.Millisecond, time.Millisecond, 2*time.Millisecond
	}
	// A 30 ms hold, three wait times: callers give up, and the 0.8 s
	// window holds about 26 cycles, well above contendedRun's floor of 10
	// under load (a 60 ms hold left 13 at best, and 9 on a loaded machine).
	st := contendedRun(t, 4, 1, 30*time.Millisecond, short)
	c := st.contention()
	if c.GaveUp == 0 || c.GaveUpWait == nil || st.GaveUpWait.Min() < 9_900 || c.Starved == 0 {
		t.Fatalf("gave up %d after %+v, starved %d: want some, each after ≥ 10 ms (min %d µs)", c.GaveUp, c.GaveUpWait, c.Starved, st.GaveUpWait.Min())
	}
	// A winner's last attempt starts within the wait time, as a giving-up
	// caller's does (its wait, the wait time and its timers' lateness,
	// measured here by the longest give-up), plus a delay of at most 2 ms;
	// it takes at most the slowest winning attempt. Both are measured in
	// this run, so load stretches the bound with the figure (was a flat
	// 60 ms, the hold).
	limit := float64(st.GaveUpWait.Max() + 2_000 + st.Acquire.Max())
	if !bound.Max(t, "wait.gave_up_time_to_lock_max_us", c.TimeToLock.Max, limit) {
		t.Fatalf("time to lock max %.0f µs, past the longest give-up %d µs plus 2 ms plus the slowest winning attempt %d µs: a caller waited past its wait time",
			c.TimeToLock.Max, st.GaveUpWait.Max(), st.Acquire.Max())
	}
}

func TestHandoffGapOnlyWhileWaited(t *testing.T) {
	var h handoffs
	t0 := time.Now()
	h.join(7) // A acquires; nobody else wants the key
	if _, handed := h.taken(7, t0); handed {
		t.Fatal("a first acquire was timed as a handoff")
	}
	h.freed(7, t0) // A releases with nobody waiting: not remembered
	h.join(7)
	if _, handed := h.taken(7, t0.Add(time.Millisecond)); handed {
		t.Fatal("a release nobody waited for was timed as a handoff")
	}
	h.join(7) // B waits while A holds
	h.freed(7, t0)
	gap, handed := h.taken(7, t0.Add(3*time.Millisecond))
	if !handed || gap != 3*time.Millisecond {
		t.Fatalf("gap %v handed %v; want 3ms", gap, handed)
	}
	if len(h.shard(7).keys) != 0 {
		t.Fatal("the key's entry outlived its last caller")
	}
}

func TestStarvedCountsLongWaitsAndGiveUps(t *testing.T) {
	h := results.NewHistogram()
	for range 98 {
		_ = h.RecordValue(1000)
	}
	_ = h.RecordValue(50_000)
	_ = h.RecordValue(200_000)
	st := &Stats{TimeToLock: h, GaveUpWait: hdrhistogram.New(1, 10, 1), Folded: Folded{WorkerWaits: []results.WorkerWait{
		{Worker: 0, P99: 1000, Max: 1000}, {Worker: 1, P99: 50_000, Max: 200_000}, {Worker: 2, P99: 1000, Max: 1000, GaveUp: 1}}}}
	workers, waits, slowest := st.starved(10_000)
	if workers != 2 || waits != 2 || slowest[0].Worker != 1 {
		t.Fatalf("starved workers %d, waits %d, slowest %+v; want 2, 2, worker 1 first", workers, waits, slowest)
	}
}
