package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
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
		if m, ok := r.Run.Config.(map[string]any); ok {
			if c, ok := m["checks"].(map[string]any); ok {
				if v, ok := c["probe_violations"].(int64); ok {
					return float64(v)
				}
			}
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
func RunCell(ctx context.Context, cell Cell, opt Options) (res *CellResult, err error) {
	s := cell.Settings
	if err := cell.Validate(); err != nil {
		return nil, err
	}
	if s.ClientMode == "processes" && len(opt.ClientCommand) == 0 {
		return nil, errors.New("client_mode: processes needs a client command (lockbench starts itself)")
	}
	clockMasters := cell.ClockMasters()
	if len(clockMasters) > 0 {
		if err := faults.FaketimeAvailable(); err != nil {
			return nil, fmt.Errorf("clock_jump: %w", err)
		}
	}
	runID := opt.RunID
	if runID == "" {
		runID = strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	}
	prefix := fmt.Sprintf("chaos:%s:%d:", runID, cell.Index)
	tmp, err := os.MkdirTemp(opt.TempDir, "lockbench-chaos-*")
	if err != nil {
		return nil, err
	}
	res = &CellResult{}
	var cleanups []func()
	var stopErrs []error
	var stopMu sync.Mutex
	stopped := func(err error) {
		if err != nil {
			stopMu.Lock()
			stopErrs = append(stopErrs, err)
			stopMu.Unlock()
		}
	}
	defer func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
		stopped(os.RemoveAll(tmp))
		// The result stands; a server that would not stop is still news.
		for _, e := range stopErrs {
			logf(opt.Log, "chaos: cell %s: cleanup: %v", cell.Name, e)
		}
	}()
	startCtx, cancelStart := context.WithTimeout(ctx, 30*time.Second)
	defer cancelStart()

	// Lock masters: one set each, so one of them can run on a fake clock.
	persist, _ := localmasters.ParsePersistence(s.Persistence)
	masters := make([]*localmasters.Master, s.Masters)
	addrs := make([]string, s.Masters)
	clocks := map[int]*faults.Clock{}
	for i := range masters {
		var env []string
		if clockMasters[i] {
			c, err := faults.NewClock(tmp)
			if err != nil {
				return nil, err
			}
			if env, err = c.Env(); err != nil {
				return nil, err
			}
			clocks[i] = c
		}
		set, err := localmasters.Start(startCtx, localmasters.Options{N: 1, Persistence: persist, Embedded: "never", Env: env})
		if err != nil {
			return nil, fmt.Errorf("master %d: %w", i, err)
		}
		cleanups = append(cleanups, func() { stopped(set.Stop()) })
		masters[i], addrs[i] = set.Masters()[0], set.Addrs()[0]
	}
	rset, err := localmasters.Start(startCtx, localmasters.Options{N: 1, Persistence: localmasters.PersistNone, Embedded: "never"})
	if err != nil {
		return nil, fmt.Errorf("resource server: %w", err)
	}
	cleanups = append(cleanups, func() { stopped(rset.Stop()) })
	raddr := rset.Addrs()[0]
	res.Addrs = append(append(res.Addrs, addrs...), raddr)

	var network *faults.Network
	if cell.NeedsNetwork() {
		if network, err = faults.NewNetwork(addrs, s.Clients); err != nil {
			return nil, err
		}
		cleanups = append(cleanups, network.Close)
		for c := range s.Clients {
			res.Addrs = append(res.Addrs, network.Addrs(c)...)
		}
	}

	// Clients.
	cfgs := make([]ClientConfig, s.Clients)
	for c := range cfgs {
		ec := s.EngineConfig()
		ec.Masters = addrs
		if network != nil {
			ec.Masters = network.Addrs(c)
		}
		var quota int64
		if s.Acquisitions > 0 {
			quota = (s.Acquisitions + int64(s.Clients) - 1) / int64(s.Clients)
		}
		cfgs[c] = ClientConfig{Index: c, Engine: ec, Resource: raddr, Prefix: prefix, Keys: s.Keys, Workers: s.Workers,
			Hold: time.Duration(s.Hold), HoldDist: s.HoldDist, RetryMin: time.Duration(s.RetryMin), RetryMax: time.Duration(s.RetryMax),
			Fencing: s.Fencing, CheckValidity: s.CheckValidity, Duration: time.Duration(s.Duration), Quota: quota,
			Seed: s.Seed + uint64(c)*7919, LogDir: tmp}
		if cfgs[c].Seed == 0 {
			cfgs[c].Seed = uint64(time.Now().UnixNano()) + uint64(c)
		}
	}
	var inproc []*client
	var procs []*procClient
	targets := faults.Targets{Net: network, Clocks: clocks}
	for _, m := range masters {
		targets.Masters = append(targets.Masters, m)
	}
	sharedProbe := &windowProbe{}
	var obs Observer
	if opt.Observer != nil {
		obs = opt.Observer(cell, addrs)
		obs.SetWorkers(s.Workers * s.Clients)
		defer obs.SetWorkers(0)
		sharedProbe.onViolation = obs.Violation
	}
	if s.ClientMode == "processes" {
		cleanups = append(cleanups, func() {
			for _, p := range procs {
				p.kill() // no-op for those already reaped
			}
		})
		for c, cfg := range cfgs {
			b, _ := json.Marshal(cfg)
			cfgPath := filepath.Join(tmp, fmt.Sprintf("client-%d.json", c))
			if err := os.WriteFile(cfgPath, b, 0o600); err != nil {
				return nil, err
			}
			p, err := startProcClient(opt.ClientCommand, opt.ClientEnv, c, cfgPath,
				filepath.Join(tmp, fmt.Sprintf("client-%d.result.json", c)), filepath.Join(tmp, fmt.Sprintf("client-%d.stderr", c)), obs)
			if err != nil {
				return nil, err
			}
			procs = append(procs, p)
			targets.Clients = append(targets.Clients, p)
			res.Pids = append(res.Pids, p.Pid())
		}
		for _, p := range procs {
			if err := p.waitReady(startCtx); err != nil {
				return nil, err
			}
		}
	} else {
		cleanups = append(cleanups, func() {
			for _, c := range inproc {
				c.close()
			}
		})
		for _, cfg := range cfgs {
			c, err := newClient(startCtx, cfg, sharedProbe)
			if err != nil {
				return nil, err
			}
			c.obs = obs
			inproc = append(inproc, c)
			targets.Clients = append(targets.Clients, c)
		}
	}
	masterPids := make([]int, len(masters))
	for i, m := range masters {
		masterPids[i] = m.Pid()
	}
	rpid := rset.Masters()[0].Pid()
	res.Pids = append(append(res.Pids, masterPids...), rpid)
	logf(opt.Log, "chaos: cell %s: masters %s (pids %s), resource %s (pid %d), %d %s clients%s",
		cell.Name, strings.Join(addrs, " "), pidList(masterPids), raddr, rpid, s.Clients, s.ClientMode, procPids(procs))

	sched, err := faults.NewScheduler(ctx, cell.Faults, targets)
	if err != nil {
		return nil, err
	}
	stopScheduler := sync.OnceFunc(sched.Stop)
	cleanups = append(cleanups, stopScheduler)

	// Go. Faults due at 0 are in place before the first acquire.
	t0 := time.Now().Add(100 * time.Millisecond)
	cpu0 := workloads.ProcessCPU()
	sched.Start(t0, cell.Faults)
	clientResults := make([]ClientResult, s.Clients)
	var wg sync.WaitGroup
	if procs != nil {
		for _, p := range procs {
			if err := p.start(t0); err != nil {
				return nil, fmt.Errorf("client %d: %w", p.idx, err)
			}
		}
	} else {
		for i, c := range inproc {
			wg.Add(1)
			go func() {
				defer wg.Done()
				clientResults[i] = c.run(t0)
			}()
		}
	}
	allDone := make(chan struct{})
	go func() {
		if procs == nil {
			wg.Wait()
		} else {
			for _, p := range procs {
				<-p.done
			}
		}
		close(allDone)
	}()
	stopClients := func() {
		for _, c := range inproc {
			c.Stop()
		}
		for _, p := range procs {
			p.Stop()
		}
	}
	interrupted := false
	endTimer := time.NewTimer(time.Until(t0.Add(time.Duration(s.Duration))))
	defer endTimer.Stop()
	select {
	case <-allDone:
		stopScheduler()
	case <-endTimer.C:
		// Paused clients are resumed and partitions healed so that every
		// client can finish its last cycle and report.
		stopScheduler()
	case <-ctx.Done():
		interrupted = true
		stopScheduler()
		stopClients()
	}
	limit := 30*time.Second + time.Duration(s.Hold)
	select {
	case <-allDone:
	case <-ctx.Done():
		interrupted = true
		stopClients()
	case <-time.After(limit):
	}
	var errs []string
	if procs != nil {
		for i, p := range procs {
			r, err := p.result(limit)
			if err != nil {
				errs = append(errs, err.Error())
			}
			clientResults[i] = r
		}
	} else {
		select {
		case <-allDone:
		case <-time.After(limit):
			// Closing engines under running workers would panic them; the
			// connections go with the masters, stopped below.
			inproc = nil
			return nil, fmt.Errorf("clients did not finish %v after the end of the cell", limit)
		}
	}
	cpu := workloads.ProcessCPU() - cpu0
	for _, r := range clientResults {
		if r.Err != "" {
			errs = append(errs, fmt.Sprintf("client %d: %s", r.Index, r.Err))
		}
	}
	if len(errs) > 0 && !interrupted {
		return nil, errors.New(strings.Join(errs, "; "))
	}

	// Check the resource with a fresh context: an interrupted cell still
	// gets its partial result checked.
	cctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	check, cerr := CheckResource(cctx, raddr, prefix, s.Keys)
	cancel()
	if cerr != nil {
		return nil, cerr
	}
	res.Check = check
	res.Clients = clientResults
	intervals, err := mergeLogs(clientResults, t0)
	if err != nil {
		return nil, err
	}
	res.Intervals = intervals

	events := sched.Events()
	res.Run = buildRun(cell, opt, t0, clientResults, check, intervals, events, addrs, sharedProbe, procs != nil, cpu, interrupted)
	if ferr := sched.Err(); ferr != nil {
		res.Run.Warnings = append(res.Run.Warnings, "faults: "+strings.ReplaceAll(ferr.Error(), "\n", "; "))
	}
	res.Run.Warnings = append(res.Run.Warnings, errs...)
	res.Run.Warnings = append(res.Run.Warnings, s.Warnings()...)
	for _, e := range cell.Expect {
		v := res.Value(e.Metric)
		if !e.Holds(v) {
			msg := fmt.Sprintf("expectation not met: %s (measured %s)", e, strconv.FormatFloat(v, 'g', -1, 64))
			res.Failed = append(res.Failed, msg)
			res.Run.Warnings = append(res.Run.Warnings, msg)
		}
	}
	if !interrupted {
		res.NotJudged = notJudged(cell, res, sched.Missed(), events)
	}
	for _, m := range res.NotJudged {
		res.Run.Warnings = append(res.Run.Warnings, "not judged: "+m)
	}
	res.Verdict = verdict(interrupted, res.NotJudged, res.Failed, len(cell.Expect))
	res.Run.Safety.Verdict, res.Run.Safety.NotJudged = res.Verdict, strings.Join(res.NotJudged, "; ")
	if cfgMap, ok := res.Run.Config.(map[string]any); ok {
		cfgMap["expect_failed"] = res.Failed
	}
	for _, m := range masters { // a master restarted after a crash has a new pid
		if pid := m.Pid(); pid != 0 && !slices.Contains(res.Pids, pid) {
			res.Pids = append(res.Pids, pid)
		}
	}
	logf(opt.Log, "chaos: cell %s: %d acquired, %d violations, %d lost updates, %d stale writes rejected, availability %.1f%% of attempts %.1f%% of time%s",
		cell.Name, res.Run.Outcomes.Acquired, check.Violations, check.LostUpdates, check.RejectedWrites,
		100*res.Run.Safety.AvailabilityOps, 100*res.Run.Safety.AvailabilityTime, map[bool]string{true: " (INTERRUPTED)"}[interrupted])
	return res, nil
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

func procPids(ps []*procClient) string {
	if len(ps) == 0 {
		return ""
	}
	p := make([]int, len(ps))
	for i, x := range ps {
		p[i] = x.Pid()
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
func buildRun(cell Cell, opt Options, t0 time.Time, clientResults []ClientResult, ck Check, iv map[string][]*hdrhistogram.Histogram,
	events []faults.Event, addrs []string, probe *windowProbe, processes bool, cpu time.Duration, interrupted bool) results.Run {
	s := cell.Settings
	var attempts, acquired, notAcq, errs, overruns, resErrs, probeViol int64
	end := t0
	perMaster := make([][engine.NumOutcomes]int64, len(addrs))
	late := make([]int64, len(addrs))
	var clientCPU float64
	for _, r := range clientResults {
		attempts += r.Attempts
		acquired += r.Acquired
		notAcq += r.NotAcquired
		errs += r.Errors
		overruns += r.Overruns
		resErrs += r.ResourceErrors
		clientCPU += r.CPUSeconds
		if processes {
			probeViol += r.ProbeViolations
		}
		if r.End.After(end) {
			end = r.End
		}
		for m := range r.PerMaster {
			if m < len(perMaster) {
				for o := range r.PerMaster[m] {
					perMaster[m][o] += r.PerMaster[m][o]
				}
			}
		}
		for m := range r.Late {
			if m < len(late) {
				for _, v := range r.Late[m] {
					late[m] += v
				}
			}
		}
	}
	if !processes {
		probeViol = probe.violations.Load()
		clientCPU = cpu.Seconds()
	}
	secs := end.Sub(t0).Seconds()
	faultText := make([]string, len(cell.Faults))
	for i, f := range cell.Faults {
		faultText[i] = f.String()
	}
	expect := map[string]string{}
	for _, e := range cell.Expect {
		expect[e.Metric] = e.Op + strconv.FormatFloat(e.Value, 'g', -1, 64)
	}
	// The keys the report stage reads (persistence, masters, workers, keys,
	// ttl, hold, mode, wait, load, driver, distribution), then the chaos
	// settings and the checkers' figures.
	cfg := map[string]any{
		"scenario": opt.Scenario, "cell": cell.Name,
		"masters": addrs, "local": s.Masters, "persistence": s.Persistence, "driver": "lockbench",
		"mode": s.Mode, "wait": s.Wait, "load": "closed", "workers": s.Workers * s.Clients, "keys": s.Keys,
		"distribution": "uniform", "ttl": s.TTL.String(), "timeout": s.Timeout.String(), "drift_factor": s.Drift,
		"hold": s.Hold.String(), "hold_distribution": s.HoldDist, "retry_delay_min": s.RetryMin.String(), "retry_delay_max": s.RetryMax.String(),
		"clients": s.Clients, "client_mode": s.ClientMode, "workers_per_client": s.Workers,
		"fencing": s.Fencing, "check_validity": s.CheckValidity, "duration": s.Duration.String(),
		"acquisitions": s.Acquisitions, "seed": s.Seed, "faults": faultText, "expect": expect,
		"proxied": cell.NeedsNetwork(), "lockbench_version": Version,
		"checks": map[string]any{
			"holds_logged": ck.Holds, "judged_holds": ck.Holds - ck.Unjudged, "holds_not_judged": ck.Unjudged, "final_sum": ck.FinalSum, "acknowledged_writes": ck.Acks,
			"stale_reads_rejected": ck.RejectedReads, "fencing_tokens": ck.Tokens,
			"probe_violations": probeViol, "probe_scope": map[bool]string{true: "per client process", false: "all clients (one process)"}[processes],
			"resource_errors": resErrs, "attempts": attempts, "per_client": perClient(clientResults),
		},
	}
	r := results.Run{
		Config:               cfg,
		AcquireLatency:       results.Summarize(total(iv[results.MetricAcquire])),
		AcquireFailedLatency: results.Summarize(total(iv[results.MetricFailed])),
		ReleaseLatency:       results.Summarize(total(iv[results.MetricRelease])),
		Outcomes: results.Outcomes{Acquired: acquired, NotAcquired: notAcq, Errors: errs,
			PerMaster: map[string]results.MasterOutcomes{}},
		Safety: results.Safety{
			Violations: ck.Violations, MaxConcurrentHolder: ck.MaxConcurrent,
			ResourceChecked: true, AcknowledgedWrites: ck.Acks, LostUpdates: ck.LostUpdates,
			Fencing: s.Fencing, StaleWritesRejected: ck.RejectedWrites,
			JudgedHolds: ck.Holds - ck.Unjudged, HoldsNotJudged: ck.Unjudged,
		},
		LockUse:         results.LockUse{HoldOverruns: overruns},
		MeasuredSeconds: secs,
		Interrupted:     interrupted,
		StartedAt:       t0.UTC(),
	}
	for i, a := range addrs {
		pm := perMaster[i]
		r.Outcomes.PerMaster[a] = results.MasterOutcomes{OK: pm[engine.OK], Taken: pm[engine.Taken], Timeout: pm[engine.Timeout], Error: pm[engine.Error],
			Pending: pm[engine.Pending], NotSent: pm[engine.NotSent], Late: late[i]}
	}
	if attempts > 0 {
		r.Safety.AvailabilityOps = float64(acquired) / float64(attempts)
	}
	// Availability in time: the share of the window's seconds in which some
	// client took the lock.
	// After the window no acquire starts (clients finish their last cycle),
	// so that tail is not counted.
	var upMs, allMs int64
	windowEnd := t0.Add(time.Duration(s.Duration)).UnixMilli()
	for _, h := range iv[results.MetricAcquire] {
		d := min(h.EndTimeMs(), windowEnd) - h.StartTimeMs()
		if d <= 0 {
			continue
		}
		allMs += d
		if h.TotalCount() > 0 {
			upMs += d
		}
	}
	if allMs > 0 {
		r.Safety.AvailabilityTime = float64(upMs) / float64(allMs)
	}
	if secs > 0 {
		r.Throughput.CyclesPerSec = float64(acquired) / secs
		r.Throughput.AcquiresPerSec = float64(attempts) / secs
	}
	cores := runtime.NumCPU()
	r.Client = results.Client{CPUSeconds: clientCPU, Cores: cores}
	if acquired > 0 {
		r.Client.CPUMicrosCycle = clientCPU * 1e6 / float64(acquired)
	}
	if secs > 0 {
		r.Client.CPUShare = clientCPU / secs / float64(cores)
		r.Client.ClientBound = r.Client.CPUShare >= 0.8
	}
	for _, e := range events {
		r.Events = append(r.Events, results.Event{AtSeconds: math.Round(e.At.Sub(t0).Seconds()*1000) / 1000, Kind: e.Kind, Target: e.Target, Detail: e.Detail})
	}
	r.Safety.Timeline = safetyTimeline(ck, t0)
	if ck.Violations > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("safety: %d holds overlapped another holder of the same key inside its validity window", ck.Violations))
	}
	if ck.Unjudged > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("safety: %d of %d holds could not be judged: no validity (t1 + ttl - drift) was left when the acquire returned", ck.Unjudged, ck.Holds))
	}
	if ck.LostUpdates > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("safety: %d of %d acknowledged writes were lost (final counters sum to %d)", ck.LostUpdates, ck.Acks, ck.FinalSum))
	}
	if resErrs > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("resource: %d reads or writes failed (timeouts or errors); they were not acknowledged", resErrs))
	}
	return r
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
func perClient(clientResults []ClientResult) []map[string]any {
	out := make([]map[string]any, len(clientResults))
	for i, r := range clientResults {
		a := 0.0
		if r.Attempts > 0 {
			a = float64(r.Acquired) / float64(r.Attempts)
		}
		out[i] = map[string]any{"client": r.Index, "attempts": r.Attempts, "acquired": r.Acquired,
			"not_acquired": r.NotAcquired, "errors": r.Errors, "availability_attempts": a, "overruns": r.Overruns}
	}
	return out
}
