// Package workloads generates lock load against an engine and checks safety
// while it runs.
package workloads

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"lockbench/engine"
	"lockbench/report"
)

// Locker is what the runner drives: lockbench's engine, or another Redlock
// library behind an adapter, so both run the same workload.
type Locker interface {
	Acquire(ctx context.Context, key string) (*engine.Lock, engine.Result)
	Release(ctx context.Context, l *engine.Lock) engine.OpResult
	Addrs() []string
	LateOutcomes() [][engine.NumOutcomes]int64
}

// RunConfig is one closed-loop cell: W workers, each acquiring a key, holding
// it, releasing it, for Duration after Warmup.
type RunConfig struct {
	Workers  int
	Duration time.Duration
	Warmup   time.Duration
	Keys     Keys
	Chooser  KeyChooser
	Hold     time.Duration
	Seed     uint64
}

// Validate names the first bad field.
func (c RunConfig) Validate() error {
	switch {
	case c.Workers < 1:
		return fmt.Errorf("workers: %d is not accepted; use at least 1", c.Workers)
	case c.Duration <= 0:
		return fmt.Errorf("duration: %v is not accepted; use a positive duration such as 10s", c.Duration)
	case c.Warmup < 0:
		return fmt.Errorf("warmup: %v is not accepted; use 0 or a positive duration", c.Warmup)
	case c.Hold < 0:
		return fmt.Errorf("hold: %v is not accepted; use 0 or a positive duration", c.Hold)
	case c.Keys.Count < 1:
		return fmt.Errorf("keys: %d is not accepted; use at least 1", c.Keys.Count)
	case c.Chooser == nil:
		return fmt.Errorf("distribution: none chosen")
	}
	return nil
}

// Stats is what a run recorded in its measured window.
type Stats struct {
	Acquire       *hdrhistogram.Histogram // successful acquires, µs
	AcquireFailed *hdrhistogram.Histogram // failed acquires, µs
	Release       *hdrhistogram.Histogram // releases of held locks, µs
	Acquired      int64
	NotAcquired   int64 // lost to contention or validity
	Errors        int64 // failed because masters timed out or errored
	PerMaster     [][engine.NumOutcomes]int64
	Violations    int64
	MaxConcurrent int64
	Measured      time.Duration
	CPU           time.Duration // process CPU (user+system) in the window
	RSSStart      int64         // resident bytes when the window opened
	RSSEnd        int64         // resident bytes when it closed
	Interrupted   bool
}

type workerStats struct {
	acquire, failed, release *hdrhistogram.Histogram
	acquired, notAcquired    int64
	errors                   int64
	perMaster                [][engine.NumOutcomes]int64
}

// Run drives the engine until the cell's time is up or ctx ends (an
// interrupt): then it stops, releases what it holds and returns what it has.
func Run(ctx context.Context, eng Locker, cfg RunConfig) (*Stats, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := len(eng.Addrs())
	probe := &Probe{}
	begin := time.Now()
	measureFrom := begin.Add(cfg.Warmup)
	end := measureFrom.Add(cfg.Duration)
	runCtx, cancel := context.WithDeadline(ctx, end)
	defer cancel()

	var cpuAtStart time.Duration
	var rssAtStart int64
	cpuMark := make(chan struct{})
	go func() {
		defer close(cpuMark)
		t := time.NewTimer(time.Until(measureFrom))
		defer t.Stop()
		select {
		case <-t.C:
		case <-runCtx.Done():
		}
		cpuAtStart = processCPU()
		rssAtStart = residentBytes()
	}()

	workers := make([]*workerStats, cfg.Workers)
	var wg sync.WaitGroup
	for w := range workers {
		ws := &workerStats{
			acquire: report.NewHistogram(), failed: report.NewHistogram(), release: report.NewHistogram(),
			perMaster: make([][engine.NumOutcomes]int64, n),
		}
		workers[w] = ws
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(cfg.Seed, seed))
			for runCtx.Err() == nil {
				idx := cfg.Chooser.Next(rng)
				key := cfg.Keys.Name(idx)
				t0 := time.Now()
				lock, res := eng.Acquire(runCtx, key)
				if res.Err != nil && lock == nil {
					return // the run ended mid-retry: not an outcome
				}
				lat := time.Since(t0)
				measured := !t0.Before(measureFrom)
				if lock == nil {
					if measured {
						report.RecordDuration(ws.failed, lat)
						countFailure(ws, res)
					}
					continue
				}
				probe.Enter(idx)
				if cfg.Hold > 0 {
					time.Sleep(cfg.Hold)
				}
				probe.Exit(idx)
				// Released even when the run ended meanwhile: never leave a lock behind.
				rel := eng.Release(context.Background(), lock)
				if measured {
					ws.acquired++
					report.RecordDuration(ws.acquire, lat)
					report.RecordDuration(ws.release, rel.Elapsed)
					for m, o := range res.PerMaster {
						ws.perMaster[m][o]++
					}
				}
			}
		}(uint64(w) + 1)
	}
	wg.Wait()
	<-cpuMark
	stop := time.Now()
	cpuAtEnd := processCPU()
	rssAtEnd := residentBytes()

	st := &Stats{
		Acquire: report.NewHistogram(), AcquireFailed: report.NewHistogram(), Release: report.NewHistogram(),
		PerMaster:     make([][engine.NumOutcomes]int64, n),
		Violations:    probe.Violations(),
		MaxConcurrent: probe.MaxConcurrent(),
		Interrupted:   ctx.Err() != nil,
	}
	if stop.After(measureFrom) {
		last := stop
		if last.After(end) {
			last = end
		}
		st.Measured = last.Sub(measureFrom)
		st.CPU = cpuAtEnd - cpuAtStart
		st.RSSStart, st.RSSEnd = rssAtStart, rssAtEnd
	}
	for _, ws := range workers {
		st.Acquire.Merge(ws.acquire)
		st.AcquireFailed.Merge(ws.failed)
		st.Release.Merge(ws.release)
		st.Acquired += ws.acquired
		st.NotAcquired += ws.notAcquired
		st.Errors += ws.errors
		for m := range ws.perMaster {
			for o := range ws.perMaster[m] {
				st.PerMaster[m][o] += ws.perMaster[m][o]
			}
		}
	}
	return st, nil
}

// countFailure files a failed acquire: contention (some master held the key,
// or the acquire was too slow) or infrastructure (no master said taken).
func countFailure(ws *workerStats, res engine.Result) {
	taken := false
	for m, o := range res.PerMaster {
		ws.perMaster[m][o]++
		if o == engine.Taken {
			taken = true
		}
	}
	if taken || res.Successes >= len(res.PerMaster)/2+1 {
		ws.notAcquired++
	} else {
		ws.errors++
	}
}

// processCPU is user+system CPU of this process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// residentBytes is this process's resident set size (VmRSS), 0 if unknown.
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}
