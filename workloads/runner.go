// Package workloads generates lock load against a lock client and checks
// safety while it runs.
package workloads

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"lockbench/engine"
	"lockbench/results"
)

// Locker is what the runner drives: lockbench's engine, or another Redlock
// library behind an adapter, so both run the same workload.
type Locker interface {
	Acquire(ctx context.Context, key string) (*engine.Lock, engine.Result)
	Release(ctx context.Context, l *engine.Lock) engine.OpResult
	Addrs() []string
	LateOutcomes() [][engine.NumOutcomes]int64
}

// Extender is a Locker that can extend a held lock (auto-extension).
type Extender interface {
	Extend(ctx context.Context, l *engine.Lock, ttl time.Duration) engine.OpResult
}

// Observer sees the runner's events as they happen, for live metrics
// (package metrics implements it). Its methods run on the workers: they must
// be cheap and safe for concurrent use. Counts are of the measured window,
// like the result's; the in-flight bracket and the probe are not.
type Observer interface {
	AcquireStarted()
	AcquireEnded()
	// Cycle: a successful acquire and its release; uncorrected < 0 in
	// closed loop.
	Cycle(acquire, uncorrected, release time.Duration, perMaster []engine.Outcome)
	Failed(latency time.Duration, perMaster []engine.Outcome, contention bool)
	Extended(ok bool)
	Violation()
	// Started: an open-loop start in the window, lag late (the pacer lag).
	Started(lag time.Duration)
	// Scheduled: when the cell ends, its open-loop starts offered and the
	// ones never started.
	Scheduled(offered, unserved int64)
}

// RunConfig is one cell. Closed loop (Rate 0): Workers each acquire a key,
// hold it, release it, again and again. Open loop (Rate > 0): acquires start
// at Rate per second on schedule, served by up to Workers at once, and
// latency counts from the intended start (coordinated omission corrected).
type RunConfig struct {
	Workers  int
	Rate     float64 // open loop acquires per second; 0 = closed loop
	Duration time.Duration
	Warmup   time.Duration
	Keys     Keys
	Chooser  KeyChooser
	Hold     HoldTime
	TTL      time.Duration // for auto-extension
	// AutoExtend extends a lock whose hold outlives a third of its validity.
	AutoExtend bool
	Seed       uint64
	// ServerCPU, when set, reads the masters' CPU time so the window's
	// server cost is reported next to the client's.
	ServerCPU func() []time.Duration
	// OnWindow, when set, is called as the measured window opens (true)
	// and once the run has stopped (false; only if it opened), so a caller
	// can take its own readings over the window.
	OnWindow func(opened bool)
	// Logs, when set, receive per-second interval histograms (.hlog) by
	// report metric index.
	Logs map[int]io.Writer
	// OnInterval is called after every one-second flush (progress lines).
	OnInterval func(results.Interval)
	// Observer, when set, is told of every outcome as it happens.
	Observer Observer
}

// Validate names the first bad field.
func (c RunConfig) Validate() error {
	switch {
	case c.Workers < 1:
		return fmt.Errorf("workers: %d is not accepted; use at least 1", c.Workers)
	case c.Rate < 0:
		return fmt.Errorf("rate: %v is not accepted; use 0 (closed loop) or acquires per second", c.Rate)
	case c.Duration <= 0:
		return fmt.Errorf("duration: %v is not accepted; use a positive duration such as 10s", c.Duration)
	case c.Warmup < 0:
		return fmt.Errorf("warmup: %v is not accepted; use 0 or a positive duration", c.Warmup)
	case c.Keys.Count < 1:
		return fmt.Errorf("keys: %d is not accepted; use at least 1", c.Keys.Count)
	case c.Chooser == nil:
		return fmt.Errorf("distribution: none chosen")
	}
	return nil
}

// Stats is what a run recorded in its measured window.
type Stats struct {
	Acquire            *hdrhistogram.Histogram // successful acquires, µs (from the intended start in open loop)
	AcquireUncorrected *hdrhistogram.Histogram // open loop: from the actual start
	AcquireFailed      *hdrhistogram.Histogram
	Release            *hdrhistogram.Histogram
	Acquired           int64
	NotAcquired        int64 // lost to contention or validity
	Errors             int64 // failed because masters timed out or errored
	PerMaster          [][engine.NumOutcomes]int64
	Extends            int64                   // successful auto-extensions
	ExtendFailures     int64                   // auto-extensions that lost the lock
	HoldOverruns       int64                   // holds cut short because the validity ran out
	Rate               float64                 // open loop: acquires per second offered; 0 = closed loop
	Offered            int64                   // open loop: acquires intended to start in the window
	Started            int64                   // open loop: of those, started (an acquire was sent)
	Unserved           int64                   // open loop: Offered − Started, never started
	UnservedLate       bool                    // open loop: an unserved start had a free worker in time: lockbench was late, not the lock
	PacerLag           *hdrhistogram.Histogram // open loop: how late lockbench started what it could have started, µs
	Violations         int64
	JudgedHolds        int64 // holds the probe judged on a validity window
	HoldsNotJudged     int64 // holds whose validity ran out before their use began
	MaxConcurrent      int64
	Measured           time.Duration
	WindowStart        time.Time
	CPU                time.Duration // process CPU (user+system) in the window
	RSSStart           int64         // resident bytes when the window opened
	RSSEnd             int64         // resident bytes when it closed
	ServerCPU          []time.Duration
	Interrupted        bool
}

type workerCounts struct {
	started                        int64
	acquired, notAcquired, errors  int64
	extends, extendFails, overruns int64
	perMaster                      [][engine.NumOutcomes]int64
}

// Run drives the locker until the cell's time is up or ctx ends (an
// interrupt): then it stops, releases what it holds and returns what it has.
func Run(ctx context.Context, lk Locker, cfg RunConfig) (*Stats, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Hold == nil {
		cfg.Hold = FixedHold{}
	}
	n := len(lk.Addrs())
	probe := &Probe{}
	begin := time.Now()
	measureFrom := begin.Add(cfg.Warmup)
	end := measureFrom.Add(cfg.Duration)
	stopAt := end
	if cfg.Rate > 0 {
		// A start due just before the end may begin up to PacerLagLimit
		// after it (the generator's own lateness, not a backlog).
		stopAt = end.Add(PacerLagLimit)
	}
	runCtx, cancel := context.WithDeadline(ctx, stopAt)
	defer cancel()

	rec := results.NewRecorder(min(cfg.Workers, 16), measureFrom)
	for m, w := range cfg.Logs {
		if err := rec.LogTo(m, w, measureFrom); err != nil {
			return nil, fmt.Errorf("out: %w", err)
		}
	}

	// The window's bookkeeping: CPU and memory marks, one flush a second.
	win := &window{cfg: cfg, rec: rec, from: measureFrom}
	ticking := make(chan struct{})
	go func() {
		defer close(ticking)
		win.watch(runCtx, lk)
	}()

	// Open loop: free workers claim intended start times from the pacer's
	// schedule.
	var pace *pacer
	pacerDone := make(chan struct{})
	if cfg.Rate > 0 {
		pace = newPacer(cfg.Rate, begin, measureFrom, end, cfg.Workers)
		go func() {
			defer close(pacerDone)
			pace.run(runCtx)
		}()
	} else {
		close(pacerDone)
	}

	c := &cellRun{ctx: runCtx, lk: lk, cfg: cfg, pace: pace, rec: rec, probe: probe, measureFrom: measureFrom}
	counts := make([]*workerCounts, cfg.Workers)
	var wg sync.WaitGroup
	for w := range counts {
		counts[w] = &workerCounts{perMaster: make([][engine.NumOutcomes]int64, n)}
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c.worker(w, counts[w])
		}(w)
	}
	wg.Wait()
	cancel()
	<-ticking
	<-pacerDone
	stop := time.Now()
	if stop.After(end) {
		stop = end
	}
	win.close(stop)
	if err := rec.Err(); err != nil {
		return nil, err
	}

	return c.stats(ctx.Err() != nil, counts, n, stop, win), nil
}

// window takes the measured window's marks: CPU, memory and the servers'
// CPU when it opens and once the run has stopped, and one flush a second.
type window struct {
	cfg                  RunConfig
	rec                  *results.Recorder
	from                 time.Time
	opened               bool
	cpuStart, cpuEnd     time.Duration
	rssStart, rssEnd     int64
	serverStart, servEnd []time.Duration
}

// watch waits for the window to open, takes the opening marks and flushes
// the recorder every second until ctx ends.
func (win *window) watch(ctx context.Context, lk Locker) {
	cfg := win.cfg
	t := time.NewTimer(time.Until(win.from))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return
	}
	if m, ok := lk.(interface{ MarkMeasured() }); ok {
		m.MarkMeasured() // late replies from here on are the run's, not the warm-up's
	}
	win.opened = true
	if cfg.OnWindow != nil {
		cfg.OnWindow(true)
	}
	win.cpuStart = ProcessCPU()
	win.rssStart = residentBytes()
	if cfg.ServerCPU != nil {
		win.serverStart = cfg.ServerCPU()
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case now := <-tick.C:
			iv := win.rec.Flush(now)
			if cfg.OnInterval != nil {
				cfg.OnInterval(iv)
			}
		case <-ctx.Done():
			return
		}
	}
}

// close takes the closing marks and flushes the last interval; call it
// after watch has returned.
func (win *window) close(stop time.Time) {
	cfg := win.cfg
	win.cpuEnd = ProcessCPU()
	win.rssEnd = residentBytes()
	if win.opened && cfg.OnWindow != nil {
		cfg.OnWindow(false)
	}
	if cfg.ServerCPU != nil && win.serverStart != nil {
		win.servEnd = cfg.ServerCPU()
	}
	if stop.After(win.from) {
		iv := win.rec.Flush(stop)
		if cfg.OnInterval != nil {
			cfg.OnInterval(iv)
		}
	}
}

// fill puts the window's length and costs into the stats.
func (win *window) fill(st *Stats, stop time.Time) {
	if !stop.After(win.from) {
		return
	}
	st.Measured = stop.Sub(win.from)
	st.CPU = win.cpuEnd - win.cpuStart
	st.RSSStart, st.RSSEnd = win.rssStart, win.rssEnd
	for i := range win.servEnd {
		d := time.Duration(-1)
		if i < len(win.serverStart) && win.serverStart[i] >= 0 && win.servEnd[i] >= 0 {
			d = win.servEnd[i] - win.serverStart[i]
		}
		st.ServerCPU = append(st.ServerCPU, d)
	}
}

// cellRun is what every worker of one Run shares.
type cellRun struct {
	ctx         context.Context
	lk          Locker
	cfg         RunConfig
	pace        *pacer // nil in closed loop
	rec         *results.Recorder
	probe       *Probe
	measureFrom time.Time
}

// worker is one worker's loop: in closed loop it starts the next acquire
// as soon as the last cycle ends, in open loop it claims the oldest due
// intended start. Latency counts from the intended start.
func (c *cellRun) worker(w int, wc *workerCounts) {
	cfg := c.cfg
	obs := cfg.Observer
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(w)+1))
	for {
		var intended time.Time
		measured := false
		if c.pace != nil {
			n, t, lag, ok := c.pace.claim(c.ctx)
			if !ok {
				return
			}
			intended = t
			if measured = n >= c.pace.first; measured {
				wc.started++
				c.pace.lag.record(w, lag)
				if obs != nil {
					obs.Started(lag)
				}
			}
		} else if c.ctx.Err() != nil {
			return
		}
		idx := cfg.Chooser.Next(rng)
		key := cfg.Keys.Name(idx)
		t0 := time.Now()
		if c.pace == nil {
			intended = t0
			measured = !t0.Before(c.measureFrom)
		}
		if obs != nil {
			obs.AcquireStarted()
		}
		lock, res := c.lk.Acquire(c.ctx, key)
		if obs != nil {
			obs.AcquireEnded()
		}
		if res.Err != nil && lock == nil {
			return // the run ended mid-retry: not an outcome
		}
		done := time.Now()
		if lock == nil {
			if measured {
				c.rec.Record(w, results.Failed, done.Sub(intended))
				countFailure(wc, res)
				if obs != nil {
					obs.Failed(done.Sub(intended), res.PerMaster, IsContention(res))
				}
			}
			continue
		}
		hold(c.ctx, c.lk, lock, idx, cfg, rng, c.probe, wc, measured)
		// Released even when the run ended meanwhile: never leave a lock behind.
		rel := c.lk.Release(context.Background(), lock)
		if measured {
			wc.acquired++
			c.rec.Record(w, results.Acquire, done.Sub(intended))
			if c.pace != nil {
				c.rec.Record(w, results.AcquireUncorrected, done.Sub(t0))
			}
			c.rec.Record(w, results.Release, rel.Elapsed)
			for m, o := range res.PerMaster {
				wc.perMaster[m][o]++
			}
			if obs != nil {
				uncorrected := time.Duration(-1)
				if c.pace != nil {
					uncorrected = done.Sub(t0)
				}
				obs.Cycle(done.Sub(intended), uncorrected, rel.Elapsed, res.PerMaster)
			}
		}
	}
}

// stats gathers what the workers, the recorder, the probe, the pacer and
// the window's marks saw; n is the number of masters.
func (c *cellRun) stats(interrupted bool, counts []*workerCounts, n int, stop time.Time, win *window) *Stats {
	st := &Stats{
		Acquire:            c.rec.Total(results.Acquire),
		AcquireUncorrected: c.rec.Total(results.AcquireUncorrected),
		AcquireFailed:      c.rec.Total(results.Failed),
		Release:            c.rec.Total(results.Release),
		PerMaster:          make([][engine.NumOutcomes]int64, n),
		Violations:         c.probe.Violations(),
		MaxConcurrent:      c.probe.MaxConcurrent(),
		Interrupted:        interrupted,
		WindowStart:        c.measureFrom,
		JudgedHolds:        c.probe.Judged(),
		HoldsNotJudged:     c.probe.NotJudged(),
		Rate:               c.cfg.Rate,
	}
	if c.pace == nil {
		st.AcquireUncorrected = nil
	} else {
		st.PacerLag = c.pace.lag.total()
		st.Offered = c.pace.offered(stop)
		st.UnservedLate = c.pace.lateAtEnd.Load()
	}
	win.fill(st, stop)
	for _, wc := range counts {
		st.add(wc)
	}
	st.Unserved = st.Offered - st.Started // 0 - 0 in closed loop
	if c.pace != nil && c.cfg.Observer != nil {
		c.cfg.Observer.Scheduled(st.Offered, st.Unserved)
	}
	return st
}

// add folds one worker's counts into the stats.
func (st *Stats) add(wc *workerCounts) {
	st.Started += wc.started
	st.Acquired += wc.acquired
	st.NotAcquired += wc.notAcquired
	st.Errors += wc.errors
	st.Extends += wc.extends
	st.ExtendFailures += wc.extendFails
	st.HoldOverruns += wc.overruns
	for m := range wc.perMaster {
		for o := range wc.perMaster[m] {
			st.PerMaster[m][o] += wc.perMaster[m][o]
		}
	}
}

// hold keeps the lock for a drawn hold time inside the probe. A hold is
// judged on the lock's validity window: it ends when the hold does or when
// the validity runs out, whichever is first, unless auto-extension keeps the
// lock alive. A hold of 0 is no use of the lock, so the probe has nothing
// to judge.
func hold(ctx context.Context, lk Locker, lock *engine.Lock, idx uint64, cfg RunConfig, rng *rand.Rand,
	probe *Probe, wc *workerCounts, measured bool) {
	d := cfg.Hold.Next(rng)
	if d <= 0 {
		return
	}
	h := probe.Enter(idx, lock.ValidUntil)
	defer probe.Exit(h)
	if h.Judged && !h.Clear && cfg.Observer != nil {
		cfg.Observer.Violation()
	}
	until := time.Now().Add(d)
	ext, canExtend := lk.(Extender)
	for {
		now := time.Now()
		if !now.Before(until) {
			return
		}
		if until.Before(lock.ValidUntil) && !(cfg.AutoExtend && canExtend && lock.ValidUntil.Sub(now) < cfg.TTL/3) {
			time.Sleep(until.Sub(now))
			return
		}
		if !cfg.AutoExtend || !canExtend {
			// The lock runs out before the hold ends: stop using it then.
			time.Sleep(lock.ValidUntil.Sub(now))
			if measured {
				wc.overruns++
			}
			return
		}
		// Extend once a third of the TTL is left.
		wake := lock.ValidUntil.Add(-cfg.TTL / 3)
		if wake.After(until) {
			wake = until
		}
		time.Sleep(time.Until(wake))
		if !time.Now().Before(until) {
			return
		}
		r := ext.Extend(ctx, lock, cfg.TTL)
		if measured && cfg.Observer != nil {
			cfg.Observer.Extended(r.OK)
		}
		if !r.OK {
			if measured {
				wc.extendFails++
			}
			return
		}
		probe.Extend(h, lock.ValidUntil)
		if measured {
			wc.extends++
		}
	}
}

// countFailure files a failed acquire by its per-master outcomes.
func countFailure(wc *workerCounts, res engine.Result) {
	for m, o := range res.PerMaster {
		wc.perMaster[m][o]++
	}
	if IsContention(res) {
		wc.notAcquired++
	} else {
		wc.errors++
	}
}

// IsContention says whether a failed acquire lost to contention (some master
// held the key, or a quorum accepted but too slowly) rather than to masters
// that timed out or errored.
func IsContention(res engine.Result) bool {
	for _, o := range res.PerMaster {
		if o == engine.Taken {
			return true
		}
	}
	return res.Successes >= engine.Quorum(len(res.PerMaster))
}

// ProcessCPU is user+system CPU of this process so far.
func ProcessCPU() time.Duration {
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
			if f := strings.Fields(rest); len(f) >= 1 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}
