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

	"lockbench/lock"
	"lockbench/results"
)

// serversOf is how many servers lk reports outcomes for (0: none).
func serversOf(lk lock.Locker) int {
	if ps, ok := lk.(lock.PerServer); ok {
		return len(ps.Addrs())
	}
	return 0
}

// Observer sees the run as it happens, for live metrics (package metrics
// implements it): every record as it is made (Fold; those outside the
// measured window too, which it counts as Counts.Fold does), and what is
// not an operation's outcome. Its methods run on the workers: they must be
// cheap and safe for concurrent use.
type Observer interface {
	Reducer
	// AcquireStarted and AcquireEnded bracket every acquire (in flight),
	// those the run's end cut short too.
	AcquireStarted()
	AcquireEnded()
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
	// Observer, when set, is told of every record as it is made.
	Observer Observer
	// Reducers fold every record too, beside the run's own (a fault
	// cell's failure times).
	Reducers []Reducer

	// Cycle is what a worker does with a lock it won (nil: hold it for
	// Hold, extending it when AutoExtend is set).
	Cycle Cycle
	// Start is when the run begins (zero: now); Run waits for it.
	Start time.Time
	// Quota stops the run after this many measured acquisitions (0: none).
	Quota int64
	// FinishCycles lets an acquire under way when the run ends complete,
	// and its cycle with it; the window then ends with the last cycle
	// (chaos: every hold a client takes is logged for the checkers).
	FinishCycles bool
	// Shards is how many shards the latency recorder has (0: one per
	// worker, at most 16).
	Shards int
	// Calls: each worker stops after this many acquires ended (holding
	// the lock or not); 0: when the run ends.
	Calls int
	// CallersWait: the locker waits for a held lock (a wait time or
	// retries), so a failed acquire is a caller that gave up; otherwise it
	// is a try that found the lock taken.
	CallersWait bool
	// Probe is the mutual-exclusion check the cycle's holds go through
	// (nil: the run's own); the clients of a fault cell in one process
	// share one, so that it sees them all.
	Probe *Probe
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
	Folded
	Acquire            *hdrhistogram.Histogram // successful acquires, µs (from the intended start in open loop)
	AcquireUncorrected *hdrhistogram.Histogram // open loop: from the actual start
	AcquireFailed      *hdrhistogram.Histogram
	Release            *hdrhistogram.Histogram
	Rate               float64                 // open loop: acquires per second offered; 0 = closed loop
	Offered            int64                   // open loop: acquires intended to start in the window
	Unserved           int64                   // open loop: Offered − Started, never started
	UnservedLate       bool                    // open loop: an unserved start had a free worker in time: lockbench was late, not the lock
	PacerLag           *hdrhistogram.Histogram // open loop: how late lockbench started what it could have started, µs
	JudgedHolds        int64                   // holds the probe judged on a validity window
	HoldsNotJudged     int64                   // holds whose validity ran out before their use began
	MaxConcurrent      int64
	RSSStart           int64 // resident bytes when the window opened
	RSSEnd             int64 // resident bytes when it closed
	ServerCPU          []time.Duration
	Interrupted        bool
	// What waiting callers saw: times to lock (µs), what callers that
	// gave up had waited, keys' handoff gaps, each worker's waits, the
	// hottest keys, and the commands the window sent (nil: not counted).
	TimeToLock, GaveUpWait, HandoffGap *hdrhistogram.Histogram
	HotKeys                            []results.KeyUse
	KeysFollowed                       string
}

// Folded is what a run's loop folded in its process that crosses a
// process boundary as it is: a client process sends it, its histograms as
// interval logs (records never cross: the 2 cores have no CPU for them).
type Folded struct {
	Counts
	WindowStart time.Time     `json:"start"`
	Measured    time.Duration `json:"measured"`
	CPU         time.Duration `json:"cpu"`        // process CPU (user+system) in the window
	PerWorker   []int64       `json:"per_worker"` // measured acquisitions of each worker
	// Each worker's waits, and the commands the window sent (nil: not
	// counted; SharedKinds are those no acquire owns, lock.Counter's) and
	// their wake-ups (strategy notify).
	WorkerWaits []results.WorkerWait `json:"worker_waits"`
	Commands    *results.Commands    `json:"commands,omitempty"`
	SharedKinds []string             `json:"shared_kinds,omitempty"`
	Wakeups     *results.Wakeups     `json:"wakeups,omitempty"`
	// AdapterCPU is the CPU in the window of the adapter process doing an
	// external client's work (AdapterPid; 0: none), -1 when not read.
	AdapterPid int           `json:"adapter_pid,omitempty"`
	AdapterCPU time.Duration `json:"adapter_cpu,omitempty"`
}

// Run drives the locker until the cell's time is up, its quota is met or
// ctx ends (an interrupt): then it stops, releases what it holds and
// returns what it has. A log that could not be written is returned as the
// error next to the stats.
func Run(ctx context.Context, lk lock.Locker, cfg RunConfig) (*Stats, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	names := newKeyNames(cfg.Keys) // before the start: a large keyspace's names take a while
	waitUntil(ctx, cfg.Start)
	l, err := newLoop(ctx, lk, &cfg, names)
	if err != nil {
		return nil, err
	}
	defer l.stop()
	if !time.Now().Before(l.measureFrom) {
		markMeasured(lk) // no warm-up: every acquire's late replies are the run's
	}
	win := &window{cfg: l.cfg, rec: l.rec, from: l.measureFrom}
	workers, stop := l.run(win)
	return l.stats(ctx.Err() != nil, workers, stop, win), l.rec.Err()
}

// waitUntil returns at t (at once when t is zero or past) or when ctx ends.
func waitUntil(ctx context.Context, t time.Time) {
	d := time.Until(t)
	if d <= 0 {
		return
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
	case <-ctx.Done():
	}
}

// newLoop sets a run up: its times, context, cycle, recorder, logs and,
// in open loop, its pacer.
func newLoop(ctx context.Context, lk lock.Locker, cfg *RunConfig, names keyNames) (*loop, error) {
	if cfg.Hold == nil {
		cfg.Hold = FixedHold{}
	}
	begin := cfg.Start
	if begin.IsZero() {
		begin = time.Now()
	}
	probe := cfg.Probe
	if probe == nil {
		probe = &Probe{}
	}
	l := &loop{lk: lk, cfg: cfg, cycle: cfg.Cycle, probe: probe, obs: cfg.Observer, measureFrom: begin.Add(cfg.Warmup),
		names: names}
	l.use.names = l.names.name
	l.end = l.measureFrom.Add(cfg.Duration)
	stopAt := l.end
	if cfg.Rate > 0 {
		// A start due just before the end may begin up to PacerLagLimit
		// after it (the generator's own lateness, not a backlog).
		stopAt = l.end.Add(PacerLagLimit)
		l.pace = newPacer(cfg.Rate, begin, l.measureFrom, l.end, cfg.Workers)
	}
	l.ctx, l.stop = context.WithDeadline(ctx, stopAt)
	l.opCtx = l.ctx
	if cfg.FinishCycles {
		l.opCtx = context.WithoutCancel(l.ctx)
	}
	if l.cycle == nil {
		l.cycle = holdCycle{lk: lk, cfg: cfg, probe: l.probe}
	}
	shards := cfg.Shards
	if shards <= 0 {
		shards = min(cfg.Workers, 16)
	}
	l.rec = results.NewRecorder(shards, l.measureFrom)
	l.hist = histograms{rec: l.rec}
	for m, w := range cfg.Logs {
		if err := l.rec.LogTo(m, w, l.measureFrom); err != nil {
			l.stop()
			return nil, fmt.Errorf("out: %w", err)
		}
	}
	return l, nil
}

// run starts the window's bookkeeping (one flush a second), the pacer and
// the workers, and returns the workers once they all stopped, with the
// window's end.
func (l *loop) run(win *window) ([]*Worker, time.Time) {
	if !time.Now().Before(win.from) {
		// No warm-up: the opening marks come before the first acquire.
		win.open(l.lk)
	}
	ticking := make(chan struct{})
	go func() {
		defer close(ticking)
		win.watch(l.ctx, l.lk)
	}()
	pacerDone := make(chan struct{})
	if l.pace != nil {
		// Open loop: free workers claim intended start times from the
		// pacer's schedule.
		go func() {
			defer close(pacerDone)
			l.pace.run(l.ctx)
		}()
	} else {
		close(pacerDone)
	}
	workers := l.runWorkers()
	l.stop()
	<-ticking
	<-pacerDone
	stop := time.Now()
	if !l.cfg.FinishCycles && stop.After(l.end) {
		stop = l.end
	}
	win.close(stop, l.lk)
	return workers, stop
}

// runWorkers runs the workers until they all stopped.
func (l *loop) runWorkers() []*Worker {
	n := serversOf(l.lk)
	workers := make([]*Worker, l.cfg.Workers)
	var wg sync.WaitGroup
	for i := range workers {
		w := &Worker{ID: i, Rand: rand.New(rand.NewPCG(l.cfg.Seed, uint64(i)+1)), ctx: l.ctx, loop: l,
			Counts: Counts{PerMaster: make([][lock.NumOutcomes]int64, n)}}
		workers[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			cancel := w.ownOpCtx(l.opCtx)
			defer cancel()
			l.work(w)
		}()
	}
	wg.Wait()
	return workers
}

// window takes the measured window's marks: CPU, memory and the servers'
// CPU when it opens and once the run has stopped, and one flush a second.
type window struct {
	cfg                  *RunConfig
	rec                  *results.Recorder
	from                 time.Time
	opened               bool
	cpuStart, cpuEnd     time.Duration
	adapter              adapterProcess // nil: the lock runs in this process
	adapterStart         time.Duration
	adapterEnd           time.Duration
	rssStart, rssEnd     int64
	serverStart, servEnd []time.Duration
	cmdStart, cmdEnd     lock.Commands
	counted              bool     // the locker counts its commands
	shared               []string // of which these kinds no acquire owns
	wokeStart, wokeEnd   *results.Wakeups
}

// markMeasured tells a locker that counts late replies that those from
// here on are the run's, not the warm-up's.
func markMeasured(lk lock.Locker) {
	if m, ok := lk.(interface{ MarkMeasured() }); ok {
		m.MarkMeasured()
	}
}

// open takes the opening marks.
func (win *window) open(lk lock.Locker) {
	markMeasured(lk)
	win.opened = true
	if win.cfg.OnWindow != nil {
		win.cfg.OnWindow(true)
	}
	win.cpuStart = ProcessCPU()
	if win.adapter, _ = lk.(adapterProcess); win.adapter != nil {
		win.adapterStart = win.adapter.CPU()
	}
	win.rssStart = residentBytes()
	win.cmdStart, win.shared, win.counted = commandsOf(lk)
	win.wokeStart = wakeupsOf(lk)
	if win.cfg.ServerCPU != nil {
		win.serverStart = win.cfg.ServerCPU()
	}
}

// watch waits for the window to open, takes the opening marks and flushes
// the recorder every second until ctx ends.
func (win *window) watch(ctx context.Context, lk lock.Locker) {
	if !win.opened {
		t := time.NewTimer(time.Until(win.from))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
		win.open(lk)
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			// Now, not the tick's stamp: after a SIGSTOP the stale tick
			// would close an interval that ended seconds ago.
			iv := win.rec.Flush(time.Now())
			if win.cfg.OnInterval != nil {
				win.cfg.OnInterval(iv)
			}
		case <-ctx.Done():
			return
		}
	}
}

// close takes the closing marks and flushes the last interval; call it
// after watch has returned.
func (win *window) close(stop time.Time, lk lock.Locker) {
	cfg := win.cfg
	win.cmdEnd, _, _ = commandsOf(lk)
	win.wokeEnd = wakeupsOf(lk)
	win.cpuEnd = ProcessCPU()
	if win.adapter != nil {
		win.adapterEnd = win.adapter.CPU()
	}
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
	win.fillAdapter(st)
	st.RSSStart, st.RSSEnd = win.rssStart, win.rssEnd
	if win.counted {
		c := win.cmdEnd.Sub(win.cmdStart)
		st.Commands, st.SharedKinds = &c, win.shared
	}
	if win.wokeStart != nil && win.wokeEnd != nil {
		st.Wakeups = &results.Wakeups{ByMessage: win.wokeEnd.ByMessage - win.wokeStart.ByMessage,
			ByTimeout: win.wokeEnd.ByTimeout - win.wokeStart.ByTimeout}
	}
	for i := range win.servEnd {
		d := time.Duration(-1)
		if i < len(win.serverStart) && win.serverStart[i] >= 0 && win.servEnd[i] >= 0 {
			d = win.servEnd[i] - win.serverStart[i]
		}
		st.ServerCPU = append(st.ServerCPU, d)
	}
}

// stats gathers what the workers, the recorder, the probe, the pacer and
// the window's marks saw.
func (l *loop) stats(interrupted bool, workers []*Worker, stop time.Time, win *window) *Stats {
	st := &Stats{
		Folded:             Folded{Counts: Counts{PerMaster: make([][lock.NumOutcomes]int64, serversOf(l.lk))}, WindowStart: l.measureFrom},
		Acquire:            l.rec.Total(results.Acquire),
		AcquireUncorrected: l.rec.Total(results.AcquireUncorrected),
		AcquireFailed:      l.rec.Total(results.Failed),
		Release:            l.rec.Total(results.Release),
		TimeToLock:         l.rec.Total(results.TimeToLock),
		GaveUpWait:         l.rec.Total(results.GaveUp),
		HandoffGap:         l.rec.Total(results.HandoffGap),
		MaxConcurrent:      l.probe.MaxConcurrent(),
		Interrupted:        interrupted,
		JudgedHolds:        l.probe.Judged(),
		HoldsNotJudged:     l.probe.NotJudged(),
		Rate:               l.cfg.Rate,
	}
	if l.pace == nil {
		st.AcquireUncorrected = nil
	} else {
		st.PacerLag = l.pace.lag.total()
		st.Offered = l.pace.offered(stop)
		st.UnservedLate = l.pace.lateAtEnd.Load()
	}
	win.fill(st, stop)
	for _, w := range workers {
		st.Counts.Add(&w.Counts)
		st.PerWorker = append(st.PerWorker, w.Counts.Acquired)
		st.WorkerWaits = append(st.WorkerWaits, w.waited())
	}
	// The probe's, which judged every hold: the workers counted only the
	// holds a use recorded.
	st.Violations = l.probe.Violations()
	st.HotKeys = l.use.hottest(5, st.Measured)
	if l.use.full.Load() {
		st.KeysFollowed = fmt.Sprintf("the first %d keys held", maxKeyUse)
	}
	st.Unserved = st.Offered - st.Started // 0 - 0 in closed loop
	if l.pace != nil && l.obs != nil {
		l.obs.Scheduled(st.Offered, st.Unserved)
	}
	return st
}

// adapterProcess is a lock whose library works in a process of its own
// (an external client's adapter): its CPU is the client's too.
type adapterProcess interface {
	Pid() int
	CPU() time.Duration // -1: not read
}

// fillAdapter puts the adapter's CPU in the window into the stats.
func (win *window) fillAdapter(st *Stats) {
	if win.adapter == nil {
		return
	}
	st.AdapterPid, st.AdapterCPU = win.adapter.Pid(), -1
	if win.adapterStart >= 0 && win.adapterEnd >= 0 {
		st.AdapterCPU = win.adapterEnd - win.adapterStart
	}
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
