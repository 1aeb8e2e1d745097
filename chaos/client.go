// Package chaos holds a cell's clients: each runs the worker loop
// (workloads.Run) on its own lock, or on the cell's lock service (a
// benchmark cell's one client), on goroutines of this process or as a
// `lockbench chaos __client` process of its own. A fault cell's client is
// also the loop's cycle: it reads the protected resource under the lock,
// holds, writes back and logs the hold for the checkers.
package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"lockbench/check"
	"lockbench/faults"
	"lockbench/lock"
	"lockbench/results"
	"lockbench/service"
	"lockbench/workloads"
)

// ClientConfig is everything one client of a cell needs; a client process
// gets it as JSON.
type ClientConfig struct {
	Index int `json:"index"`
	// Retry is the cell's retry policy (a fault cell's client waits its
	// delay after a failed acquire); TTL and DriftFactor its lock's terms
	// (the validity a hold is judged on).
	Retry       lock.RetryPolicy `json:"retry"`
	TTL         time.Duration    `json:"ttl"`
	DriftFactor float64          `json:"drift_factor"`
	// Load is the cell's worker loop as plan resolved it, this client's
	// share of it.
	Load   workloads.Spec `json:"load"`
	Prefix string         `json:"prefix"` // the cell's keys
	// Resource is the protected resource each hold reads and writes ("":
	// none, the plain hold of a benchmark cell), with the cycle's terms.
	Resource      string `json:"resource,omitempty"`
	Fencing       bool   `json:"fencing,omitempty"`
	CheckValidity bool   `json:"check_validity,omitempty"`
	Seed          uint64 `json:"seed"`
	LogDir        string `json:"log_dir"` // the client's .hlog files go here ("": into Local.Logs, if any)
	// FailureTimes: count failed acquires by when (ClientResult.Failures),
	// for a failover's unavailability window.
	FailureTimes bool `json:"failure_times,omitempty"`
	// Service is the registered lock service the cell locks on, and
	// ServiceConfig its client config as the server pool builds it for every client
	// of every cell (this client's addresses).
	Service       string          `json:"service,omitempty"`
	ServiceConfig json.RawMessage `json:"service_config,omitempty"`
	// GuardedWrite keeps the protected counter in the lock service,
	// written only while the lock is held (a GuardedStore's).
	GuardedWrite bool `json:"guarded_write,omitempty"`
}

// Local is what a client on this process's goroutines may take from the
// cell instead of its own: the cell's lock (a benchmark cell's service,
// with its baselines and readings), the cell's logs and its hooks on the
// loop (window readings, progress), the probe it shares with the other
// clients here and the live metrics. Zero: all its own.
type Local struct {
	Locker   lock.Locker
	Logs     map[int]io.Writer
	Hooks    func(rc *workloads.RunConfig)
	Probe    *workloads.Probe
	Observer Observer
}

// newLocker is the client's own lock: the service's Locker on the config
// the server pool built.
func newLocker(ctx context.Context, cfg ClientConfig) (lock.Locker, func(), error) {
	svc := service.Lookup(cfg.Service)
	if svc == nil {
		return nil, nil, fmt.Errorf("service %q is not registered in this program", cfg.Service)
	}
	lk, err := svc.NewClient(ctx, cfg.ServiceConfig)
	return lk, closer(lk, err), err
}

// closer is a locker's Close (nothing when it did not open).
func closer(lk interface{ Close() }, err error) func() {
	if err != nil {
		return func() {}
	}
	return lk.Close
}

// ClientResult is what one client counted.
type ClientResult struct {
	Index int `json:"index"`
	Pid   int `json:"pid"` // the process it ran in (goroutine clients share one)
	// Folded is the loop's, as it folded them: its counts (HoldOverruns
	// are writes skipped because the validity ran out, UseErrors the
	// resource's reads and writes that failed, both of the measured
	// window; a fault cell has no warm-up), its window, each worker's
	// acquisitions and time to lock (the cell's fairness), the commands
	// the client sent.
	workloads.Folded
	Late            [][lock.NumOutcomes]int64 `json:"late"`
	ProbeViolations int64                     `json:"probe_violations"`
	ProbeMax        int64                     `json:"probe_max"`
	Interrupted     bool                      `json:"interrupted"`
	Err             string                    `json:"error,omitempty"`
	LogFiles        map[string]string         `json:"log_files"` // metric → .hlog path
	// Failures are the failed acquires by FailureBin since t0 and by why
	// (results.AcquireFailure), with FailureTimes.
	Failures map[int64][3]int64 `json:"failures,omitempty"`
	// Losses are the sessions the lock service ended under this client,
	// as it learnt (etcd, ZooKeeper), for the lock-loss lag.
	Losses []results.SessionLoss `json:"losses,omitempty"`
	// Adapter is an external client's library, as its adapter said, and
	// what the adapter did (nil: lockbench's own client).
	Adapter *results.AdapterSettings `json:"adapter,omitempty"`
	// Stats are the loop's own, for the cell to add up (a client process
	// sends its logs instead: nil).
	Stats *workloads.Stats `json:"-"`
}

// sessionLosses is a locker that keeps its lost sessions.
type sessionLosses interface {
	Losses() []results.SessionLoss
}

// FailureBin is the width of ClientResult.Failures' bins.
const FailureBin = 10 * time.Millisecond

// client is one lock client: its own engine (connections), resource
// connection, workers and pause gate.
type client struct {
	cfg    ClientConfig
	rc     workloads.RunConfig // the loop cfg.Load describes
	local  Local
	lk     lock.Locker
	close  func()          // the locker's
	res    *check.Resource // nil: no resource (the plain hold)
	guard  GuardedStore    // guarded_write: the counter in the lock service (nil: in res)
	probe  *workloads.Probe
	gate   gate
	hold   workloads.HoldTime
	ctx    context.Context // ends the run early (interrupt)
	stop   context.CancelFunc
	obs    Observer       // live metrics; nil: none
	holds  *check.HoldLog // the hold log the checkers judge (set when the run starts)
	t0     time.Time      // the cell's start: writes are filed by second since it
	fails  *failureTimes  // with FailureTimes: failed acquires by when
	writes atomic.Int64   // the protected writes sent, for their ids

	// As a cellClient (client_mode goroutines):
	finished  chan struct{} // closed when run returned
	out       ClientResult  // run's result, once finished
	abandoned bool          // did not finish in time: its engine stays open
}

// Client is one lock client of a fault cell, whether it runs on goroutines
// in this process (client) or as a lockbench process of its own
// (procClient): the cell waits until it is ready, starts it at t0, pauses
// and resumes it (faults), stops it early (interrupt) and takes its result.
type Client interface {
	faults.Client
	WaitReady(ctx context.Context) error
	Start(t0 time.Time) error
	Stop()
	// Done is closed once it has finished.
	Done() <-chan struct{}
	// Result waits up to limit for it to finish and returns what it counted.
	Result(limit time.Duration) (ClientResult, error)
	// Pid is the process the cell started for it (0: none, it runs here).
	Pid() int
	// Close frees what it holds (a process is killed and reaped).
	Close()
}

// Observer sees a chaos client's records as they happen (live metrics),
// a use's findings among them.
type Observer interface {
	workloads.Observer
	SetWorkers(n int)
	// AddCounts: what a client process counted since its last report.
	AddCounts(d workloads.Counts)
}

// newClient connects, or takes the cell's lock (local.Locker).
func newClient(ctx context.Context, cfg ClientConfig, local Local) (*client, error) {
	rc, err := cfg.Load.RunConfig()
	if err != nil {
		return nil, err
	}
	c := &client{cfg: cfg, rc: rc, local: local, lk: local.Locker, close: func() {}, probe: local.Probe, hold: rc.Hold,
		obs: local.Observer, finished: make(chan struct{})}
	if c.probe == nil {
		c.probe = &workloads.Probe{}
	}
	if err := c.connect(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("client %d: %w", cfg.Index, err)
	}
	c.ctx, c.stop = context.WithCancel(context.Background())
	return c, nil
}

// connect opens the client's own lock (unless it has the cell's) and its
// resource, if the cell has one.
func (c *client) connect(ctx context.Context) (err error) {
	if c.lk == nil {
		if c.lk, c.close, err = newLocker(ctx, c.cfg); err != nil {
			c.close = func() {}
			return err
		}
	}
	if c.cfg.Resource == "" {
		return nil
	}
	if c.res, err = check.Open(c.cfg.Resource, c.cfg.Prefix); err != nil {
		return err
	}
	if c.cfg.GuardedWrite {
		g, ok := c.lk.(GuardedStore)
		if !ok {
			return fmt.Errorf("guarded_write: this lock service keeps no counter of its own (use the topology of a service that keeps data)")
		}
		c.guard = g
	}
	return nil
}

// close frees the client's connections, unless it was abandoned still
// running: closing an engine under running workers would panic them (the
// connections go with the masters).
func (c *client) Close() {
	if c.abandoned {
		return
	}
	c.close()
	if c.res != nil {
		c.res.Close()
	}
}

// start runs the client on its own goroutines from t0.
func (c *client) Start(t0 time.Time) error {
	go func() {
		defer close(c.finished)
		c.out = c.run(t0)
	}()
	return nil
}

func (c *client) Done() <-chan struct{}           { return c.finished }
func (c *client) WaitReady(context.Context) error { return nil } // connected by newClient
func (c *client) Pid() int                        { return 0 }

// result waits up to limit for the client to finish.
func (c *client) Result(limit time.Duration) (ClientResult, error) {
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-c.finished:
		return c.out, nil
	case <-t.C:
		c.abandoned = true
		return ClientResult{Index: c.cfg.Index}, fmt.Errorf("client %d did not finish within %v", c.cfg.Index, limit)
	}
}

// Stop ends the run early; workers finish the cycle they are in (a paused
// client is resumed so that it can).
func (c *client) Stop() {
	c.stop()
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

// run drives the workers from t0 for the cell's time (or quota) and
// returns what they counted. Interval logs go to the cell's (Local.Logs)
// or to files in LogDir.
func (c *client) run(t0 time.Time) ClientResult {
	cfg := c.cfg
	out := ClientResult{Index: cfg.Index, Pid: os.Getpid(), LogFiles: map[string]string{}}
	logs, files, err := c.logs(out.LogFiles)
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	if err != nil {
		out.Err = err.Error()
		return out
	}
	c.t0 = t0
	if c.res != nil {
		c.holds = check.NewHoldLog(c.res, cfg.Index)
	}
	if cfg.FailureTimes {
		c.fails = &failureTimes{t0: t0, bins: map[int64][3]int64{}}
	}
	st, err := workloads.Run(c.ctx, c.lk, c.runConfig(t0, logs))
	errs := []error{err, brokenErr(c.lk), c.closeHolds()}
	for _, f := range files {
		errs = append(errs, f.Sync())
	}
	if err := firstErr(errs...); err != nil {
		out.Err = err.Error()
	}
	if st != nil {
		c.fill(&out, st, t0)
	}
	return out
}

// fill puts the loop's stats and the lock's own findings into out.
func (c *client) fill(out *ClientResult, st *workloads.Stats, t0 time.Time) {
	out.Stats, out.Folded = st, st.Folded
	if ps, ok := c.lk.(lock.PerServer); ok {
		out.Late = ps.LateOutcomes()
	}
	if sl, ok := c.lk.(sessionLosses); ok {
		out.Losses = sl.Losses()
	}
	if a, ok := c.lk.(interface {
		AdapterSettings() *results.AdapterSettings
	}); ok {
		out.Adapter = a.AdapterSettings()
	}
	out.ProbeViolations = c.probe.Violations()
	out.ProbeMax = c.probe.MaxConcurrent()
	end := t0.Add(c.rc.Warmup + c.rc.Duration)
	out.Interrupted = st.Interrupted && st.WindowStart.Add(st.Measured).Before(end) && (c.rc.Quota == 0 || st.Acquired < c.rc.Quota)
	if c.fails != nil {
		out.Failures = c.fails.snapshot()
	}
}

func (c *client) closeHolds() error {
	if c.holds == nil {
		return nil
	}
	return c.holds.Close()
}

// runConfig is the client's run of the cell's loop from t0: with a
// resource, this client is the cycle (every hold read, written and
// logged, every cycle finished); without, the loop's plain hold.
func (c *client) runConfig(t0 time.Time, logs map[int]io.Writer) workloads.RunConfig {
	rc := c.rc
	rc.Keys.Prefix, rc.Seed, rc.Start, rc.Logs, rc.Probe = c.cfg.Prefix, c.cfg.Seed, t0, logs, c.probe
	if c.res != nil {
		rc.Keys.Prefix += "lock:" // the resource's counters live under the prefix
		rc.Cycle, rc.FinishCycles, rc.Shards = c, true, min(rc.Workers, 8)
	}
	if c.obs != nil {
		rc.Observer = c.obs
	}
	if c.fails != nil {
		rc.Reducers = append(rc.Reducers, c.fails)
	}
	if c.local.Hooks != nil {
		c.local.Hooks(&rc)
	}
	return rc
}

// brokenErr is why the lock broke mid-run, when it can break and did.
func brokenErr(lk lock.Locker) error {
	if b, ok := lk.(lock.Breaker); ok {
		return b.Err()
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// logs are the cell's logs given, or the client's own interval log of
// each metric; paths gets each own log's path by metric name.
func (c *client) logs(paths map[string]string) (map[int]io.Writer, []*os.File, error) {
	if c.cfg.LogDir == "" { // the cell's own logs, or none (no results directory)
		return c.local.Logs, nil, nil
	}
	var files []*os.File
	logs := map[int]io.Writer{}
	for _, m := range results.LogMetrics(false) {
		name := results.MetricName(m)
		path := filepath.Join(c.cfg.LogDir, fmt.Sprintf("client-%d.%s.hlog", c.cfg.Index, name))
		f, err := os.Create(path)
		if err != nil {
			return nil, files, err
		}
		files = append(files, f)
		logs[m], paths[name] = f, path
	}
	return logs, files, nil
}

// Ready holds a worker before its acquire while the client is paused.
func (c *client) Ready() { c.gate.wait() }

// Lost waits the retry delay after a failed acquire (cut short when the
// run ends).
func (c *client) Lost(w *workloads.Worker) {
	lock.RetryPolicy{Min: c.cfg.Retry.Min, Max: c.cfg.Retry.Max, Rand: w.Rand}.Wait(w.Context())
}

// Use is one protected read-modify-write under the lock the worker won,
// logged for the checkers and recorded.
func (c *client) Use(w *workloads.Worker, h workloads.Held) {
	// The checkers judge the hold on the window the client measured itself:
	// a Redlock's TTL − drift; a keep-alive lock (etcd's session) has no
	// such validity, so its window runs from the acquire to the end of its
	// use (the lease may end under it: that is what is judged); a Redis
	// lock renewed by its watchdog, to its validity as last renewed.
	ttl, factor := int64(c.cfg.TTL), c.cfg.DriftFactor
	if h.Lock.Lost != nil {
		ttl, factor = int64(h.Lock.ValidUntil.Sub(h.Start)), 0
	}
	hold := check.Hold{Key: h.Key, T1: h.Start.UnixNano(), Elapsed: int64(h.Acquired.Sub(h.Start)), TTL: ttl,
		DriftFactor: factor, Worker: w.ID}
	ph := c.probe.Enter(h.Key, h.Start.Add(time.Duration(hold.ValidEnd()-hold.T1)))
	var found finding
	err := c.readModifyWrite(w, h, &hold, &found)
	used := time.Now()
	c.probe.Exit(ph)
	hold.Used = used.UnixNano()
	if h.Lock.Until != nil { // renewed in the background: its promise as last renewed
		hold.TTL, hold.DriftFactor = int64(h.Lock.Until().Sub(h.Start)), 0
	}
	c.holds.Add(hold)
	r := w.Record(workloads.OpUse)
	r.Key, r.Measured, r.Start, r.End = h.Key, h.Measured, h.Acquired, used
	r.Judged, r.Clear, r.UseFailed = ph.Judged, ph.Clear, err != nil
	r.Overran, r.Lost, r.Rejected = hold.Outcome == check.Skipped, found.lost, found.rejected
	w.Fold(r)
}

// finding is what the resource said of a use's write: the entries of the
// history it cut (a live figure: acknowledged or not, the final read
// judges them), and whether it refused a fenced one.
type finding struct {
	lost     int64
	rejected bool
}

// readModifyWrite takes a fencing token (with fencing), reads the key's
// counter, keeps the lock for the hold time and writes the counter + 1;
// hold gets the critical section as the resource saw it.
func (c *client) readModifyWrite(w *workloads.Worker, h workloads.Held, hold *check.Hold, found *finding) error {
	ctx := context.Background() // per-command timeouts bound everything; a stop lets the cycle finish
	if c.guard != nil {
		return c.guardedRMW(ctx, w, h, hold, found)
	}
	var token int64
	switch {
	case c.cfg.Fencing && h.Lock.Fence > 0: // the service's own (etcd: the lock's revision)
		token = h.Lock.Fence
		if _, err := c.res.Token(ctx); err != nil { // counted with the resource's (fencing_tokens), its value unused
			return err
		}
	case c.cfg.Fencing:
		var err error
		if token, err = c.res.Token(ctx); err != nil {
			return err
		}
	}
	c.gate.wait()
	hold.Begin = time.Now().UnixNano()
	n, last, ok, err := c.res.Read(ctx, h.Key, token)
	if !ok {
		return err // no section: nothing read, nothing written
	}
	hold.Read, hold.ReadLast = n, last
	time.Sleep(c.holdTime(w))
	// A careful client trusts its lock library's ValidUntil, as a real
	// one would; only the checkers do not.
	if c.cfg.CheckValidity && (!time.Now().Before(h.Lock.ValidUntil) || isLost(h.Lock)) {
		hold.Outcome, hold.End = check.Skipped, time.Now().UnixNano()
		return nil
	}
	// The pause hook lands here: after any check, before the write, as in
	// the GC-pause story.
	c.gate.wait()
	hold.ID = c.writeID()
	applied, err := c.write(ctx, h.Key, hold.ID, n, token, found)
	hold.Outcome, hold.End = check.Written, time.Now().UnixNano()
	switch {
	case err != nil: // it may have landed, at any time from now on
		hold.Outcome, hold.End = check.Unknown, check.OpenEnd
	case !applied:
		hold.Outcome = check.Refused
	}
	return err
}

// isLost says the service ended the lock under its holder (etcd: the
// session's lease), as far as the client has learnt.
func isLost(l *lock.Lock) bool {
	select {
	case <-l.Lost: // a nil channel (a lock without sessions) never is
		return true
	default:
		return false
	}
}

// write puts id after the n entries of key idx's history its writer
// read; applied is false when a fenced write was refused.
func (c *client) write(ctx context.Context, idx uint64, id string, n, token int64, found *finding) (applied bool, err error) {
	applied, found.lost, err = c.res.Write(ctx, idx, id, n, token)
	found.rejected = err == nil && !applied
	return applied, err
}

// holdTime is how long worker w keeps the lock this time: the first
// worker's long hold when the cell has one (a fault then meets a holder
// inside its section), else the cell's hold.
func (c *client) holdTime(w *workloads.Worker) time.Duration {
	if lh := c.cfg.Load.LongHold; lh > 0 && w.ID == 0 {
		return lh
	}
	return c.hold.Next(w.Rand)
}

// writeID is a write id unique in the cell: the client's index and its
// writes so far.
func (c *client) writeID() string {
	return strconv.Itoa(c.cfg.Index) + "." + strconv.FormatInt(c.writes.Add(1), 10)
}

// NewClient connects a client that runs on goroutines of this process,
// with what it takes from the cell (local).
func NewClient(ctx context.Context, cfg ClientConfig, local Local) (Client, error) {
	return newClient(ctx, cfg, local)
}
