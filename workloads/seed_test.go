package workloads_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lockbench/internal/bound"
	"lockbench/internal/redistest"
	"lockbench/redislock/engine"
	"lockbench/redislock/localmasters"
	"lockbench/results"
	"lockbench/workloads"
)

// The seed 003 test on real masters: 50 workers, one key, a stock of 100
// decremented by 1 under the lock by each; the stock must end at 50 and the
// probe must never see two holders.
func TestSeedStockCounter(t *testing.T) {
	set := redistest.StartMasters(t, 5, localmasters.PersistNone)
	cfg := engine.DefaultConfig()
	cfg.Masters = set.Addrs()
	cfg.TTL = 5 * time.Second
	cfg.Retries = 10_000
	cfg.RetryMin, cfg.RetryMax = time.Millisecond, 5*time.Millisecond
	e, err := engine.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	stockAddr := set.Addrs()[0]
	if _, err := redistest.Do(stockAddr, "SET", "stock:1", "100"); err != nil {
		t.Fatal(err)
	}
	probe := &workloads.Probe{}
	var wg sync.WaitGroup
	var failed atomic.Int64
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lock, res := e.Acquire(context.Background(), "lock:stock:1")
			if lock == nil {
				failed.Add(1)
				t.Errorf("acquire failed after %d attempts: %v", res.Attempts, res.PerMaster)
				return
			}
			h := probe.Enter(1, time.Now().Add(cfg.TTL))
			// Read-modify-write with a gap, so two holders would lose an update.
			v, err := redistest.Do(stockAddr, "GET", "stock:1")
			n, _ := strconv.Atoi(v)
			if err == nil {
				time.Sleep(2 * time.Millisecond)
				_, err = redistest.Do(stockAddr, "SET", "stock:1", strconv.Itoa(n-1))
			}
			if err != nil {
				t.Error(err)
			}
			probe.Exit(h)
			e.Release(context.Background(), lock)
		}()
	}
	wg.Wait()
	v, err := redistest.Do(stockAddr, "GET", "stock:1")
	if err != nil || v != "50" {
		t.Fatalf("stock = %q (%v), want 50", v, err)
	}
	if probe.MaxConcurrent() != 1 || probe.Violations() != 0 {
		t.Fatalf("max concurrent holders %d, violations %d; want 1 and 0", probe.MaxConcurrent(), probe.Violations())
	}
}

// The probe must go red when holds overlap inside their validity windows,
// or it proves nothing; a holder stalled past its validity is no overlap,
// and a hold with no validity left is not judged (not counted safe).
func TestProbeDetectsOverlap(t *testing.T) {
	p := &workloads.Probe{}
	long := time.Now().Add(time.Hour)
	a := p.Enter(7, long)
	if !a.Judged || !a.Clear {
		t.Fatal("first holder flagged or not judged")
	}
	if b := p.Enter(7, long); !b.Judged || b.Clear {
		t.Fatal("second concurrent holder not flagged")
	} else {
		p.Exit(b)
	}
	p.Exit(a)
	if c := p.Enter(7, long); !c.Clear || !p.Enter(8, long).Clear {
		t.Fatal("holders after exit or of another key flagged")
	}
	if p.Violations() != 1 || p.MaxConcurrent() != 2 || p.Judged() != 4 {
		t.Fatalf("violations %d max %d judged %d; want 1, 2 and 4", p.Violations(), p.MaxConcurrent(), p.Judged())
	}
}

func TestProbeJudgesOnValidityWindows(t *testing.T) {
	p := &workloads.Probe{}
	// A holder whose validity ran out while it still sat inside: its window
	// is over, so the next holder is not an overlap.
	stalled := p.Enter(1, time.Now().Add(20*time.Millisecond))
	time.Sleep(30 * time.Millisecond)
	if h := p.Enter(1, time.Now().Add(time.Hour)); !h.Clear {
		t.Fatal("a holder past its validity counted as an overlap")
	}
	p.Exit(stalled)
	// An extended holder stays inside its window.
	ext := p.Enter(2, time.Now().Add(20*time.Millisecond))
	p.Extend(ext, time.Now().Add(time.Hour))
	time.Sleep(30 * time.Millisecond)
	if h := p.Enter(2, time.Now().Add(time.Hour)); h.Clear {
		t.Fatal("overlap with an extended holder not flagged")
	}
	// No validity left when the use began: not judged, never safe.
	if h := p.Enter(3, time.Now().Add(-time.Millisecond)); h.Judged {
		t.Fatal("a hold with no validity left was judged")
	}
	if p.Violations() != 1 || p.Judged() != 4 || p.NotJudged() != 1 {
		t.Fatalf("violations %d judged %d not judged %d; want 1, 4 and 1", p.Violations(), p.Judged(), p.NotJudged())
	}
}

func TestRunCountsAndReleases(t *testing.T) {
	set := redistest.StartMasters(t, 3, localmasters.PersistNone)
	cfg := engine.DefaultConfig()
	cfg.Masters = set.Addrs()
	// A release that times out leaves its key until the TTL; on a starved
	// CI machine 50 ms can pass, and this test checks every key is gone.
	cfg.Timeout = time.Second
	e, err := engine.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ch, _ := workloads.NewChooser(workloads.ChooserConfig{Keys: 4})
	st, err := workloads.Run(context.Background(), e, workloads.RunConfig{
		Workers: 8, Duration: 700 * time.Millisecond, Warmup: 100 * time.Millisecond,
		Keys: workloads.Keys{Prefix: "lockbench:test:", Count: 4}, Chooser: ch, Hold: workloads.FixedHold{D: time.Millisecond}, Seed: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Acquired < 100 || st.NotAcquired == 0 {
		t.Fatalf("8 workers on 4 keys: acquired %d, not acquired %d; want many of both", st.Acquired, st.NotAcquired)
	}
	if st.Violations != 0 || st.MaxConcurrent != 1 {
		t.Fatalf("violations %d, max concurrent %d", st.Violations, st.MaxConcurrent)
	}
	if st.Acquire.TotalCount() != st.Acquired || st.Release.TotalCount() != st.Acquired {
		t.Fatalf("histogram counts %d/%d differ from acquired %d", st.Acquire.TotalCount(), st.Release.TotalCount(), st.Acquired)
	}
	// The window is the configured 700 ms the run enforces (its end is
	// scheduled, not timed by the workers), so ±100 ms bounds no timing.
	if !bound.Min(t, "run.measured", st.Measured, 600*time.Millisecond) || !bound.Max(t, "run.measured", st.Measured, 800*time.Millisecond) {
		t.Fatalf("measured %v, want about 700ms", st.Measured)
	}
	r := st.Result(workloads.RepliesOf(e), nil, time.Now())
	if r.Throughput.CyclesPerSec <= 0 || len(r.Outcomes.PerMaster) != 3 {
		t.Fatalf("result: %+v", r)
	}
	// Every lock was released: no key of the run is left.
	for _, addr := range set.Addrs() {
		for i := range 4 {
			if v, _ := redistest.Do(addr, "EXISTS", "lockbench:test:"+strconv.Itoa(i)); v != "0" {
				t.Fatalf("key %d left on %s", i, addr)
			}
		}
	}
}

// Holds longer than the TTL: without auto-extension they are cut at the
// validity end (counted as overruns); with it the lock is extended and the
// hold completes, and in neither case do two holders overlap.
func TestAutoExtend(t *testing.T) {
	set := redistest.StartMasters(t, 3, localmasters.PersistNone)
	cfg := engine.DefaultConfig()
	cfg.Masters = set.Addrs()
	// No extend may fail: 100 ms per master (was 50, which a loaded -race
	// machine can reach), well inside the 300 ms TTL.
	cfg.TTL, cfg.Timeout = 300*time.Millisecond, 100*time.Millisecond
	e, err := engine.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ch, _ := workloads.NewChooser(workloads.ChooserConfig{Keys: 2})
	for _, extend := range []bool{false, true} {
		st, err := workloads.Run(context.Background(), e, workloads.RunConfig{
			Workers: 4, Duration: 1500 * time.Millisecond, Keys: workloads.Keys{Prefix: "ext:" + strconv.FormatBool(extend) + ":", Count: 2},
			Chooser: ch, Hold: workloads.FixedHold{D: 500 * time.Millisecond}, TTL: cfg.TTL, AutoExtend: extend, Seed: 3,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("auto-extend=%v: acquired %d, extends %d, failures %d, overruns %d, violations %d",
			extend, st.Acquired, st.Extends, st.ExtendFailures, st.HoldOverruns, st.Violations)
		if st.Violations != 0 {
			t.Fatalf("auto-extend=%v: %d violations", extend, st.Violations)
		}
		if !extend && (st.HoldOverruns == 0 || st.Extends != 0) {
			t.Fatalf("without auto-extend: overruns %d extends %d; 500ms holds on a 300ms TTL must overrun", st.HoldOverruns, st.Extends)
		}
		if extend && (st.Extends == 0 || st.HoldOverruns != 0 || st.ExtendFailures != 0) {
			t.Fatalf("with auto-extend: extends %d overruns %d failures %d", st.Extends, st.HoldOverruns, st.ExtendFailures)
		}
	}
}

// A master that dies mid-run is counted (errors on that master) and the run
// goes on with the quorum of the others.
func TestMasterDiesMidRun(t *testing.T) {
	set := redistest.StartMasters(t, 5, localmasters.PersistNone)
	cfg := engine.DefaultConfig()
	cfg.Masters = set.Addrs()
	e, err := engine.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ch, _ := workloads.NewChooser(workloads.ChooserConfig{Keys: 1000})
	var firstSecond atomic.Int64 // acquires in the first interval, which contains the kill at 0.5 s
	var st *workloads.Stats
	done := make(chan struct{})
	go func() {
		defer close(done)
		st, err = workloads.Run(context.Background(), e, workloads.RunConfig{
			Workers: 8, Duration: 1500 * time.Millisecond, Keys: workloads.Keys{Prefix: "die:", Count: 1000}, Chooser: ch, Seed: 5,
			OnInterval: func(iv results.Interval) { firstSecond.CompareAndSwap(0, iv.Counts[results.Acquire]+1) },
		})
	}()
	time.Sleep(500 * time.Millisecond)
	if err := set.Masters()[0].Kill(); err != nil {
		t.Fatal(err)
	}
	<-done
	if err != nil {
		t.Fatal(err)
	}
	dead := st.PerMaster[0][engine.Error] + st.PerMaster[0][engine.Timeout]
	// A failed acquire needs two more masters failing besides the dead one
	// (quorum 3 of 5): on a starved machine a live master can miss its
	// 50 ms timeout, but the dead one alone must never fail an acquire.
	var others int64
	for m := 1; m < len(st.PerMaster); m++ {
		others += st.PerMaster[m][engine.Error] + st.PerMaster[m][engine.Timeout]
	}
	if dead == 0 || 2*st.Errors > others {
		t.Fatalf("dead master: %d errors/timeouts on it, %d failed acquires with %d errors/timeouts on the live masters; want the first > 0 and every failed acquire explained by two live masters failing",
			dead, st.Errors, others)
	}
	// A sample floor, not a speed: the run went on after the kill.
	if after := st.Acquired - (firstSecond.Load() - 1); after < 100 {
		t.Fatalf("only %d acquires after the first second; the run must go on after the kill", after)
	}
}

// Open loop: the schedule is kept, and when the workers cannot keep up the
// queueing delay shows in the corrected latency, not in the uncorrected one.
func TestOpenLoopCorrectsCoordinatedOmission(t *testing.T) {
	set := redistest.StartMasters(t, 3, localmasters.PersistNone)
	cfg := engine.DefaultConfig()
	cfg.Masters = set.Addrs()
	e, err := engine.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ch, _ := workloads.NewChooser(workloads.ChooserConfig{Keys: 1000})
	var late int64 // this machine's timer lateness beside the last run, µs
	run := func(workers int, rate float64, hold time.Duration) *workloads.Stats {
		stop := timerLateness()
		defer func() { late = stop() }()
		st, err := workloads.Run(context.Background(), e, workloads.RunConfig{
			Workers: workers, Rate: rate, Duration: time.Second, Keys: workloads.Keys{Prefix: "ol:", Count: 1000},
			Chooser: ch, Hold: workloads.FixedHold{D: hold}, Seed: 9,
		})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	// Enough workers: every started acquire has an outcome, and the starts
	// are close to their intended times (TestOpenLoopKeepsUp checks that
	// none is left unserved).
	st := run(16, 500, 0)
	done := st.Acquired + st.NotAcquired + st.Errors
	if st.Offered != 500 || st.Started+st.Unserved != st.Offered || done < st.Started-16 {
		t.Fatalf("500/s for 1s: offered %d, started %d, unserved %d, done %d", st.Offered, st.Started, st.Unserved, done)
	}
	// Kept to 1 ms beyond the timer lateness measured beside the run (an
	// idle worker waits for its start on a timer): under -race on a loaded
	// machine a 1 ms bound alone failed.
	if lag, limit := st.PacerLag.ValueAtQuantile(50), 1000+late; !bound.Max(t, "pacer.lag_p50_us", lag, limit) {
		t.Fatalf("pacer p50 lag %dµs; the schedule must be kept to 1 ms beyond this machine's timer lateness (limit %dµs)", lag, limit)
	}
	// One worker holding each lock 10 ms cannot serve 200/s: starts queue up.
	st = run(1, 200, 10*time.Millisecond)
	// The corrected p50 holds the queue's wait (at most 100/s served of
	// 200/s offered: half a second's backlog by the end), a floor load
	// only raises; the uncorrected p50 is one acquire, told from the
	// queueing as at most a fifth of the corrected, measured in the run.
	corrected, uncorrected := st.Acquire.ValueAtQuantile(50), st.AcquireUncorrected.ValueAtQuantile(50)
	if corrected < 100_000 || !bound.Max(t, "pacer.overloaded_uncorrected_p50_us", uncorrected, corrected/5) || st.Unserved == 0 {
		t.Fatalf("overloaded: corrected p50 %dµs, uncorrected p50 %dµs, unserved %d; want queueing in the corrected figure only",
			corrected, uncorrected, st.Unserved)
	}
}
