package runner

import (
	"fmt"
	"math"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"lockbench/chaos"
	"lockbench/check"
	"lockbench/engine"
	"lockbench/faults"
	"lockbench/plan"
	"lockbench/results"
	"lockbench/workloads"
)

// mergeLogs adds the clients' interval logs second by second: every
// client flushes on the same one-second grid from t0.
func mergeLogs(clientResults []chaos.ClientResult, t0 time.Time) (map[string][]*hdrhistogram.Histogram, error) {
	out := map[string][]*hdrhistogram.Histogram{}
	for _, m := range results.LogMetrics(false) {
		name := results.MetricName(m)
		var logs [][]*hdrhistogram.Histogram
		for _, r := range clientResults {
			if path := r.LogFiles[name]; path != "" {
				hs, ok, err := results.ReadLogFile(path)
				if err == nil && !ok {
					err = fmt.Errorf("%s: no such file", path)
				}
				if err != nil {
					return nil, fmt.Errorf("client %d log %s: %w", r.Index, name, err)
				}
				logs = append(logs, hs)
			}
		}
		out[name], _ = results.MergeIntervals(logs, t0.UnixMilli(), 1000)
	}
	return out, nil
}

// total adds a metric's merged intervals.
func total(hs []*hdrhistogram.Histogram) *hdrhistogram.Histogram {
	h, _ := results.Total(hs)
	return h
}

// buildRun fills the result of a fault cell: the clients' stats added up
// go through the one result builder (workloads.Stats.Result), then the
// protected resource's checks, availability and the fault events.
func buildRun(fr *faultRun, t0 time.Time, clientResults []chaos.ClientResult, ck check.Findings, iv map[string][]*hdrhistogram.Histogram,
	events []faults.Event) results.Run {
	s, addrs := fr.s, fr.masters.Addrs
	sum := sumClients(clientResults, t0, len(addrs))
	st := &workloads.Stats{Counts: sum.Counts, Acquire: total(iv[results.MetricAcquire]), AcquireFailed: total(iv[results.MetricFailed]),
		Release: total(iv[results.MetricRelease]), TimeToLock: total(iv[results.MetricTimeToLock]),
		GaveUpWait: total(iv[results.MetricGaveUp]), HandoffGap: handoffGap(s, iv), Measured: sum.end.Sub(t0), CPU: time.Duration(sum.clientCPU * float64(time.Second)),
		// The holds judged are the checker's, from the clients' hold logs.
		Violations: ck.Violations, MaxConcurrent: ck.MaxConcurrent, JudgedHolds: ck.Holds - ck.Unjudged, HoldsNotJudged: ck.Unjudged,
		PerWorker: sum.perWorker, WorkerWaits: sum.waits, Commands: sum.commands, Wakeups: sum.wakeups}
	r := st.Result(workloads.Replies{Addrs: addrs, Late: sum.late}, faultConfig(fr, ck, sum, clientResults), t0)
	r.Safety.ResourceChecked, r.Safety.AcknowledgedWrites, r.Safety.LostUpdates = true, ck.Acks, ck.LostUpdates
	r.Safety.Fencing, r.Safety.StaleWritesRejected, r.Safety.GuardedWrite = s.Fencing, ck.RejectedWrites, s.GuardedWrite
	r.Safety.GuardedInDoubt = ck.InDoubt
	if s.Stock > 0 {
		left := s.Stock - ck.FinalSum
		r.Safety.StockLeft = &left
	}
	if sum.Attempts() > 0 {
		r.Safety.AvailabilityOps = float64(sum.Acquired) / float64(sum.Attempts())
	}
	r.Safety.AvailabilityTime = availabilityTime(iv[results.MetricAcquire], t0.Add(time.Duration(s.Duration)))
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
	late      [][engine.NumOutcomes]int64
	clientCPU float64
	perWorker []int64
	waits     []results.WorkerWait
	commands  *results.Commands
	wakeups   *results.Wakeups
}

// sumClients adds the clients' counts. Clients in one process share its
// CPU and its probe, and each reports the process's figure: those count
// once per process (the largest reading).
func sumClients(clientResults []chaos.ClientResult, t0 time.Time, masters int) clientTotals {
	t := clientTotals{end: t0, late: make([][engine.NumOutcomes]int64, masters)}
	t.PerMaster = make([][engine.NumOutcomes]int64, masters)
	type shared struct {
		cpu       float64
		probeViol int64
	}
	byPid := map[int]shared{}
	for _, r := range clientResults {
		t.Add(&r.Counts)
		t.addWorkers(r)
		p := byPid[r.Pid]
		byPid[r.Pid] = shared{max(p.cpu, r.CPUSeconds), max(p.probeViol, r.ProbeViolations)}
		if r.End.After(t.end) {
			t.end = r.End
		}
		for m := range min(len(r.Late), masters) {
			for o, v := range r.Late[m] {
				t.late[m][o] += v
			}
		}
	}
	for _, p := range byPid {
		t.clientCPU += p.cpu
		t.probeViol += p.probeViol
	}
	return t
}

// addWorkers files a client's workers after those of the clients before
// it, and adds its commands.
func (t *clientTotals) addWorkers(r chaos.ClientResult) {
	for _, w := range r.WorkerWaits {
		w.Worker += len(t.perWorker)
		t.waits = append(t.waits, w)
	}
	t.perWorker = append(t.perWorker, r.PerWorker...)
	if c := r.Commands; c != nil {
		if t.commands == nil {
			t.commands = &results.Commands{}
		}
		t.commands.Add(*c)
	}
	if w := r.Wakeups; w != nil {
		if t.wakeups == nil {
			t.wakeups = &results.Wakeups{}
		}
		t.wakeups.Add(*w)
	}
}

// faultConfig is a fault cell's result config: the settings it ran on
// (as a benchmark cell records them; workers are the total over the
// clients), then the fault scenario's part and the checkers' figures.
func faultConfig(fr *faultRun, ck check.Findings, sum clientTotals, clientResults []chaos.ClientResult) *results.CellConfig {
	cell, s := fr.cell, fr.s
	faultText := make([]string, len(cell.Faults))
	for i, f := range cell.Faults {
		faultText[i] = f.String()
	}
	expect := map[string]string{}
	for _, e := range cell.Expect {
		expect[e.Metric] = e.Cond()
	}
	cc := fr.cellConfig()
	cc.ChaosConfig = &results.ChaosConfig{
		Scenario: fr.opt.Scenario, Cell: cell.Name, WorkersPerClient: s.Workers, Faults: faultText, Expect: expect, Proxied: cell.NeedsNetwork(),
		Checks: results.ChaosChecks{
			HoldsLogged: ck.Holds, JudgedHolds: ck.Holds - ck.Unjudged, HoldsNotJudged: ck.Unjudged, FinalSum: ck.FinalSum,
			AcknowledgedWrites: ck.Acks, StaleReadsRejected: ck.RejectedReads, FencingTokens: ck.Tokens,
			ProbeViolations: sum.probeViol, ProbeScope: map[bool]string{true: "per client process", false: "all clients (one process)"}[s.ClientMode == "processes"],
			ResourceErrors: sum.UseErrors, Attempts: sum.Attempts(), PerClient: perClient(clientResults),
		},
	}
	return cc
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

// safetyWarnings say what the resource's checker found, in words (the
// overlapping and unjudged holds are said by the result builder).
func safetyWarnings(ck check.Findings, resErrs int64) []string {
	var w []string
	if ck.LostUpdates > 0 {
		w = append(w, fmt.Sprintf("safety: %d of %d acknowledged writes were lost (final counters sum to %d)", ck.LostUpdates, ck.Acks, ck.FinalSum))
	}
	if resErrs > 0 {
		w = append(w, fmt.Sprintf("resource: %d reads or writes failed (timeouts or errors); they were not acknowledged", resErrs))
	}
	return w
}

// safetyTimeline files the check's findings by second of the cell.
func safetyTimeline(ck check.Findings, t0 time.Time) []results.SafetySecond {
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

// perClient shows each client's share: a client cut off from a majority
// can take no lock while the others still can.
func perClient(clientResults []chaos.ClientResult) []results.ClientCounts {
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

// handoffGap is a fault cell's handoff gaps; nil with several clients,
// each of which times only its own holders' handoffs (a gap it saw may
// hold another client's whole hold).
func handoffGap(s plan.Settings, iv map[string][]*hdrhistogram.Histogram) *hdrhistogram.Histogram {
	if s.Clients > 1 {
		return nil
	}
	return total(iv[results.MetricHandoffGap])
}
