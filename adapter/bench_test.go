package adapter_test

import (
	"context"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"lockbench/adapter"
	"lockbench/internal/adaptertest"
)

// BenchmarkRoundTrip is a cycle (acquire, then release) through the
// protocol by 16 workers, as a cell's, on an in-memory lock: the
// protocol's own cost. "pipe" runs both sides in this process on
// in-memory pipes (its allocations are both sides'); "process" runs the
// adapter as a process of its own on real pipes, as a cell does, and
// reports each side's CPU per cycle (cpu-µs/cycle: this process,
// lockbench's side; adapter-cpu-µs/cycle: the adapter's, read from /proc
// in 10 ms ticks).
func BenchmarkRoundTrip(b *testing.B) {
	hello := adapter.Hello{TTL: 10 * time.Second, MaxFlight: 64}
	b.Run("pipe", func(b *testing.B) {
		c, err := adapter.StartPiped(context.Background(), adapter.Options{Hello: hello}, adaptertest.OpenMem)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		roundTrips(b, c)
	})
	b.Run("process", func(b *testing.B) {
		c, err := adapter.Start(context.Background(), adapter.Options{Argv: fake(b, "mem"), Hello: hello})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		roundTrips(b, c)
	})
}

const benchWorkers = 16

func roundTrips(b *testing.B, c *adapter.Client) {
	b.ReportAllocs()
	b.SetParallelism((benchWorkers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	var worker atomic.Int64
	ctx := context.Background()
	own, ad := selfCPU(), c.CPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		key := "lockbench:bench:" + strconv.FormatInt(worker.Add(1), 10)
		for pb.Next() {
			l, res := c.Acquire(ctx, key)
			if l == nil {
				b.Errorf("acquire %s: %+v (adapter: %v)", key, res, c.Err())
				return
			}
			if r := c.Release(ctx, l); !r.OK {
				b.Errorf("release %s: %+v", key, r)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((selfCPU()-own).Microseconds())/float64(b.N), "cpu-µs/cycle")
	if ad >= 0 {
		b.ReportMetric(float64((c.CPU()-ad).Microseconds())/float64(b.N), "adapter-cpu-µs/cycle")
	}
}

// selfCPU is this process's user+system CPU so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
