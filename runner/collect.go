package runner

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"lockbench/chaos"
	"lockbench/check"
	"lockbench/lock"
	"lockbench/plan"
	"lockbench/results"
	"lockbench/workloads"
)

// collect adds the clients' stats into the cell's (the one combine),
// builds the result (the one result builder) and lets the cell's parts add
// theirs: its lock service's readings, or a fault cell's checkers.
func (r *cellRun) collect(t0 time.Time, run clientsRun) (*CellResult, error) {
	var chk *resourceCheck
	if r.checksResource() {
		var err error
		if chk, err = r.checkResource(t0, run); err != nil {
			return nil, err
		}
	}
	st, err := r.sum(run.results)
	if err != nil {
		return nil, err
	}
	chk.holds(st)
	cc := r.cellConfig()
	chk.config(cc, r, run.results)
	cc.Adapter = adapterOf(run.results)
	res := st.Result(r.replies(run.results), cc, t0)
	if r.svc != nil {
		r.svc.Finish(&res, st)
		res.Interrupted = res.Interrupted || run.interrupted
		r.res.Run = res
		if len(r.cell.Expect) > 0 { // a sweep's expectations: judged as a fault cell's are
			r.res.judge(r.cell, res.Interrupted, nil)
		}
		return r.res, nil
	}
	r.res.Run = res
	r.addFindings(t0, run, chk)
	return r.res, nil
}

// sum is the one combine of the clients' stats: a client in this process
// hands its own, a client process its logs, read back. Clients in one
// process share its CPU, and each reports the process's: that counts once
// per process (the largest reading).
func (r *cellRun) sum(crs []chaos.ClientResult) (*workloads.Stats, error) {
	parts := make([]*workloads.Stats, len(crs))
	for i, cr := range crs {
		st, err := clientStats(cr)
		if err != nil {
			return nil, err
		}
		parts[i] = st
	}
	st := workloads.Sum(parts)
	if len(parts) > 1 {
		cpu := map[int]time.Duration{}
		for i, cr := range crs {
			cpu[cr.Pid] = max(cpu[cr.Pid], parts[i].CPU)
		}
		st.CPU = 0
		for _, c := range cpu {
			st.CPU += c
		}
		st.AdapterCPU = adapterCPU(crs, parts)
	}
	return st, nil
}

// adapterCPU is the clients' adapters' CPU, each adapter once: the
// clients of one process may share one (the cell's lock), each reporting
// its reading. -1: one was not read.
func adapterCPU(crs []chaos.ClientResult, parts []*workloads.Stats) time.Duration {
	type proc struct{ client, adapter int }
	cpu := map[proc]time.Duration{}
	for i, cr := range crs {
		p := parts[i]
		if p.AdapterPid == 0 {
			continue
		}
		k := proc{cr.Pid, p.AdapterPid}
		switch c, seen := cpu[k]; {
		case !seen:
			cpu[k] = p.AdapterCPU
		case c >= 0 && p.AdapterCPU >= 0:
			cpu[k] = max(c, p.AdapterCPU)
		default:
			cpu[k] = -1
		}
	}
	var total time.Duration
	for _, c := range cpu {
		total = workloads.AddCPU(total, c)
	}
	return total
}

// clientStats are a client's stats: its own, or rebuilt from its counts
// and interval logs (a client process's).
func clientStats(cr chaos.ClientResult) (*workloads.Stats, error) {
	if cr.Stats != nil {
		return cr.Stats, nil
	}
	st := &workloads.Stats{Folded: cr.Folded}
	for _, h := range []struct {
		metric string
		to     **hdrhistogram.Histogram
	}{{results.MetricAcquire, &st.Acquire}, {results.MetricFailed, &st.AcquireFailed}, {results.MetricRelease, &st.Release},
		{results.MetricTimeToLock, &st.TimeToLock}, {results.MetricGaveUp, &st.GaveUpWait}, {results.MetricHandoffGap, &st.HandoffGap}} {
		hs, err := readClientLog(cr, h.metric)
		if err != nil {
			return nil, err
		}
		*h.to = total(hs)
	}
	return st, nil
}

// readClientLog is a client's interval log of one metric (none: nil).
func readClientLog(cr chaos.ClientResult, metric string) ([]*hdrhistogram.Histogram, error) {
	path := cr.LogFiles[metric]
	if path == "" {
		return nil, nil
	}
	hs, ok, err := results.ReadLogFile(path)
	if err == nil && !ok {
		err = fmt.Errorf("%s: no such file", path)
	}
	if err != nil {
		return nil, fmt.Errorf("client %d log %s: %w", cr.Index, metric, err)
	}
	return hs, nil
}

// replies are the lock's per-server detail: the cell's lock service's,
// or the clients' late replies added up over the masters.
func (r *cellRun) replies(crs []chaos.ClientResult) workloads.Replies {
	if r.svc != nil {
		return workloads.RepliesOf(r.svc.Locker())
	}
	n := 0 // the servers the clients' lock reported replies of (lock.PerServer; none: it fakes no masters)
	for _, cr := range crs {
		n = max(n, len(cr.Late))
	}
	addrs := r.servers.Display[:min(n, len(r.servers.Display))]
	late := make([][lock.NumOutcomes]int64, len(addrs))
	for _, cr := range crs {
		for m := range min(len(cr.Late), len(addrs)) {
			for o, v := range cr.Late[m] {
				late[m][o] += v
			}
		}
	}
	return workloads.Replies{Addrs: addrs, Late: late}
}

// resourceCheck is a fault cell's checker part: what the protected
// resource's checker found and the clients' merged interval logs. A nil
// one (a benchmark cell) adds nothing.
type resourceCheck struct {
	ck        check.Findings
	iv        map[string][]*hdrhistogram.Histogram
	probeViol int64 // the probes' overlaps, once per process
}

// checkResource checks the resource and writes the clients' logs merged
// second by second as the cell's.
func (r *cellRun) checkResource(t0 time.Time, run clientsRun) (*resourceCheck, error) {
	// Check the resource with a fresh context: an interrupted cell still
	// gets its partial result checked.
	cctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	var final check.FinalRead
	if r.s.GuardedWrite {
		final = r.finalHistories
	}
	ck, err := check.Judge(cctx, r.servers.Resource, r.prefix, r.s.Keys, final)
	cancel()
	if err != nil {
		return nil, err
	}
	iv, err := mergeLogs(run.results, t0)
	if err != nil {
		return nil, err
	}
	if err := r.logs.write(iv); err != nil {
		return nil, err
	}
	return &resourceCheck{ck: ck, iv: iv, probeViol: probeViolations(run.results)}, nil
}

// finalHistories is a guarded cell's final read: the histories kept in
// the lock service, read after the cell through a lock client of its own
// (on client 0's addresses) from the service as it stands then.
func (r *cellRun) finalHistories(ctx context.Context, keys uint64) (map[uint64][]string, error) {
	cfg := chaos.ClientConfig{Prefix: r.prefix}
	if err := r.serviceConfig(&cfg); err != nil {
		return nil, err
	}
	return chaos.FinalHistories(ctx, cfg, keys)
}

// probeViolations are the probes' overlaps: clients in one process share
// its probe and each reports it, so it counts once per process.
func probeViolations(crs []chaos.ClientResult) int64 {
	probe := map[int]int64{}
	for _, cr := range crs {
		probe[cr.Pid] = max(probe[cr.Pid], cr.ProbeViolations)
	}
	var n int64
	for _, v := range probe {
		n += v
	}
	return n
}

// holds puts the checker's holds in place of the probes': the holds
// judged are the checker's, from the clients' hold logs.
func (c *resourceCheck) holds(st *workloads.Stats) {
	if c == nil {
		return
	}
	ck := c.ck
	st.Violations, st.MaxConcurrent, st.JudgedHolds, st.HoldsNotJudged = ck.Violations, ck.MaxConcurrent, ck.Holds-ck.Unjudged, ck.Unjudged
}

// config adds the fault scenario's part and the checkers' figures to the
// result's config.
func (c *resourceCheck) config(cc *results.CellConfig, r *cellRun, crs []chaos.ClientResult) {
	if c == nil {
		return
	}
	cell, s, ck := r.cell, r.s, c.ck
	faultText := make([]string, len(cell.Faults))
	for i, f := range cell.Faults {
		faultText[i] = f.String()
	}
	var counts workloads.Counts
	for _, cr := range crs {
		counts.Add(&cr.Counts)
	}
	cc.ChaosConfig = &results.ChaosConfig{
		Scenario: r.opt.Scenario, Cell: cell.Name, WorkersPerClient: s.Workers, Faults: faultText, Proxied: cell.NeedsNetwork(),
		Checks: results.ChaosChecks{
			HoldsLogged: ck.Holds, JudgedHolds: ck.Holds - ck.Unjudged, HoldsNotJudged: ck.Unjudged, FinalSum: ck.FinalSum,
			AcknowledgedWrites: ck.Acks, StaleReadsRejected: ck.RejectedReads, FencingTokens: ck.Tokens,
			ProbeViolations: c.probeViol, ProbeScope: map[bool]string{true: "per client process", false: "all clients (one process)"}[s.ClientMode == "processes"],
			ResourceErrors: counts.UseErrors, Attempts: counts.Attempts(), PerClient: perClient(crs),
		},
	}
}

// addFindings adds a fault cell's checkers' findings to its result: the
// resource's safety figures, availability, the fault events, failovers
// and lock losses, the history's judgement; then judges the cell.
func (r *cellRun) addFindings(t0 time.Time, run clientsRun, chk *resourceCheck) {
	res, s, ck := r.res, r.s, chk.ck
	rs := &res.Run.Safety
	rs.ResourceChecked, rs.History, rs.AcknowledgedWrites, rs.LostUpdates = true, true, ck.Acks, ck.LostUpdates
	rs.StaleWritesAccepted, rs.WritesInDoubt, rs.InDoubtLanded = ck.StaleAccepted, ck.InDoubt, ck.Writes.InDoubtLanded
	rs.LostWrites, rs.StaleWrites = ck.Writes.LostIDs, ck.Writes.StaleIDs
	rs.Fencing, rs.StaleWritesRejected, rs.GuardedWrite = s.Fencing, ck.RejectedWrites, s.GuardedWrite
	if s.Stock > 0 {
		left := s.Stock - ck.FinalSum
		rs.StockLeft = &left
	}
	o := res.Run.Outcomes
	if n := o.Attempts(); n > 0 {
		rs.AvailabilityOps = float64(o.Acquired) / float64(n)
	}
	rs.AvailabilityTime = availabilityTime(chk.iv[results.MetricAcquire], t0.Add(time.Duration(s.Duration)))
	events := r.sched.Events()
	rs.ViolationsInPromise = &ck.ViolationsInPromise
	rs.Unavailable = unavailability(ck, t0, t0.Add(time.Duration(s.Duration)), events)
	for _, e := range events {
		res.Run.Events = append(res.Run.Events, results.Event{AtSeconds: math.Round(e.At.Sub(t0).Seconds()*1000) / 1000, Kind: e.Kind, Target: e.Target, Detail: e.Detail})
	}
	ms := exercised(ck, r.cell.Faults, r.clientCount(), t0, t0.Add(time.Duration(s.Duration)), events)
	per, total, held, counted := exercisedTotals(ms)
	if counted {
		rs.FaultEvents = faultEvents(ms, ck, t0, expects(r.cell, results.MetricExercisedHolds))
		rs.ExercisedHolds, rs.ExercisedByFault, rs.HeldAtFaults = &total, per, &held
		if total == 0 && !expects(r.cell, results.MetricExercisedHolds) && ck.Violations == 0 && ck.LostUpdates+ck.StaleAccepted == 0 {
			res.NotExercised = notExercisedText(per)
		}
	}
	rs.Timeline = safetyTimeline(ck, t0)
	res.Run.Warnings = append(res.Run.Warnings, safetyWarnings(ck, res.Run.Config.Checks.ResourceErrors)...)
	r.addFailovers(&res.Run, t0, events, ck, run.results)
	res.Run.Safety.LockLoss = r.lockLoss(run.results)
	r.judgeHistory(&res.Run, ck, run.interrupted)
	if ferr := r.sched.Err(); ferr != nil {
		res.Run.Warnings = append(res.Run.Warnings, "faults: "+strings.ReplaceAll(ferr.Error(), "\n", "; "))
	}
	res.Run.Warnings = append(res.Run.Warnings, run.errs...)
	res.Run.Warnings = append(res.Run.Warnings, r.cell.Warnings()...)
	res.judge(r.cell, run.interrupted, notJudged(r.cell, res, ck, r.sched.Missed(), events))
	r.cpu.finish(&res.Run, r.servers.Pids())
	for _, pid := range r.servers.Pids() { // a server restarted after a crash has a new pid
		if pid != 0 && !slices.Contains(res.Pids, pid) {
			res.Pids = append(res.Pids, pid)
		}
	}
	r.logFindings(ck, run.interrupted)
}

// logFindings says what the fault cell came to, in lines.
func (r *cellRun) logFindings(ck check.Findings, interrupted bool) {
	res := r.res
	logf(r.opt.Log, "chaos: cell %s: %d acquired, %d violations, %d lost updates, %d stale writes rejected, availability %.1f%% of attempts %.1f%% of time, history %s%s",
		r.cell.Label, res.Run.Outcomes.Acquired, ck.Violations, ck.LostUpdates, ck.RejectedWrites,
		100*res.Run.Safety.AvailabilityOps, 100*res.Run.Safety.AvailabilityTime, res.Run.Safety.Linearizability.Verdict,
		map[bool]string{true: " (INTERRUPTED)"}[interrupted])
	if u := res.Run.Safety.Unavailable; u != nil {
		logf(r.opt.Log, "chaos: cell %s: unavailable %s after the %s at %.3f s", r.cell.Label, u.Text(), u.After, u.AtS)
	}
	for _, f := range res.Run.Failovers {
		logf(r.opt.Log, "chaos: cell %s: %s", r.cell.Label, f.Text())
	}
	if ll := res.Run.Safety.LockLoss; ll != nil {
		logf(r.opt.Log, "chaos: cell %s: %s", r.cell.Label, ll.Text())
	}
	if left := res.Run.Safety.StockLeft; left != nil {
		logf(r.opt.Log, "chaos: cell %s: stock left %d of %d", r.cell.Label, *left, r.s.Stock)
	}
	if c := res.Run.Contention; c != nil {
		logf(r.opt.Log, "chaos: cell %s: %s", r.cell.Label, c.Summary())
	}
}

// expects says the cell states an expectation on metric: one on its
// exercised holds says what its faults should do to a holder (hand its
// lock on, or not), so that no other verdict stands in for it.
func expects(c plan.Cell, metric string) bool {
	return slices.ContainsFunc(c.Expect, func(e plan.Expectation) bool { return e.Metric == metric })
}

// adapterOf is the clients' external library (nil: lockbench's own),
// with what their adapters did added up.
func adapterOf(crs []chaos.ClientResult) *results.AdapterSettings {
	var out *results.AdapterSettings
	for _, cr := range crs {
		a := cr.Adapter
		switch {
		case a == nil:
		case out == nil:
			c := *a
			out = &c
		default:
			out.LateGrants += a.LateGrants
			out.Indefinite += a.Indefinite
			out.Cancels += a.Cancels
		}
	}
	return out
}
