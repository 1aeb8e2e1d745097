package results

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// CombineRepeats makes one cell result of several repeats of it. Headline
// throughput and percentiles are the medians of the repeats; counts and
// CPU seconds add; max is the largest. One repeat is returned as it is.
func CombineRepeats(runs []Run) Run {
	if len(runs) == 0 {
		return Run{}
	}
	if len(runs) == 1 {
		return runs[0]
	}
	rep := &Repeats{Count: len(runs), Spread: map[string]Spread{}}
	for i, r := range runs {
		rep.Runs = append(rep.Runs, repeatRunOf(i, r))
	}
	// Counts, CPU, safety and warnings add as concurrent segments'
	// do; throughput and latency are then replaced by medians.
	m := MergeRuns(sameMasterNames(runs), repeatNames(len(runs)))
	m.Config, m.BaselineRTT, m.BaselineParallel = runs[0].Config, runs[0].BaselineRTT, runs[0].BaselineParallel
	m.OpenLoop = combineOpenLoop(runs, false)
	m.MeasuredSeconds = 0
	for _, r := range runs {
		m.MeasuredSeconds += r.MeasuredSeconds
	}
	m.StartedAt = runs[0].StartedAt
	m.Events = repeatEvents(runs)
	oneMachineCost(&m, runs)
	rep.SpreadFigures()
	m.Throughput = rep.MedianThroughput()
	medianLatencies(&m, runs)
	m.Contention, m.Fairness = medianContention(runs, rep)
	m.Repeats = rep
	combineReadings(&m, runs)
	if runs[0].Safety.ResourceChecked {
		m.Safety = repeatSafety(runs, rep)
		m.Failovers = nil // each repeat's own: Spread has their unavailability
	}
	return m
}

// repeatSafety is a fault cell's safety over its repeats, each judged on
// its own: its counts are the repeats' medians (Spread has their range),
// its verdict the worst repeat's, and rep says how many repeats were
// unsafe. Adding the checkers' counts would make a verdict no repeat
// showed.
func repeatSafety(runs []Run, rep *Repeats) Safety {
	out := runs[0].Safety
	out.Timeline, out.LockLoss, out.Disagreement = nil, nil, ""
	// The medians are the repeats' that judged something, as Spread's
	// range is (an interrupted repeat's zeros are no figure).
	judged := slices.DeleteFunc(slices.Clone(runs), func(r Run) bool {
		return r.Interrupted || r.Safety.Verdict == NotJudged || r.Safety.Verdict == NotExercised
	})
	if len(judged) == 0 {
		judged = runs
	}
	med := func(get func(Safety) float64) float64 {
		xs := make([]float64, len(judged))
		for i, r := range judged {
			xs[i] = get(r.Safety)
		}
		return Median(xs)
	}
	out.Violations = int64(math.Round(med(func(s Safety) float64 { return float64(s.Violations) })))
	if out.ViolationsInPromise != nil { // a fault cell's: the median of the repeats that judged it
		var xs []float64
		for _, r := range judged {
			if p := r.Safety.ViolationsInPromise; p != nil {
				xs = append(xs, float64(*p))
			}
		}
		if len(xs) > 0 {
			v := int64(math.Round(Median(xs)))
			out.ViolationsInPromise = &v
		}
	}
	out.LostUpdates = int64(math.Round(med(func(s Safety) float64 { return float64(s.LostUpdates) })))
	out.StaleWritesAccepted = int64(math.Round(med(func(s Safety) float64 { return float64(s.StaleWritesAccepted) })))
	out.WritesInDoubt = int64(math.Round(med(func(s Safety) float64 { return float64(s.WritesInDoubt) })))
	out.History = !slices.ContainsFunc(runs, func(r Run) bool { return !r.Safety.History })
	out.LostWrites, out.StaleWrites = nil, nil // each repeat's own
	out.StaleWritesRejected = int64(math.Round(med(func(s Safety) float64 { return float64(s.StaleWritesRejected) })))
	out.AcknowledgedWrites = int64(math.Round(med(func(s Safety) float64 { return float64(s.AcknowledgedWrites) })))
	out.AvailabilityOps = med(func(s Safety) float64 { return s.AvailabilityOps })
	out.AvailabilityTime = med(func(s Safety) float64 { return s.AvailabilityTime })
	var notJudged []string
	for i, r := range runs {
		s := r.Safety
		if s.Linearizability != nil && s.Linearizability.Verdict == NotLinearizable {
			out.Linearizability = s.Linearizability // the one that failed says most
		}
		out.Verdict = worseVerdict(out.Verdict, s.Verdict)
		if s.NotJudged != "" {
			notJudged = append(notJudged, fmt.Sprintf("repeat %d: %s", i+1, s.NotJudged))
		}
		if r.Interrupted || s.Verdict == NotJudged || s.Verdict == NotExercised {
			continue
		}
		rep.Judged++
		if s.Violations > 0 || s.DataLost() > 0 {
			rep.Unsafe++
		}
	}
	out.NotJudged = strings.Join(notJudged, "; ")
	return out
}

// worseVerdict is the worse of two repeats' verdicts: not met over
// checkers disagreeing over not judged over interrupted over met over
// unchecked.
func worseVerdict(a, b string) string {
	rank := func(v string) int {
		return map[string]int{NotMet: 6, "checkers disagree": 5, NotJudged: 4, NotExercised: 4, "interrupted": 3, Met: 2, "unchecked": 1}[v]
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// repeatNames name n repeats in warnings: "repeat 1", "repeat 2", ...
func repeatNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("repeat %d", i+1)
	}
	return out
}

// repeatEvents lists every repeat's events, each detail prefixed with its
// repeat.
func repeatEvents(runs []Run) []Event {
	var out []Event
	for i, r := range runs {
		for _, e := range r.Events {
			e.Detail = fmt.Sprintf("repeat %d", i+1) + map[bool]string{true: ": " + e.Detail, false: ""}[e.Detail != ""]
			out = append(out, e)
		}
	}
	return out
}

// oneMachineCost corrects m's cost for repeats run one after another on
// one machine: cores do not add, the masters' CPU seconds do.
func oneMachineCost(m *Run, runs []Run) {
	m.Client.Cores = runs[0].Client.Cores
	if m.Servers == nil {
		return
	}
	s := m.Servers
	s.CPUSeconds, s.ReplicaCPUSeconds, s.MonitorCPUSeconds = 0, 0, 0
	for _, r := range runs {
		if r.Servers != nil {
			s.CPUSeconds += r.Servers.CPUSeconds
			s.ReplicaCPUSeconds += r.Servers.ReplicaCPUSeconds
			s.MonitorCPUSeconds += r.Servers.MonitorCPUSeconds
		}
	}
	s.perCycle(cyclesOf(runs))
}

// medianLatencies sets m's latencies to the medians of the repeats'.
func medianLatencies(m *Run, runs []Run) {
	m.AcquireLatency = MedianLatency(runs, func(r Run) Latency { return r.AcquireLatency })
	m.AcquireFailedLatency = MedianLatency(runs, func(r Run) Latency { return r.AcquireFailedLatency })
	m.ReleaseLatency = MedianLatency(runs, func(r Run) Latency { return r.ReleaseLatency })
	if runs[0].AcquireUncorrected != nil {
		l := MedianLatency(runs, func(r Run) Latency {
			if r.AcquireUncorrected == nil {
				return Latency{}
			}
			return *r.AcquireUncorrected
		})
		m.AcquireUncorrected = &l
	}
}

// cyclesOf is cyclesIn, or 1 when the runs measured none (a divisor).
func cyclesOf(runs []Run) float64 {
	if c := cyclesIn(runs); c != 0 {
		return c
	}
	return 1
}

// MedianLatency: each percentile is the median of the repeats' own
// (repeats with no sample left out); count adds, max is the largest, mean
// is weighted by count.
func MedianLatency(runs []Run, get func(Run) Latency) Latency {
	var out Latency
	var p50, p90, p99, p999 []float64
	var sum float64
	for _, r := range runs {
		l := get(r)
		out.Count += l.Count
		out.Max = max(out.Max, l.Max)
		sum += l.Mean * float64(l.Count)
		if l.Count > 0 {
			p50, p90, p99, p999 = append(p50, l.P50), append(p90, l.P90), append(p99, l.P99), append(p999, l.P999)
		}
	}
	if out.Count > 0 {
		out.Mean = sum / float64(out.Count)
	}
	out.P50, out.P90, out.P99, out.P999 = Median(p50), Median(p90), Median(p99), Median(p999)
	return out
}

// combineOpenLoop adds offered, served and unserved starts; the pacer lag
// is the worst run's. Concurrent segments' offered and served rates add;
// repeats' do not (the offered rate is the cell's own, the served rate is
// over all their measured seconds).
func combineOpenLoop(runs []Run, concurrent bool) *OpenLoop {
	var out *OpenLoop
	var secs float64
	for _, r := range runs {
		if r.OpenLoop == nil {
			continue
		}
		secs += r.MeasuredSeconds
		if out == nil {
			o := *r.OpenLoop
			out = &o
			continue
		}
		out.Offered += r.OpenLoop.Offered
		out.Served += r.OpenLoop.Served
		out.Unserved += r.OpenLoop.Unserved
		out.Overloaded = out.Overloaded || r.OpenLoop.Overloaded
		if concurrent {
			out.OfferedRate += r.OpenLoop.OfferedRate
			out.ServedRate += r.OpenLoop.ServedRate
		}
		if r.OpenLoop.PacerLag.P99 > out.PacerLag.P99 {
			out.PacerLag = r.OpenLoop.PacerLag
		}
	}
	if out != nil && !concurrent && secs > 0 {
		out.ServedRate = float64(out.Served) / secs
	}
	return out
}

// sameMasterNames renames the masters of later repeats to the first
// repeat's when they were restarted on other ports, so that per-master
// counts add up per position rather than listing every port ever used.
func sameMasterNames(runs []Run) []Run {
	names := slices.Sorted(maps.Keys(runs[0].Outcomes.PerMaster))
	out := make([]Run, len(runs))
	for i, r := range runs {
		out[i] = r
		mine := slices.Sorted(maps.Keys(r.Outcomes.PerMaster))
		if i == 0 || len(mine) != len(names) || slices.Equal(mine, names) {
			continue
		}
		pm := map[string]MasterOutcomes{}
		for j, a := range mine {
			pm[names[j]] = r.Outcomes.PerMaster[a]
		}
		out[i].Outcomes.PerMaster = pm
		if r.Servers != nil {
			s := *r.Servers
			s.PerMaster = map[string]float64{}
			for j, a := range mine {
				s.PerMaster[names[j]] = r.Servers.PerMaster[a]
			}
			out[i].Servers = &s
		}
	}
	return out
}

// combineReadings sets the machine split, Redis cost and verdict of repeats
// run one after another on one machine: shares are averaged over the
// repeats' measured time, the Redis cost is the repeat with the median CPU
// per cycle, and the verdict is worked out again on the combined result.
func combineReadings(m *Run, runs []Run) {
	var splits []*CPUSplit
	var weights []float64
	var costs []*CommandCost
	for _, r := range runs {
		if r.Machine != nil {
			splits, weights = append(splits, r.Machine), append(weights, r.MeasuredSeconds)
		}
		if r.CommandCost != nil {
			costs = append(costs, r.CommandCost)
		}
	}
	m.Machine = meanSplit(splits, weights)
	m.CommandCost = nil
	if len(costs) > 0 {
		slices.SortFunc(costs, func(a, b *CommandCost) int { return cmp.Compare(a.CPUMicrosCycle, b.CPUMicrosCycle) })
		m.CommandCost = costs[len(costs)/2]
	}
	l := LimitOf(m)
	m.Limit = &l
}

func meanSplit(splits []*CPUSplit, weights []float64) *CPUSplit {
	if len(splits) == 0 {
		return nil
	}
	out := *splits[0]
	out.MasterCoreShare = map[string]float64{}
	var total float64
	for _, w := range weights {
		total += w
	}
	if total <= 0 {
		return &out
	}
	out.BusyShare, out.StealShare, out.ClientShare, out.ServersShare, out.OtherShare = 0, 0, 0, 0, 0
	var proxy, adapter float64
	sameMasters := true
	for i, s := range splits {
		f := weights[i] / total
		out.BusyShare += f * s.BusyShare
		out.StealShare += f * s.StealShare
		out.ClientShare += f * s.ClientShare
		out.ServersShare += f * s.ServersShare
		out.OtherShare += f * s.OtherShare
		for a, v := range s.MasterCoreShare {
			out.MasterCoreShare[a] += f * v
		}
		if !maps.EqualFunc(s.MasterCoreShare, splits[0].MasterCoreShare, func(float64, float64) bool { return true }) {
			sameMasters = false
		}
		if s.ProxyShare != nil {
			proxy += f * *s.ProxyShare
		}
		if s.AdapterShare != nil {
			adapter += f * *s.AdapterShare
		}
	}
	if out.ProxyShare != nil {
		out.ProxyShare = &proxy
	}
	if out.AdapterShare != nil {
		out.AdapterShare = &adapter
	}
	if !sameMasters {
		out.MasterCoreShare = medianMasterShares(splits)
	}
	return &out
}

// medianMasterShares are the masters' core shares of the repeat with the
// median busiest master: with fresh masters for each repeat a master's
// share is not averaged with another's.
func medianMasterShares(splits []*CPUSplit) map[string]float64 {
	sorted := slices.Clone(splits)
	busiest := func(s *CPUSplit) float64 { b, _ := BusiestMaster(&Run{Machine: s}); return b }
	slices.SortFunc(sorted, func(a, b *CPUSplit) int { return cmp.Compare(busiest(a), busiest(b)) })
	return sorted[len(sorted)/2].MasterCoreShare
}
