package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"lockbench/engine"
	"lockbench/faults"
	"lockbench/localmasters"
	"lockbench/results"
	"lockbench/workloads"
)

// Options say how RunCell starts what it needs.
type Options struct {
	// ClientCommand starts a client process: an argv that runs ClientMain
	// with --config/--result appended. Needed for client_mode processes.
	ClientCommand []string
	ClientEnv     []string
	Log           io.Writer // progress lines (nil: none)
	RunID         string    // names the keys; "" = random
	TempDir       string    // where the cell's temp dir goes ("" = the system's)
	Scenario      string    // the scenario's name, for the result's config
	// Observer, when set, gives a cell its live-metrics observer (masters:
	// their addresses). Client processes report their counts once a
	// second (AddCounts), without latencies.
	Observer func(c Cell, masters []string) Observer
}

// CellResult is a finished (or interrupted) cell.
type CellResult struct {
	Run results.Run
	// Intervals are the merged per-second latency histograms by metric
	// (results.MetricAcquire, MetricFailed, MetricRelease).
	Intervals map[string][]*hdrhistogram.Histogram
	Check     Check
	Clients   []ClientResult // per client, in order
	// Failed lists the expectations the cell did not meet.
	Failed []string
	// NotJudged lists why the cell showed nothing, whatever its figures
	// say (a fault that did not happen, too few acquisitions, ...).
	NotJudged []string
	// Verdict is met, not met, not judged, unchecked (no expectations) or
	// interrupted.
	Verdict string
	// Pids and Addrs are every process and listener the cell started, for
	// callers that verify the cleanup.
	Pids  []int
	Addrs []string
}

// Value is the measured figure an expectation names.
func (r *CellResult) Value(metric string) float64 {
	s := r.Run.Safety
	switch metric {
	case "violations":
		return float64(s.Violations)
	case "lost_updates":
		return float64(s.LostUpdates)
	case "stale_writes_rejected":
		return float64(s.StaleWritesRejected)
	case "acquisitions":
		return float64(r.Run.Outcomes.Acquired)
	case "availability_attempts":
		return s.AvailabilityOps
	case "availability_time":
		return s.AvailabilityTime
	case "max_concurrent_holders":
		return float64(s.MaxConcurrentHolder)
	case "probe_violations":
		if c := r.Run.Config; c != nil && c.ChaosConfig != nil {
			return float64(c.Checks.ProbeViolations)
		}
	}
	return math.NaN()
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}

// RunCell starts the cell's masters, protected resource, proxies and
// clients, applies its faults on schedule, checks the resource and returns
// the result. Everything it started is stopped and its temp dir removed
// before it returns, also when ctx is cancelled (then the result is
// partial and marked interrupted).
func RunCell(ctx context.Context, cell Cell, opt Options) (*CellResult, error) {
	r, err := newCellRun(cell, opt)
	if err != nil {
		return nil, err
	}
	defer r.cleanup()
	startCtx, cancelStart := context.WithTimeout(ctx, 30*time.Second)
	defer cancelStart()
	if err := r.startServers(startCtx); err != nil {
		return nil, err
	}
	if r.obs = r.observer(); r.obs != nil {
		defer r.obs.SetWorkers(0)
	}
	if err := r.startClients(startCtx); err != nil {
		return nil, err
	}
	r.logStarted()
	sched, err := faults.NewScheduler(ctx, cell.Faults, r.targets)
	if err != nil {
		return nil, err
	}
	stopScheduler := sync.OnceFunc(sched.Stop)
	r.cleanups = append(r.cleanups, stopScheduler)

	// Go. Faults due at 0 are in place before the first acquire.
	t0 := time.Now().Add(100 * time.Millisecond)
	sched.Start(t0, cell.Faults)
	run, err := r.runClients(ctx, t0, stopScheduler)
	if err != nil {
		return nil, err
	}
	return r.collect(t0, run, sched)
}

// cellRun is one chaos cell on its way through RunCell's steps: start the
// masters and the resource, start the clients, run the schedule, collect,
// check.
type cellRun struct {
	cell   Cell
	s      Settings
	opt    Options
	prefix string // the cell's keys
	tmp    string // the cell's temp dir
	res    *CellResult

	cleanups []func() // run in reverse order when the cell ends
	stopMu   sync.Mutex
	stopErrs []error

	masters []*localmasters.Master
	addrs   []string
	rset    *localmasters.Set // the protected resource's server
	raddr   string
	network *faults.Network // nil when no fault needs proxies
	targets faults.Targets
	probe   *windowProbe // shared by in-process clients
	obs     Observer
	// newClient starts a client of the cell's client_mode.
	newClient func(ctx context.Context, cfg ClientConfig) (cellClient, error)
	clients   []cellClient
}

// clientsRun is what the clients' run left: their results, the errors they
// reported and whether the cell was interrupted.
type clientsRun struct {
	results     []ClientResult
	errs        []string
	interrupted bool
}

// newCellRun checks the cell can run here and makes its temp dir.
func newCellRun(cell Cell, opt Options) (*cellRun, error) {
	s := cell.Settings
	if err := cell.Validate(); err != nil {
		return nil, err
	}
	if s.ClientMode == "processes" && len(opt.ClientCommand) == 0 {
		return nil, errors.New("client_mode: processes needs a client command (lockbench starts itself)")
	}
	if len(cell.ClockMasters()) > 0 {
		if err := faults.FaketimeAvailable(); err != nil {
			return nil, fmt.Errorf("clock_jump: %w", err)
		}
	}
	runID := opt.RunID
	if runID == "" {
		runID = strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	}
	tmp, err := os.MkdirTemp(opt.TempDir, "lockbench-chaos-*")
	if err != nil {
		return nil, err
	}
	r := &cellRun{cell: cell, s: s, opt: opt, prefix: fmt.Sprintf("chaos:%s:%d:", runID, cell.Index), tmp: tmp,
		res: &CellResult{}, probe: &windowProbe{}}
	r.newClient = r.goroutineClient
	if s.ClientMode == "processes" {
		r.newClient = r.processClient
	}
	return r, nil
}

// stopped keeps a cleanup's error for the log.
func (r *cellRun) stopped(err error) {
	if err != nil {
		r.stopMu.Lock()
		r.stopErrs = append(r.stopErrs, err)
		r.stopMu.Unlock()
	}
}

// cleanup stops everything the cell started, in reverse order, and removes
// its temp dir.
func (r *cellRun) cleanup() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	r.stopped(os.RemoveAll(r.tmp))
	// The result stands; a server that would not stop is still news.
	for _, e := range r.stopErrs {
		logf(r.opt.Log, "chaos: cell %s: cleanup: %v", r.cell.Name, e)
	}
}

// startServers starts the lock masters (one set each, so one of them can
// run on a fake clock), the protected resource's server and, when a fault
// needs them, the proxies.
func (r *cellRun) startServers(ctx context.Context) error {
	clockMasters := r.cell.ClockMasters()
	persist, _ := localmasters.ParsePersistence(r.s.Persistence)
	r.masters = make([]*localmasters.Master, r.s.Local)
	r.addrs = make([]string, r.s.Local)
	r.targets.Clocks = map[int]*faults.Clock{}
	for i := range r.masters {
		var env []string
		if clockMasters[i] {
			c, err := faults.NewClock(r.tmp)
			if err != nil {
				return err
			}
			if env, err = c.Env(); err != nil {
				return err
			}
			r.targets.Clocks[i] = c
		}
		set, err := localmasters.Start(ctx, localmasters.Options{N: 1, Persistence: persist, Embedded: "never", Env: env})
		if err != nil {
			return fmt.Errorf("master %d: %w", i, err)
		}
		r.cleanups = append(r.cleanups, func() { r.stopped(set.Stop()) })
		r.masters[i], r.addrs[i] = set.Masters()[0], set.Addrs()[0]
		r.targets.Masters = append(r.targets.Masters, r.masters[i])
	}
	rset, err := localmasters.Start(ctx, localmasters.Options{N: 1, Persistence: localmasters.PersistNone, Embedded: "never"})
	if err != nil {
		return fmt.Errorf("resource server: %w", err)
	}
	r.cleanups = append(r.cleanups, func() { r.stopped(rset.Stop()) })
	r.rset, r.raddr = rset, rset.Addrs()[0]
	r.res.Addrs = append(append(r.res.Addrs, r.addrs...), r.raddr)
	if !r.cell.NeedsNetwork() {
		return nil
	}
	if r.network, err = faults.NewNetwork(r.addrs, r.s.Clients); err != nil {
		return err
	}
	r.cleanups = append(r.cleanups, r.network.Close)
	r.targets.Net = r.network
	for c := range r.s.Clients {
		r.res.Addrs = append(r.res.Addrs, r.network.Addrs(c)...)
	}
	return nil
}

// observer is the cell's live-metrics observer, nil without one.
func (r *cellRun) observer() Observer {
	if r.opt.Observer == nil {
		return nil
	}
	obs := r.opt.Observer(r.cell, r.addrs)
	obs.SetWorkers(r.s.Workers * r.s.Clients)
	r.probe.onViolation = obs.Violation
	return obs
}

// clientConfigs is each client's share of the cell: its masters (through
// its proxies when there are any), keys, quota and seed.
func (r *cellRun) clientConfigs() []ClientConfig {
	s := r.s
	cfgs := make([]ClientConfig, s.Clients)
	for c := range cfgs {
		ec := s.EngineConfig()
		ec.Masters = r.addrs
		if r.network != nil {
			ec.Masters = r.network.Addrs(c)
		}
		var quota int64
		if s.Acquisitions > 0 {
			quota = (s.Acquisitions + int64(s.Clients) - 1) / int64(s.Clients)
		}
		cfgs[c] = ClientConfig{Index: c, Engine: ec, Resource: r.raddr, Prefix: r.prefix, Keys: s.Keys, Workers: s.Workers,
			Hold: time.Duration(s.Hold), HoldDist: s.HoldDist, RetryMin: time.Duration(s.RetryMin), RetryMax: time.Duration(s.RetryMax),
			Fencing: s.Fencing, CheckValidity: s.CheckValidity, Duration: time.Duration(s.Duration), Quota: quota,
			Seed: s.Seed + uint64(c)*7919, LogDir: r.tmp}
		if cfgs[c].Seed == 0 {
			cfgs[c].Seed = uint64(time.Now().UnixNano()) + uint64(c)
		}
	}
	return cfgs
}

// startClients starts the clients and waits until each is ready to begin
// at the start time.
func (r *cellRun) startClients(ctx context.Context) error {
	r.cleanups = append(r.cleanups, func() {
		for _, c := range r.clients {
			c.close()
		}
	})
	for _, cfg := range r.clientConfigs() {
		c, err := r.newClient(ctx, cfg)
		if err != nil {
			return err
		}
		r.clients = append(r.clients, c)
		r.targets.Clients = append(r.targets.Clients, c)
		if pid := c.pid(); pid != 0 {
			r.res.Pids = append(r.res.Pids, pid)
		}
	}
	for _, c := range r.clients {
		if err := c.waitReady(ctx); err != nil {
			return err
		}
	}
	return nil
}

// logStarted records the servers' pids and says what runs where.
func (r *cellRun) logStarted() {
	masterPids := make([]int, len(r.masters))
	for i, m := range r.masters {
		masterPids[i] = m.Pid()
	}
	rpid := r.rset.Masters()[0].Pid()
	r.res.Pids = append(append(r.res.Pids, masterPids...), rpid)
	logf(r.opt.Log, "chaos: cell %s: masters %s (pids %s), resource %s (pid %d), %d %s clients%s",
		r.cell.Name, strings.Join(r.addrs, " "), pidList(masterPids), r.raddr, rpid, r.s.Clients, r.s.ClientMode, clientPids(r.clients))
}

// runClients starts the clients at t0 and waits for them to finish, for
// the cell's end or for an interrupt; then it gathers their results.
func (r *cellRun) runClients(ctx context.Context, t0 time.Time, stopScheduler func()) (clientsRun, error) {
	run := clientsRun{results: make([]ClientResult, r.s.Clients)}
	allDone, err := r.startAt(t0)
	if err != nil {
		return run, err
	}
	stopClients := func() {
		for _, c := range r.clients {
			c.Stop()
		}
	}
	endTimer := time.NewTimer(time.Until(t0.Add(time.Duration(r.s.Duration))))
	defer endTimer.Stop()
	select {
	case <-allDone:
		stopScheduler()
	case <-endTimer.C:
		// Paused clients are resumed and partitions healed so that every
		// client can finish its last cycle and report.
		stopScheduler()
	case <-ctx.Done():
		run.interrupted = true
		stopScheduler()
		stopClients()
	}
	limit := 30*time.Second + time.Duration(r.s.Hold)
	select {
	case <-allDone:
	case <-ctx.Done():
		run.interrupted = true
		stopClients()
	case <-time.After(limit):
	}
	return run, r.gather(&run, limit)
}

// startAt lets every client begin at t0; the channel closes when all have
// finished.
func (r *cellRun) startAt(t0 time.Time) (<-chan struct{}, error) {
	for i, c := range r.clients {
		if err := c.start(t0); err != nil {
			return nil, fmt.Errorf("client %d: %w", i, err)
		}
	}
	allDone := make(chan struct{})
	go func() {
		for _, c := range r.clients {
			<-c.done()
		}
		close(allDone)
	}()
	return allDone, nil
}

// gather takes the clients' results, collecting their errors; a client
// error fails a cell that was not interrupted.
func (r *cellRun) gather(run *clientsRun, limit time.Duration) error {
	for i, c := range r.clients {
		cr, err := c.result(limit)
		if err != nil {
			run.errs = append(run.errs, err.Error())
		}
		run.results[i] = cr
	}
	for _, cr := range run.results {
		if cr.Err != "" {
			run.errs = append(run.errs, fmt.Sprintf("client %d: %s", cr.Index, cr.Err))
		}
	}
	if len(run.errs) > 0 && !run.interrupted {
		return errors.New(strings.Join(run.errs, "; "))
	}
	return nil
}

// collect checks the resource, merges the clients' logs and builds the
// result with its expectations, verdict and warnings.
func (r *cellRun) collect(t0 time.Time, run clientsRun, sched *faults.Scheduler) (*CellResult, error) {
	// Check the resource with a fresh context: an interrupted cell still
	// gets its partial result checked.
	cctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	check, err := CheckResource(cctx, r.raddr, r.prefix, r.s.Keys)
	cancel()
	if err != nil {
		return nil, err
	}
	res := r.res
	res.Check, res.Clients = check, run.results
	if res.Intervals, err = mergeLogs(run.results, t0); err != nil {
		return nil, err
	}
	events := sched.Events()
	res.Run = buildRun(r.cell, r.opt, r.prefix, t0, run.results, check, res.Intervals, events, r.addrs, run.interrupted)
	if ferr := sched.Err(); ferr != nil {
		res.Run.Warnings = append(res.Run.Warnings, "faults: "+strings.ReplaceAll(ferr.Error(), "\n", "; "))
	}
	res.Run.Warnings = append(res.Run.Warnings, run.errs...)
	res.Run.Warnings = append(res.Run.Warnings, r.s.Warnings()...)
	r.judge(run.interrupted, sched.Missed(), events)
	for _, m := range r.masters { // a master restarted after a crash has a new pid
		if pid := m.Pid(); pid != 0 && !slices.Contains(res.Pids, pid) {
			res.Pids = append(res.Pids, pid)
		}
	}
	logf(r.opt.Log, "chaos: cell %s: %d acquired, %d violations, %d lost updates, %d stale writes rejected, availability %.1f%% of attempts %.1f%% of time%s",
		r.cell.Name, res.Run.Outcomes.Acquired, check.Violations, check.LostUpdates, check.RejectedWrites,
		100*res.Run.Safety.AvailabilityOps, 100*res.Run.Safety.AvailabilityTime, map[bool]string{true: " (INTERRUPTED)"}[run.interrupted])
	return res, nil
}

// judge weighs the result against the cell's expectations and says
// whether anything could be judged at all.
func (r *cellRun) judge(interrupted bool, missed []faults.Spec, events []faults.Event) {
	res := r.res
	for _, e := range r.cell.Expect {
		v := res.Value(e.Metric)
		if !e.Holds(v) {
			msg := fmt.Sprintf("expectation not met: %s (measured %s)", e, strconv.FormatFloat(v, 'g', -1, 64))
			res.Failed = append(res.Failed, msg)
			res.Run.Warnings = append(res.Run.Warnings, msg)
		}
	}
	if !interrupted {
		res.NotJudged = notJudged(r.cell, res, missed, events)
	}
	for _, m := range res.NotJudged {
		res.Run.Warnings = append(res.Run.Warnings, "not judged: "+m)
	}
	res.Verdict = verdict(interrupted, res.NotJudged, res.Failed, len(r.cell.Expect))
	res.Run.Safety.Verdict, res.Run.Safety.NotJudged = res.Verdict, strings.Join(res.NotJudged, "; ")
	if c := res.Run.Config; c != nil && c.ChaosConfig != nil {
		c.ExpectFailed = res.Failed
	}
}

// notJudged lists why a finished cell showed nothing whatever its figures
// say: a scheduled fault that did not happen, too few acquisitions or
// acknowledged writes to judge, holds the checker did not see, or a crash
// of a master that held no lock (nothing for it to forget).
func notJudged(cell Cell, r *CellResult, missed []faults.Spec, events []faults.Event) []string {
	var out []string
	for _, f := range missed {
		out = append(out, fmt.Sprintf("scheduled fault %q did not happen", f))
	}
	minimum, acquired := cell.Settings.MinAcquisitions, r.Run.Outcomes.Acquired
	if acquired < minimum {
		out = append(out, fmt.Sprintf("%d acquisitions, fewer than min_acquisitions %d", acquired, minimum))
	}
	if r.Check.Acks < minimum {
		out = append(out, fmt.Sprintf("%d acknowledged writes, fewer than min_acquisitions %d", r.Check.Acks, minimum))
	}
	if r.Check.Holds != acquired {
		out = append(out, fmt.Sprintf("the checker saw %d holds for %d acquisitions", r.Check.Holds, acquired))
	}
	for _, e := range events {
		switch {
		case e.Kind != "crash":
		case e.HeldKeys == 0:
			out = append(out, fmt.Sprintf("the crash of %s hit a master that held no lock key", e.Target))
		case e.HeldKeys < 0:
			out = append(out, fmt.Sprintf("the crash of %s: the lock keys it held could not be counted", e.Target))
		}
	}
	return out
}

// verdict sums a cell up; only "met" is a pass that means something.
func verdict(interrupted bool, notJudged, unmet []string, expectations int) string {
	switch {
	case interrupted:
		return "interrupted"
	case len(notJudged) > 0:
		return "not judged"
	case expectations == 0:
		return "unchecked"
	case len(unmet) > 0:
		return "not met"
	}
	return "met"
}

func pidList(p []int) string {
	s := make([]string, len(p))
	for i, x := range p {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " ")
}

// clientPids lists the client processes the cell started, if any.
func clientPids(cs []cellClient) string {
	var p []int
	for _, c := range cs {
		if pid := c.pid(); pid != 0 {
			p = append(p, pid)
		}
	}
	if len(p) == 0 {
		return ""
	}
	return " (pids " + pidList(p) + ")"
}

// mergeLogs adds the clients' interval logs second by second (every client
// flushes on the same one-second grid from t0).
func mergeLogs(clientResults []ClientResult, t0 time.Time) (map[string][]*hdrhistogram.Histogram, error) {
	out := map[string][]*hdrhistogram.Histogram{}
	base := t0.UnixMilli()
	for _, name := range []string{results.MetricAcquire, results.MetricFailed, results.MetricRelease} {
		bySlot := map[int64]*hdrhistogram.Histogram{}
		for _, r := range clientResults {
			path := r.LogFiles[name]
			if path == "" {
				continue
			}
			f, err := os.Open(path)
			if err != nil {
				return nil, fmt.Errorf("client %d log: %w", r.Index, err)
			}
			hs, err := results.ReadIntervalLog(f)
			f.Close()
			if err != nil {
				return nil, fmt.Errorf("client %d log %s: %w", r.Index, name, err)
			}
			for _, h := range hs {
				if h.EndTimeMs() <= h.StartTimeMs() {
					continue // the empty tail of a client that stopped on a tick
				}
				// By its middle: ticks land a little after the grid, and a
				// paused client's interval spans the pause. Merged intervals
				// keep to the grid, so they never overlap.
				slot := max(0, ((h.StartTimeMs()+h.EndTimeMs())/2-base)/1000)
				m := bySlot[slot]
				if m == nil {
					m = results.NewHistogram()
					m.SetStartTimeMs(base + slot*1000)
					bySlot[slot] = m
				}
				m.Merge(h)
				m.SetEndTimeMs(min(base+(slot+1)*1000, max(m.EndTimeMs(), h.EndTimeMs())))
			}
		}
		slots := make([]int64, 0, len(bySlot))
		for k := range bySlot {
			slots = append(slots, k)
		}
		sort.Slice(slots, func(i, j int) bool { return slots[i] < slots[j] })
		for _, k := range slots {
			out[name] = append(out[name], bySlot[k])
		}
	}
	return out, nil
}

func total(hs []*hdrhistogram.Histogram) *hdrhistogram.Histogram {
	t := results.NewHistogram()
	for _, h := range hs {
		t.Merge(h)
	}
	return t
}

// buildRun fills the result file of a cell.
func buildRun(cell Cell, opt Options, prefix string, t0 time.Time, clientResults []ClientResult, ck Check, iv map[string][]*hdrhistogram.Histogram,
	events []faults.Event, addrs []string, interrupted bool) results.Run {
	s := cell.Settings
	processes := s.ClientMode == "processes" // for the probe's scope in the config
	sum := sumClients(clientResults, t0, len(addrs))
	secs := sum.end.Sub(t0).Seconds()
	r := results.Run{
		Config:               runConfig(cell, opt, prefix, addrs, ck, sum, clientResults, processes),
		AcquireLatency:       results.Summarize(total(iv[results.MetricAcquire])),
		AcquireFailedLatency: results.Summarize(total(iv[results.MetricFailed])),
		ReleaseLatency:       results.Summarize(total(iv[results.MetricRelease])),
		Outcomes: results.Outcomes{Acquired: sum.Acquired, NotAcquired: sum.NotAcquired, Errors: sum.Errors,
			PerMaster: map[string]results.MasterOutcomes{}},
		Safety: results.Safety{
			Violations: ck.Violations, MaxConcurrentHolder: ck.MaxConcurrent,
			ResourceChecked: true, AcknowledgedWrites: ck.Acks, LostUpdates: ck.LostUpdates,
			Fencing: s.Fencing, StaleWritesRejected: ck.RejectedWrites,
			JudgedHolds: ck.Holds - ck.Unjudged, HoldsNotJudged: ck.Unjudged,
		},
		LockUse:         results.LockUse{HoldOverruns: sum.HoldOverruns},
		MeasuredSeconds: secs,
		Interrupted:     interrupted,
		StartedAt:       t0.UTC(),
	}
	for i, a := range addrs {
		r.Outcomes.PerMaster[a] = workloads.MasterOutcomes(sum.PerMaster[i], sum.late[i])
	}
	if sum.Attempts() > 0 {
		r.Safety.AvailabilityOps = float64(sum.Acquired) / float64(sum.Attempts())
	}
	r.Safety.AvailabilityTime = availabilityTime(iv[results.MetricAcquire], t0.Add(time.Duration(s.Duration)))
	if secs > 0 {
		r.Throughput.CyclesPerSec = float64(sum.Acquired) / secs
		r.Throughput.AcquiresPerSec = float64(sum.Attempts()) / secs
	}
	r.Client = workloads.ClientCost(sum.clientCPU, sum.Acquired, secs)
	for _, e := range events {
		r.Events = append(r.Events, results.Event{AtSeconds: math.Round(e.At.Sub(t0).Seconds()*1000) / 1000, Kind: e.Kind, Target: e.Target, Detail: e.Detail})
	}
	r.Safety.Timeline = safetyTimeline(ck, t0)
	r.Warnings = append(r.Warnings, safetyWarnings(ck, sum.UseErrors)...)
	return r
}

// clientTotals adds up the clients' counts.
type clientTotals struct {
	workloads.Counts
	probeViol int64
	end       time.Time // the last client's end
	late      []int64
	clientCPU float64
}

// sumClients adds the clients' counts. Clients in one process share its
// CPU and its probe, and each reports the process's figure: those count
// once per process (the largest reading).
func sumClients(clientResults []ClientResult, t0 time.Time, masters int) clientTotals {
	t := clientTotals{end: t0, late: make([]int64, masters)}
	t.PerMaster = make([][engine.NumOutcomes]int64, masters)
	type shared struct {
		cpu       float64
		probeViol int64
	}
	byPid := map[int]shared{}
	for _, r := range clientResults {
		t.Add(&r.Counts)
		p := byPid[r.Pid]
		byPid[r.Pid] = shared{max(p.cpu, r.CPUSeconds), max(p.probeViol, r.ProbeViolations)}
		if r.End.After(t.end) {
			t.end = r.End
		}
		for m := range r.Late {
			if m < len(t.late) {
				for _, v := range r.Late[m] {
					t.late[m] += v
				}
			}
		}
	}
	for _, p := range byPid {
		t.clientCPU += p.cpu
		t.probeViol += p.probeViol
	}
	return t
}

// runConfig is the result's config: the lock settings the cell ran on (as
// a benchmark cell records them; workers are the total over the clients),
// then the chaos part and the checkers' figures.
func runConfig(cell Cell, opt Options, prefix string, addrs []string, ck Check, sum clientTotals, clientResults []ClientResult, processes bool) *results.CellConfig {
	s := cell.Settings
	faultText := make([]string, len(cell.Faults))
	for i, f := range cell.Faults {
		faultText[i] = f.String()
	}
	expect := map[string]string{}
	for _, e := range cell.Expect {
		expect[e.Metric] = e.Op + strconv.FormatFloat(e.Value, 'g', -1, 64)
	}
	shown := results.Settings(s.Settings)
	shown.Masters, shown.Workers = addrs, s.Workers*s.Clients
	shown.Retries = 0        // the client loop retries itself (EngineConfig)
	shown.Embedded = "never" // chaos kills real redis-server masters
	shown.KeyPrefix = prefix
	// Settings chaos has no use for (its clients run a closed loop on
	// uniform keys, measure from the start and never extend) are written as
	// zero, not as plan defaults it never applied; the keys stay so the
	// config keeps its shape, and two chaos cells differing only in them match.
	shown.Load, shown.Distribution = "closed", "uniform"
	shown.Rate, shown.Warmup, shown.ZipfExponent = 0, 0, 0
	shown.HotspotOps, shown.HotspotKeys, shown.AutoExtend = 0, 0, false
	return &results.CellConfig{Settings: shown, Quorum: engine.Quorum(len(addrs)), Version: Version, ChaosConfig: &results.ChaosConfig{
		Scenario: opt.Scenario, Cell: cell.Name, Clients: s.Clients, ClientMode: s.ClientMode, WorkersPerClient: s.Workers,
		Fencing: s.Fencing, CheckValidity: s.CheckValidity, Acquisitions: s.Acquisitions, MinAcquisitions: s.MinAcquisitions,
		Faults: faultText, Expect: expect, Proxied: cell.NeedsNetwork(),
		Checks: results.ChaosChecks{
			HoldsLogged: ck.Holds, JudgedHolds: ck.Holds - ck.Unjudged, HoldsNotJudged: ck.Unjudged, FinalSum: ck.FinalSum,
			AcknowledgedWrites: ck.Acks, StaleReadsRejected: ck.RejectedReads, FencingTokens: ck.Tokens,
			ProbeViolations: sum.probeViol, ProbeScope: map[bool]string{true: "per client process", false: "all clients (one process)"}[processes],
			ResourceErrors: sum.UseErrors, Attempts: sum.Attempts(), PerClient: perClient(clientResults),
		},
	}}
}

// availabilityTime is the share of the window's seconds in which some
// client took the lock. After the window no acquire starts (clients finish
// their last cycle), so that tail is not counted.
func availabilityTime(acquires []*hdrhistogram.Histogram, windowEnd time.Time) float64 {
	var upMs, allMs int64
	end := windowEnd.UnixMilli()
	for _, h := range acquires {
		d := min(h.EndTimeMs(), end) - h.StartTimeMs()
		if d <= 0 {
			continue
		}
		allMs += d
		if h.TotalCount() > 0 {
			upMs += d
		}
	}
	if allMs > 0 {
		return float64(upMs) / float64(allMs)
	}
	return 0
}

// safetyWarnings say what the checkers found, in words.
func safetyWarnings(ck Check, resErrs int64) []string {
	var w []string
	if ck.Violations > 0 {
		w = append(w, fmt.Sprintf("safety: %d holds overlapped another holder of the same key inside its validity window", ck.Violations))
	}
	if ck.Unjudged > 0 {
		w = append(w, fmt.Sprintf("safety: %d of %d holds could not be judged: no validity (t1 + ttl - drift) was left when the acquire returned", ck.Unjudged, ck.Holds))
	}
	if ck.LostUpdates > 0 {
		w = append(w, fmt.Sprintf("safety: %d of %d acknowledged writes were lost (final counters sum to %d)", ck.LostUpdates, ck.Acks, ck.FinalSum))
	}
	if resErrs > 0 {
		w = append(w, fmt.Sprintf("resource: %d reads or writes failed (timeouts or errors); they were not acknowledged", resErrs))
	}
	return w
}

// safetyTimeline files the check's findings by second of the cell.
func safetyTimeline(ck Check, t0 time.Time) []results.SafetySecond {
	by := map[int64]*results.SafetySecond{}
	at := func(sec int64) *results.SafetySecond {
		if by[sec] == nil {
			by[sec] = &results.SafetySecond{Second: sec}
		}
		return by[sec]
	}
	for _, ns := range ck.ViolationStarts {
		at(max(0, (ns-t0.UnixNano())/int64(time.Second))).Violations++
	}
	for sec, n := range ck.LostBySecond {
		at(sec).LostUpdates += n
	}
	for sec, n := range ck.RejectedBySecond {
		at(sec).StaleWritesRejected += n
	}
	out := make([]results.SafetySecond, 0, len(by))
	for _, s := range by {
		if s.Violations != 0 || s.LostUpdates != 0 || s.StaleWritesRejected != 0 {
			out = append(out, *s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Second < out[j].Second })
	return out
}

// Version is stamped into results (set by main).
var Version = "dev"

// perClient shows each client's share: a client cut off from a majority
// can take no lock while the others still can.
func perClient(clientResults []ClientResult) []results.ClientCounts {
	out := make([]results.ClientCounts, len(clientResults))
	for i, r := range clientResults {
		a := 0.0
		if r.Attempts() > 0 {
			a = float64(r.Acquired) / float64(r.Attempts())
		}
		out[i] = results.ClientCounts{Client: r.Index, Attempts: r.Attempts(), Acquired: r.Acquired,
			NotAcquired: r.NotAcquired, Errors: r.Errors, AvailabilityAttempts: a, Overruns: r.HoldOverruns}
	}
	return out
}
