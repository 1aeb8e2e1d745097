package engine_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"

	"lockbench/internal/redistest"
	"lockbench/redislock/engine"
	"lockbench/redislock/localmasters"
)

// One op = one lock cycle (acquire + release) on 5 local masters, 100k keys.
// Run with -cpu to vary parallelism; e.g.
//
//	go test ./engine -run '^$' -bench . -benchtime 5s
func benchCycle(b *testing.B, mode engine.Mode, workersPerCPU int) {
	set := redistest.StartMasters(b, 5, localmasters.PersistNone)
	cfg := engine.DefaultConfig()
	cfg.Masters = set.Addrs()
	cfg.Mode = mode
	e, err := engine.New(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	keys := make([]string, 100_000)
	for i := range keys {
		keys[i] = "bench:" + strconv.Itoa(i)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(workersPerCPU)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			lock, _ := e.Acquire(ctx, keys[rand.IntN(len(keys))])
			if lock != nil {
				e.Release(ctx, lock)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
}

func BenchmarkCycleMultiplexed1(b *testing.B)   { benchCycle(b, engine.Multiplexed, 1) }
func BenchmarkCycleMultiplexed128(b *testing.B) { benchCycle(b, engine.Multiplexed, 128) }
func BenchmarkCycleSequential1(b *testing.B)    { benchCycle(b, engine.Sequential, 1) }
func BenchmarkCycleSequential128(b *testing.B)  { benchCycle(b, engine.Sequential, 128) }
