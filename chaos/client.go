package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"lockbench/engine"
	"lockbench/results"
	"lockbench/workloads"
)

// ClientConfig is everything one client needs; a client process gets it
// as JSON.
type ClientConfig struct {
	Index         int           `json:"index"`
	Engine        engine.Config `json:"engine"` // Masters: this client's addresses (its proxies, or the masters)
	Resource      string        `json:"resource"`
	Prefix        string        `json:"prefix"`
	Keys          uint64        `json:"keys"`
	Workers       int           `json:"workers"`
	Hold          time.Duration `json:"hold"`
	HoldDist      string        `json:"hold_distribution"`
	RetryMin      time.Duration `json:"retry_min"`
	RetryMax      time.Duration `json:"retry_max"`
	Fencing       bool          `json:"fencing"`
	CheckValidity bool          `json:"check_validity"`
	Duration      time.Duration `json:"duration"`
	Quota         int64         `json:"quota"` // stop after this many acquisitions; 0 = none
	Seed          uint64        `json:"seed"`
	LogDir        string        `json:"log_dir"` // the client's .hlog files go here
}

// ClientResult is what one client counted.
type ClientResult struct {
	Index           int                         `json:"index"`
	Attempts        int64                       `json:"attempts"`
	Acquired        int64                       `json:"acquired"`
	NotAcquired     int64                       `json:"not_acquired"`
	Errors          int64                       `json:"errors"`
	Overruns        int64                       `json:"overruns"` // writes skipped: validity ran out (check_validity)
	ResourceErrors  int64                       `json:"resource_errors"`
	PerMaster       [][engine.NumOutcomes]int64 `json:"per_master"`
	Late            [][engine.NumOutcomes]int64 `json:"late"`
	ProbeViolations int64                       `json:"probe_violations"`
	ProbeMax        int64                       `json:"probe_max"`
	CPUSeconds      float64                     `json:"cpu_seconds"`
	Start           time.Time                   `json:"start"`
	End             time.Time                   `json:"end"`
	Interrupted     bool                        `json:"interrupted"`
	Err             string                      `json:"error,omitempty"`
	LogFiles        map[string]string           `json:"log_files"` // metric → .hlog path
}

// logMetrics are the interval logs a client writes (closed loop).
var logMetrics = map[int]string{results.Acquire: results.MetricAcquire, results.Failed: results.MetricFailed, results.Release: results.MetricRelease}

// client is one lock client: its own engine (connections), resource
// connection, workers and pause gate.
type client struct {
	cfg   ClientConfig
	eng   *engine.Engine
	res   *resource
	probe *windowProbe
	gate  gate
	hold  workloads.HoldTime
	stop  chan struct{} // closed to end the run early (interrupt)
	once  sync.Once
	obs   Observer  // live metrics (in-process clients only); nil: none
	t0    time.Time // the cell's start: writes are filed by second since it
}

// Observer sees a chaos client's events as they happen (live metrics):
// the runner's events plus the protected resource's.
type Observer interface {
	workloads.Observer
	SetWorkers(n int)
	// LostUpdates: a write found n acknowledged writes made since its read
	// (an overlapping holder's), which it now overwrites.
	LostUpdates(n int64)
	StaleWriteRejected()
	// AddCounts: what a client process counted since its last report.
	AddCounts(d Counts)
}

// newClient connects; probe may be shared by the clients of one process.
func newClient(ctx context.Context, cfg ClientConfig, probe *windowProbe) (*client, error) {
	eng, err := engine.New(ctx, cfg.Engine)
	if err != nil {
		return nil, fmt.Errorf("client %d: %w", cfg.Index, err)
	}
	res, err := newResource(cfg.Resource, cfg.Prefix)
	if err != nil {
		eng.Close()
		return nil, fmt.Errorf("client %d: %w", cfg.Index, err)
	}
	if probe == nil {
		probe = &windowProbe{}
	}
	hold, err := workloads.NewHoldTime(cfg.HoldDist, cfg.Hold)
	if err != nil {
		eng.Close()
		res.close()
		return nil, err
	}
	return &client{cfg: cfg, eng: eng, res: res, probe: probe, hold: hold, stop: make(chan struct{})}, nil
}

func (c *client) close() {
	c.eng.Close()
	c.res.close()
}

// Stop ends the run early; workers finish the cycle they are in (a paused
// client is resumed so that it can).
func (c *client) Stop() {
	c.once.Do(func() { close(c.stop) })
	c.gate.open()
}

// Pause is the pause hook: every worker stops at its next step (before an
// acquire, before the read, before the write) until Resume, like a
// stop-the-world GC pause. A worker that already checked its lock then
// writes late.
func (c *client) Pause() error  { c.gate.close(); return nil }
func (c *client) Resume() error { c.gate.open(); return nil }

// gate blocks workers while closed.
type gate struct {
	mu sync.Mutex
	ch chan struct{} // non-nil while closed; closed on open
}

func (g *gate) close() {
	g.mu.Lock()
	if g.ch == nil {
		g.ch = make(chan struct{})
	}
	g.mu.Unlock()
}

func (g *gate) open() {
	g.mu.Lock()
	if g.ch != nil {
		close(g.ch)
		g.ch = nil
	}
	g.mu.Unlock()
}

func (g *gate) wait() {
	g.mu.Lock()
	ch := g.ch
	g.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

type workerCounts struct {
	attempts, acquired, notAcquired, errors, overruns, resErrors int64
	perMaster                                                    [][engine.NumOutcomes]int64
}

// run drives the workers from t0 for the configured duration (or quota)
// and returns the counts. Interval logs go to files in LogDir.
func (c *client) run(t0 time.Time) ClientResult {
	cfg := c.cfg
	n := len(cfg.Engine.Masters)
	out := ClientResult{Index: cfg.Index, LogFiles: map[string]string{}}
	end := t0.Add(cfg.Duration)
	rec := results.NewRecorder(min(cfg.Workers, 8), t0)
	files, err := c.openLogs(rec, t0, out.LogFiles)
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	if err != nil {
		out.Err = err.Error()
		return out
	}
	holds := newHoldLog(c.res, cfg.Index)

	if d := time.Until(t0); d > 0 {
		select {
		case <-time.After(d):
		case <-c.stop:
		}
	}
	cpu0 := workloads.ProcessCPU()
	out.Start = time.Now()
	c.t0 = t0

	stopFlush := flushEverySecond(rec)
	var acquired atomic.Int64
	counts := c.runWorkers(end, rec, holds, &acquired)
	out.End = time.Now()
	stopFlush()
	rec.Flush(out.End)
	if err := rec.Err(); err != nil {
		out.Err = err.Error()
	}
	if err := holds.close(); err != nil && out.Err == "" {
		out.Err = err.Error()
	}
	for _, f := range files {
		if err := f.Sync(); err != nil && out.Err == "" {
			out.Err = err.Error()
		}
	}
	out.CPUSeconds = (workloads.ProcessCPU() - cpu0).Seconds()
	addCounts(&out, counts, n)
	out.Late = c.eng.LateOutcomes()
	out.ProbeViolations = c.probe.violations.Load()
	out.ProbeMax = c.probe.maxConcurrent.Load()
	select {
	case <-c.stop:
		out.Interrupted = out.End.Before(end) && (cfg.Quota == 0 || acquired.Load() < cfg.Quota)
	default:
	}
	return out
}

// openLogs creates the client's interval log of each metric and streams
// the recorder into it; paths gets each log's path by metric name.
func (c *client) openLogs(rec *results.Recorder, t0 time.Time, paths map[string]string) ([]*os.File, error) {
	var files []*os.File
	for m, name := range logMetrics {
		path := filepath.Join(c.cfg.LogDir, fmt.Sprintf("client-%d.%s.hlog", c.cfg.Index, name))
		f, err := os.Create(path)
		if err != nil {
			return files, err
		}
		files = append(files, f)
		if err := rec.LogTo(m, f, t0); err != nil {
			return files, err
		}
		paths[name] = path
	}
	return files, nil
}

// flushEverySecond flushes rec once a second from now, so every client's
// intervals line up; the returned func stops it.
func flushEverySecond(rec *results.Recorder) (stop func()) {
	flushDone := make(chan struct{})
	flushStop := make(chan struct{})
	go func() {
		defer close(flushDone)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				// Now, not the tick's stamp: after a SIGSTOP the stale tick
				// would close an interval that ended seconds ago.
				rec.Flush(time.Now())
			case <-flushStop:
				return
			}
		}
	}()
	return func() {
		close(flushStop)
		<-flushDone
	}
}

// runWorkers runs the client's workers until the end, a stop or the quota,
// and returns each worker's counts.
func (c *client) runWorkers(end time.Time, rec *results.Recorder, holds *holdLog, acquired *atomic.Int64) []*workerCounts {
	cfg := c.cfg
	stopped := func() bool {
		select {
		case <-c.stop:
			return true
		default:
		}
		if !time.Now().Before(end) {
			return true
		}
		return cfg.Quota > 0 && acquired.Load() >= cfg.Quota
	}
	counts := make([]*workerCounts, cfg.Workers)
	var wg sync.WaitGroup
	for w := range counts {
		wc := &workerCounts{perMaster: make([][engine.NumOutcomes]int64, len(cfg.Engine.Masters))}
		counts[w] = wc
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(cfg.Seed, uint64(cfg.Index)<<32|uint64(w)))
			for !stopped() {
				c.gate.wait()
				if stopped() {
					return
				}
				c.cycle(w, rng, rec, wc, holds, acquired)
			}
		}()
	}
	wg.Wait()
	return counts
}

// addCounts adds the workers' counts into the client's result.
func addCounts(out *ClientResult, counts []*workerCounts, masters int) {
	out.PerMaster = make([][engine.NumOutcomes]int64, masters)
	for _, wc := range counts {
		out.Attempts += wc.attempts
		out.Acquired += wc.acquired
		out.NotAcquired += wc.notAcquired
		out.Errors += wc.errors
		out.Overruns += wc.overruns
		out.ResourceErrors += wc.resErrors
		for m := range wc.perMaster {
			for o := range wc.perMaster[m] {
				out.PerMaster[m][o] += wc.perMaster[m][o]
			}
		}
	}
}

// cycle is one attempt and, when it wins, one protected read-modify-write.
func (c *client) cycle(w int, rng *rand.Rand, rec *results.Recorder, wc *workerCounts, holds *holdLog, acquired *atomic.Int64) {
	cfg := c.cfg
	ctx := context.Background() // per-command timeouts bound everything; a stop lets the cycle finish
	idx := rng.Uint64N(cfg.Keys)
	key := cfg.Prefix + "lock:" + strconv.FormatUint(idx, 10)
	t0 := time.Now()
	if c.obs != nil {
		c.obs.AcquireStarted()
	}
	lock, res := c.eng.Acquire(ctx, key)
	got := time.Now()
	if c.obs != nil {
		c.obs.AcquireEnded()
	}
	wc.attempts++
	if lock == nil {
		rec.Record(w, results.Failed, got.Sub(t0))
		countFailure(wc, res)
		if c.obs != nil {
			c.obs.Failed(got.Sub(t0), res.PerMaster, workloads.IsContention(res))
		}
		delay := cfg.RetryMin
		if span := cfg.RetryMax - cfg.RetryMin; span > 0 {
			delay += time.Duration(rng.Int64N(int64(span) + 1))
		}
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-c.stop:
			}
		}
		return
	}
	wc.acquired++
	acquired.Add(1)
	rec.Record(w, results.Acquire, got.Sub(t0))
	for m, o := range res.PerMaster {
		wc.perMaster[m][o]++
	}
	// The checkers judge the hold on the window the client measured itself.
	hold := Hold{Key: idx, T1: t0.UnixNano(), Elapsed: int64(got.Sub(t0)), TTL: int64(cfg.Engine.TTL), Drift: cfg.Engine.DriftFactor}
	validEnd := t0.Add(time.Duration(hold.ValidEnd() - hold.T1))
	hid := c.probe.enter(idx, validEnd)

	var token int64
	var err error
	ok := true
	if cfg.Fencing {
		token, err = c.res.token(ctx)
		ok = err == nil
	}
	var v int64
	if ok {
		c.gate.wait()
		v, ok, err = c.res.read(ctx, idx, token)
	}
	if ok {
		time.Sleep(c.hold.Next(rng))
		// A careful client trusts its lock library's ValidUntil, as a real
		// one would; only the checkers do not.
		if cfg.CheckValidity && !time.Now().Before(lock.ValidUntil) {
			wc.overruns++
		} else {
			// The pause hook lands here: after any check, before the write,
			// as in the GC-pause story.
			c.gate.wait()
			err = c.write(ctx, idx, v+1, token)
		}
	}
	if err != nil {
		wc.resErrors++
	}
	used := time.Now()
	c.probe.exit(idx, hid)
	hold.Used = used.UnixNano()
	holds.add(hold)
	rel := c.eng.Release(ctx, lock)
	rec.Record(w, results.Release, rel.Elapsed)
	if c.obs != nil {
		c.obs.Cycle(got.Sub(t0), -1, rel.Elapsed, res.PerMaster)
	}
}

// write stores v on the resource, filed under the second of the cell it
// lands in, and tells the observer what the resource said.
func (c *client) write(ctx context.Context, idx uint64, v, token int64) error {
	slot := int64(time.Since(c.t0) / time.Second)
	applied, lost, err := c.res.write(ctx, idx, v, token, slot)
	if c.obs == nil || err != nil {
		return err
	}
	if !applied {
		c.obs.StaleWriteRejected()
	}
	c.obs.LostUpdates(lost)
	return nil
}

// countFailure files a failed acquire by its per-master outcomes.
func countFailure(wc *workerCounts, res engine.Result) {
	for m, o := range res.PerMaster {
		wc.perMaster[m][o]++
	}
	if workloads.IsContention(res) {
		wc.notAcquired++
	} else {
		wc.errors++
	}
}
