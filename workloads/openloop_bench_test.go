package workloads_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"lockbench/engine"
	"lockbench/internal/redistest"
	"lockbench/localmasters"
	"lockbench/plan"
	"lockbench/workloads"
)

// BenchmarkOpenVsClosed runs, back to back on the same 5 local masters, a
// closed loop of 512 workers and open loops of 512 workers offered 40k/s
// and 80k/s (both past the closed loop's maximum on a small box). It
// reports the open/closed throughput ratio (target ≥ 0.9), the client CPU
// per cycle ratio (target ≤ 1.2) and the plateau: served at 80k over served
// at 40k (target ≥ 0.9: no collapse past saturation). Ratios inside one
// run, so a busy machine shifts both sides. Cell length:
// LOCKBENCH_BENCH_DURATION (default 3s, plus 1s warm-up).
//
//	LOCKBENCH_REQUIRE_REDIS=1 go test -run '^$' -bench OpenVsClosed -benchtime 1x ./workloads
func BenchmarkOpenVsClosed(b *testing.B) {
	dur := 3 * time.Second
	if v := os.Getenv("LOCKBENCH_BENCH_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("LOCKBENCH_BENCH_DURATION: %v", err)
		}
		dur = d
	}
	set := redistest.StartMasters(b, 5, localmasters.PersistNone)
	s := plan.Defaults()
	cfg, err := s.EngineConfig()
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
		st, err := workloads.Run(context.Background(), e, workloads.RunConfig{
			Workers: 512, Rate: rate, Duration: dur, Warmup: time.Second,
			Keys: workloads.Keys{Prefix: "bench:" + name + ":", Count: 100_000}, Chooser: ch, Seed: 1,
		})
		if err != nil {
			b.Fatal(err)
		}
		r := st.Result(e, nil, time.Now())
		b.Logf("%s: %.0f cycles/s, %.1f client CPU µs/cycle", name, r.Throughput.CyclesPerSec, r.Client.CPUMicrosCycle)
		return r.Throughput.CyclesPerSec, r.Client.CPUMicrosCycle
	}
	b.ResetTimer()
	for i := range b.N {
		closed, closedCPU := cell(fmt.Sprint("closed", i), 0)
		open40, _ := cell(fmt.Sprint("open40k", i), 40_000)
		open80, open80CPU := cell(fmt.Sprint("open80k", i), 80_000)
		b.ReportMetric(closed, "closed-cycles/s")
		b.ReportMetric(open80, "open80k-cycles/s")
		b.ReportMetric(open80/closed, "open/closed")
		b.ReportMetric(open80CPU/closedCPU, "open/closed-cpu/cycle")
		b.ReportMetric(open80/open40, "plateau-80k/40k")
	}
}
