package workloads_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"lockbench/internal/bound"
	"lockbench/internal/redistest"
	"lockbench/redislock/engine"
	"lockbench/redislock/localmasters"
	"lockbench/workloads"
)

func openEngine(t *testing.T, masters int) *engine.Engine {
	t.Helper()
	set := redistest.StartMasters(t, masters, localmasters.PersistNone)
	cfg := engine.DefaultConfig()
	// These tests count starts and acquires: a loaded -race machine can
	// stall a reply past the default 50 ms and fail an acquire.
	cfg.Masters, cfg.Timeout = set.Addrs(), time.Second
	e, err := engine.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// An open loop the lock cannot keep up with (4 workers holding 5 ms serve
// at most 800/s of 5,000/s): every start intended in the window is offered,
// unserved = offered − started exactly, the corrected latency grows with
// the backlog, the pacer lag does not (busy workers are queueing, not
// lockbench being late) and the result says it was overloaded. Before the
// fix the pacer was still handing out the warm-up's backlog when the
// window closed: 0 offered, 0 acquired, no warning.
func TestOpenLoopOverloadedCountsEveryIntendedStart(t *testing.T) {
	e := openEngine(t, 1)
	ch, _ := workloads.NewChooser(workloads.ChooserConfig{Keys: 100_000})
	st, err := workloads.Run(context.Background(), e, workloads.RunConfig{
		Workers: 4, Rate: 5000, Duration: time.Second, Warmup: 300 * time.Millisecond,
		Keys: workloads.Keys{Prefix: "olover:", Count: 100_000}, Chooser: ch, Hold: workloads.FixedHold{D: 5 * time.Millisecond}, Seed: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("offered %d started %d unserved %d acquired %d; corrected p99 %dµs, pacer lag p50 %dµs p99 %dµs",
		st.Offered, st.Started, st.Unserved, st.Acquired, st.Acquire.ValueAtQuantile(99),
		st.PacerLag.ValueAtQuantile(50), st.PacerLag.ValueAtQuantile(99))
	if st.Offered != 5000 {
		t.Fatalf("offered %d; 5000/s for 1s must offer every one of the 5000 intended starts", st.Offered)
	}
	if st.Started < 50 || st.Started > 900 || st.Unserved != st.Offered-st.Started {
		t.Fatalf("started %d unserved %d of %d offered; want ~800 started and unserved = offered − started", st.Started, st.Unserved, st.Offered)
	}
	if st.Acquired < st.Started-4 || st.Acquired > st.Started {
		t.Fatalf("acquired %d of %d started", st.Acquired, st.Started)
	}
	if p99 := st.Acquire.ValueAtQuantile(99); p99 < 300_000 {
		t.Fatalf("corrected p99 %dµs; a backlog growing for 1s must show in it", p99)
	}
	// Queueing behind busy workers reaches the corrected p99 (300 ms or
	// more, checked above); the pacer's own lateness is far below it. A
	// lag p50 of a tenth of that queueing would mean the queueing was
	// charged to the pacer; a loaded machine or the race detector stretch
	// the pacer by milliseconds, not hundreds of them.
	lag, queued := st.PacerLag.ValueAtQuantile(50), st.Acquire.ValueAtQuantile(99)
	if !bound.Max(t, "pacer.overloaded_lag_p50_us", lag, queued/10) {
		t.Fatalf("pacer lag p50 %dµs, a tenth of the queueing (%dµs) or more: queueing behind busy workers was charged to the pacer", lag, queued)
	}
	r := st.Result(workloads.RepliesOf(e), nil, time.Now())
	ol := r.OpenLoop
	if ol == nil || !ol.Overloaded || st.UnservedLate || ol.Served != st.Started || ol.ServedRate <= 0 || !hasWarning(r.Warnings, "OVERLOADED") {
		t.Fatalf("result open loop %+v, warnings %q; want overloaded, served and a warning", ol, r.Warnings)
	}
}

// Enough workers (64 in flight for 500/s: an acquire may take 128 ms, more
// than a master's 50 ms timeout, so even a starved machine keeps up):
// every intended start is served, or blamed on lockbench, and no overload.
func TestOpenLoopKeepsUp(t *testing.T) {
	e := openEngine(t, 3)
	ch, _ := workloads.NewChooser(workloads.ChooserConfig{Keys: 1000})
	st, err := workloads.Run(context.Background(), e, workloads.RunConfig{
		Workers: 64, Rate: 500, Duration: time.Second, Warmup: 200 * time.Millisecond,
		Keys: workloads.Keys{Prefix: "olok:", Count: 1000}, Chooser: ch, Seed: 4,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("offered %d started %d unserved %d (lockbench late: %v); pacer lag p50 %dµs max %dµs",
		st.Offered, st.Started, st.Unserved, st.UnservedLate, st.PacerLag.ValueAtQuantile(50), st.PacerLag.Max())
	if st.Offered != 500 || st.Unserved != st.Offered-st.Started {
		t.Fatalf("offered %d started %d unserved %d; want 500 and unserved = offered − started", st.Offered, st.Started, st.Unserved)
	}
	// A start due just before the end may begin up to the lag limit after
	// it; only a starved machine makes lockbench later than that, and then
	// the result must blame lockbench, not the lock.
	r := st.Result(workloads.RepliesOf(e), nil, time.Now())
	if st.Unserved != 0 && !st.UnservedLate {
		t.Fatalf("%d starts unserved at 500/s with 64 workers, blamed on the lock", st.Unserved)
	}
	if r.OpenLoop.Overloaded || hasWarning(r.Warnings, "OVERLOADED") {
		t.Fatalf("warned of overload at 500/s with 64 workers: %q", r.Warnings)
	}
}

// The run's safety probe says when it judged nothing: with hold 0 no
// critical section exists, so 0 violations proves nothing.
func TestRunSafetyJudgedOnHolds(t *testing.T) {
	e := openEngine(t, 3)
	ch, _ := workloads.NewChooser(workloads.ChooserConfig{Keys: 1000})
	for _, hold := range []time.Duration{0, time.Millisecond} {
		st, err := workloads.Run(context.Background(), e, workloads.RunConfig{
			Workers: 4, Duration: 300 * time.Millisecond, Keys: workloads.Keys{Prefix: "judge:" + hold.String() + ":", Count: 1000},
			Chooser: ch, Hold: workloads.FixedHold{D: hold}, Seed: 6,
		})
		if err != nil {
			t.Fatal(err)
		}
		sf := st.Result(workloads.RepliesOf(e), nil, time.Now()).Safety
		t.Logf("hold %v: acquired %d, %+v", hold, st.Acquired, sf)
		if hold == 0 && (sf.JudgedHolds != 0 || sf.NotJudged != "hold 0") {
			t.Fatalf("hold 0: judged %d, not judged %q; want 0 and \"hold 0\"", sf.JudgedHolds, sf.NotJudged)
		}
		// No warm-up here: every hold is in the window.
		if hold > 0 && (sf.JudgedHolds < st.Acquired || sf.NotJudged != "" || sf.HoldsNotJudged != 0) {
			t.Fatalf("hold %v: judged %d of %d acquired, not judged %d (%q)", hold, sf.JudgedHolds, st.Acquired, sf.HoldsNotJudged, sf.NotJudged)
		}
	}
}

func hasWarning(ws []string, s string) bool {
	for _, w := range ws {
		if strings.Contains(w, s) {
			return true
		}
	}
	return false
}

// timerLateness starts measuring how late a 1 ms sleep of this process
// wakes, beside a run: the scheduling delay the pacer's own wake-ups meet
// at the same moment (the race detector and a loaded machine raise both).
// The function it returns stops it and gives the samples' p90, µs.
func timerLateness() func() int64 {
	stop, done := make(chan struct{}), make(chan int64)
	go func() {
		var late []int64
		for {
			select {
			case <-stop:
				slices.Sort(late)
				if len(late) == 0 {
					done <- 0
					return
				}
				done <- late[len(late)*9/10]
				return
			default:
			}
			t0 := time.Now()
			time.Sleep(time.Millisecond)
			late = append(late, (time.Since(t0) - time.Millisecond).Microseconds())
		}
	}()
	return func() int64 {
		close(stop)
		return <-done
	}
}
