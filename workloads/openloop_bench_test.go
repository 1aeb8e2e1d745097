package workloads_test

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"lockbench/internal/redistest"
	"lockbench/lock"
	"lockbench/plan"
	"lockbench/redislock/engine"
	"lockbench/redislock/localmasters"
	"lockbench/redislock/redisplan"
	"lockbench/workloads"
)

// BenchmarkOpenVsClosed runs, on the same 5 local masters, a closed loop of
// 512 workers and open loops of 512 workers offered 40k/s and 80k/s (both
// past the closed loop's maximum on a small box), interleaved in rounds so
// a busy machine's swings hit all three alike (the order turns each round). It reports the medians over
// the rounds of the open/closed throughput ratio (target ≥ 0.9), the
// client CPU per cycle ratio (target ≤ 1.2) and the plateau: served at 80k
// over served at 40k (target ≥ 0.9: no collapse past saturation).
// LOCKBENCH_BENCH_DURATION sets a cell's measured time (default 2s, plus
// 500ms warm-up), LOCKBENCH_BENCH_ROUNDS the rounds (default 5).
//
//	LOCKBENCH_REQUIRE_REDIS=1 go test -run '^$' -bench OpenVsClosed -benchtime 1x ./workloads
func BenchmarkOpenVsClosed(b *testing.B) {
	dur := envDuration(b, "LOCKBENCH_BENCH_DURATION", 2*time.Second)
	rounds := 5
	if v := os.Getenv("LOCKBENCH_BENCH_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("LOCKBENCH_BENCH_ROUNDS: %q is not a positive count", v)
		}
		rounds = n
	}
	set := redistest.StartMasters(b, 5, localmasters.PersistNone)
	s := plan.Defaults()
	cfg, err := redisplan.EngineConfig(s)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Masters = set.Addrs()
	e, err := engine.New(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	ch, _ := workloads.NewChooser(workloads.ChooserConfig{Keys: 100_000})
	cell := func(name string, rate float64) (cyclesPerSec, cpuPerCycle float64) {
		var st *workloads.Stats
		var err error
		// Labelled, so a -cpuprofile can be split by cell (pprof -tagfocus).
		pprof.Do(context.Background(), pprof.Labels("cell", strings.TrimRight(name, "0123456789.")), func(ctx context.Context) {
			st, err = workloads.Run(ctx, e, workloads.RunConfig{
				Workers: 512, Rate: rate, Duration: dur, Warmup: 500 * time.Millisecond,
				Keys: workloads.Keys{Prefix: "bench:" + name + ":", Count: 100_000}, Chooser: ch, Seed: 1,
			})
		})
		if err != nil {
			b.Fatal(err)
		}
		r := st.Result(workloads.RepliesOf(e), nil, time.Now())
		b.Logf("%s: %.0f cycles/s, %.1f client CPU µs/cycle", name, r.Throughput.CyclesPerSec, r.Client.CPUMicrosCycle)
		return r.Throughput.CyclesPerSec, r.Client.CPUMicrosCycle
	}
	b.ResetTimer()
	for i := range b.N {
		var closedR, ratio, cpuRatio, plateau []float64
		for k := range rounds {
			tag := fmt.Sprintf("%d.%d", i, k)
			// The order turns each round, so no cell always follows another.
			var closed, closedCPU, open40, open80, open80CPU float64
			steps := []func(){
				func() { closed, closedCPU = cell("closed"+tag, 0) },
				func() { open40, _ = cell("open40k"+tag, 40_000) },
				func() { open80, open80CPU = cell("open80k"+tag, 80_000) },
			}
			for j := range steps {
				steps[(j+k)%len(steps)]()
			}
			closedR = append(closedR, closed)
			ratio = append(ratio, open80/closed)
			cpuRatio = append(cpuRatio, open80CPU/closedCPU)
			plateau = append(plateau, open80/open40)
		}
		b.ReportMetric(median(closedR), "closed-cycles/s")
		b.ReportMetric(median(ratio), "open/closed")
		b.ReportMetric(median(cpuRatio), "open/closed-cpu/cycle")
		b.ReportMetric(median(plateau), "plateau-80k/40k")
	}
}

// envDuration reads a duration from the environment.
func envDuration(b *testing.B, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	return d
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// BenchmarkRunnerOpenVsClosed is the load generator's own cost per cycle,
// without Redis: a fake lock whose every acquire and release is one round
// trip to a server goroutine (a park and a wake, as with the engine's
// replies). Closed loop and an open loop offered far more than it can
// serve, 512 workers each, back to back; reported: client CPU µs per cycle
// of each and their ratio (target ≤ 1.2). LOCKBENCH_BENCH_RATE sets the
// open loop's rate instead (e.g. below saturation, where the pacer wakes
// idle workers).
//
//	go test -run '^$' -bench RunnerOpenVsClosed -benchtime 1x ./workloads
func BenchmarkRunnerOpenVsClosed(b *testing.B) {
	rate := 5_000_000.0
	if v := os.Getenv("LOCKBENCH_BENCH_RATE"); v != "" {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r <= 0 {
			b.Fatalf("LOCKBENCH_BENCH_RATE: %q is not a positive rate", v)
		}
		rate = r
	}
	lk := newEchoLocker()
	defer lk.close()
	ch, _ := workloads.NewChooser(workloads.ChooserConfig{Keys: 100_000})
	cell := func(name string, rate float64) float64 {
		st, err := workloads.Run(context.Background(), lk, workloads.RunConfig{
			Workers: 512, Rate: rate, Duration: time.Second, Warmup: 200 * time.Millisecond,
			Keys: workloads.Keys{Prefix: name + ":", Count: 100_000}, Chooser: ch, Seed: 1,
		})
		if err != nil {
			b.Fatal(err)
		}
		r := st.Result(workloads.RepliesOf(lk), nil, time.Now())
		b.Logf("%s: %.0f cycles/s, %.2f client CPU µs/cycle", name, r.Throughput.CyclesPerSec, r.Client.CPUMicrosCycle)
		if ol := r.OpenLoop; ol != nil {
			b.Logf("%s: served %.0f/s of %.0f/s, pacer lag p50 %.0fµs p99 %.0fµs", name, ol.ServedRate, ol.OfferedRate, ol.PacerLag.P50, ol.PacerLag.P99)
		}
		return r.Client.CPUMicrosCycle
	}
	b.ResetTimer()
	for range b.N {
		closed := cell("closed", 0)
		open := cell("open", rate)
		b.ReportMetric(closed, "closed-cpu-µs/cycle")
		b.ReportMetric(open, "open-cpu-µs/cycle")
		b.ReportMetric(open/closed, "open/closed-cpu/cycle")
	}
}

// echoLocker always grants the lock after one round trip to its server
// goroutine.
type echoLocker struct{ reqs chan chan struct{} }

func newEchoLocker() *echoLocker {
	l := &echoLocker{reqs: make(chan chan struct{}, 1024)}
	go func() {
		for r := range l.reqs {
			r <- struct{}{}
		}
	}()
	return l
}

func (l *echoLocker) close() { close(l.reqs) }

func (l *echoLocker) roundTrip() {
	r := make(chan struct{}, 1)
	l.reqs <- r
	<-r
}

func (l *echoLocker) Acquire(ctx context.Context, key string) (*lock.Lock, lock.Result) {
	l.roundTrip()
	now := time.Now()
	return &lock.Lock{Key: key, Start: now, ValidUntil: now.Add(time.Minute)},
		lock.Result{Acquired: true, Attempts: 1, Successes: 1, PerMaster: []engine.Outcome{engine.OK}}
}

func (l *echoLocker) Release(ctx context.Context, lk *lock.Lock) lock.OpResult {
	l.roundTrip()
	return lock.OpResult{OK: true, Count: 1, PerMaster: []engine.Outcome{engine.OK}}
}

func (l *echoLocker) Addrs() []string { return []string{"echo"} }

func (l *echoLocker) LateOutcomes() [][engine.NumOutcomes]int64 {
	return make([][engine.NumOutcomes]int64, 1)
}
