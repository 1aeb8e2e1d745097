package workloads_test

import (
	"context"
	"testing"
	"time"

	"lockbench/lock"
	"lockbench/workloads"
)

// instantLock grants every acquire at once, in memory: what the worker loop
// costs around a lock client, with no client and no server.
type instantLock struct{}

func (instantLock) Acquire(_ context.Context, key string) (*lock.Lock, lock.Result) {
	return &lock.Lock{Key: key, ValidUntil: time.Now().Add(time.Minute)}, lock.Result{Acquired: true, Attempts: 1, Sent: 1}
}

func (instantLock) Release(context.Context, *lock.Lock) lock.OpResult {
	return lock.OpResult{OK: true, Count: 1, Sent: 1}
}

// BenchmarkLoopCycle is the worker loop's own CPU per cycle (acquire,
// count, record, release) around a lock that answers at once: 8 workers,
// 1,000 uniform keys, hold 0, closed loop. It reports the process's CPU
// per cycle (cpu-ns/cycle), which the loop's bookkeeping adds to every lock
// client's own; the ns/op column is wall time per cycle over 8 workers on
// the machine's cores. Compare two builds as interleaved runs of one
// -count, not against a figure:
//
//	go test -run '^$' -bench LoopCycle -benchtime 2000000x -count 5 ./workloads
func BenchmarkLoopCycle(b *testing.B) {
	ch, err := workloads.NewChooser(workloads.ChooserConfig{Keys: 1000})
	if err != nil {
		b.Fatal(err)
	}
	cfg := workloads.RunConfig{Workers: 8, Duration: time.Hour, Keys: workloads.Keys{Count: 1000, Prefix: "bench:"},
		Chooser: ch, Hold: workloads.FixedHold{}, Quota: int64(b.N), Seed: 1}
	b.ResetTimer()
	cpu := workloads.ProcessCPU()
	st, err := workloads.Run(context.Background(), instantLock{}, cfg)
	cpu = workloads.ProcessCPU() - cpu
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if st.Acquired < int64(b.N) {
		b.Fatalf("%d cycles counted, want the quota's %d", st.Acquired, b.N)
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(st.Acquired), "cpu-ns/cycle")
}
