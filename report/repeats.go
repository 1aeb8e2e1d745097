package report

import (
	"cmp"
	"fmt"
	"lockbench/results"
	"maps"
	"slices"
)

// Figure is one number of a cell that repeats spread and compare judges.
type Figure struct {
	Name string // JSON key, --fail-on name
	Text string // short human name
	// Higher says whether a larger value is better (throughput) or worse
	// (latency): it decides what counts as a regression.
	Higher bool
	Micros bool // a latency in µs
	get    func(results.RepeatRun) float64
}

// Figures are the figures with a spread, in the order tables show them.
var Figures = []Figure{
	{"cycles_per_sec", "cycles/s", true, false, func(r results.RepeatRun) float64 { return r.CyclesPerSec }},
	{"acquires_per_sec", "acquires/s", true, false, func(r results.RepeatRun) float64 { return r.AcquiresPerSec }},
	{"acquire_p50", "acquire p50", false, true, func(r results.RepeatRun) float64 { return r.AcquireP50 }},
	{"acquire_p90", "acquire p90", false, true, func(r results.RepeatRun) float64 { return r.AcquireP90 }},
	{"acquire_p99", "acquire p99", false, true, func(r results.RepeatRun) float64 { return r.AcquireP99 }},
	{"acquire_p999", "acquire p99.9", false, true, func(r results.RepeatRun) float64 { return r.AcquireP999 }},
	{"release_p50", "release p50", false, true, func(r results.RepeatRun) float64 { return r.ReleaseP50 }},
	{"release_p99", "release p99", false, true, func(r results.RepeatRun) float64 { return r.ReleaseP99 }},
}

// FigureByName finds a figure; ok is false for an unknown name.
func FigureByName(name string) (Figure, bool) {
	for _, f := range Figures {
		if f.Name == name {
			return f, true
		}
	}
	return Figure{}, false
}

// FigureNames lists the figure names, for messages.
func FigureNames() []string {
	out := make([]string, len(Figures))
	for i, f := range Figures {
		out[i] = f.Name
	}
	return out
}

// repeatRunOf takes one repeat's figures from its result.
func repeatRunOf(i int, r results.Run) results.RepeatRun {
	return results.RepeatRun{
		Repeat: i + 1, StartedAt: r.StartedAt, MeasuredSeconds: r.MeasuredSeconds,
		CyclesPerSec: finiteOr0(r.Throughput.CyclesPerSec), AcquiresPerSec: finiteOr0(r.Throughput.AcquiresPerSec),
		AcquireP50: r.AcquireLatency.P50, AcquireP90: r.AcquireLatency.P90, AcquireP99: r.AcquireLatency.P99, AcquireP999: r.AcquireLatency.P999,
		ReleaseP50: r.ReleaseLatency.P50, ReleaseP99: r.ReleaseLatency.P99,
		Acquired: r.Outcomes.Acquired, NotAcquired: r.Outcomes.NotAcquired, Errors: r.Outcomes.Errors,
		Violations: r.Safety.Violations, Interrupted: r.Interrupted,
	}
}

// Samples are one figure's values across the repeats of r; a run without
// repeats is one sample of its headline figure.
func Samples(r results.Run, f Figure) []float64 {
	if r.Repeats == nil || len(r.Repeats.Runs) == 0 {
		return []float64{f.get(repeatRunOf(0, r))}
	}
	out := make([]float64, 0, len(r.Repeats.Runs))
	for _, rr := range r.Repeats.Runs {
		if rr.Interrupted || rr.Acquired == 0 && f.Micros {
			continue // a cut-short repeat, or no latency to speak of
		}
		out = append(out, f.get(rr))
	}
	return out
}

// CombineRepeats makes one cell result of several repeats of it. Headline
// throughput and percentiles are the medians of the repeats; counts and
// CPU seconds add; max is the largest. One repeat is returned as it is.
func CombineRepeats(runs []results.Run) results.Run {
	if len(runs) == 0 {
		return results.Run{}
	}
	if len(runs) == 1 {
		return runs[0]
	}
	rep := &results.Repeats{Count: len(runs), Spread: map[string]results.Spread{}}
	for i, r := range runs {
		rep.Runs = append(rep.Runs, repeatRunOf(i, r))
	}
	// Counts, CPU, safety and warnings add as concurrent segments'
	// do; throughput and latency are then replaced by medians.
	m := mergeRuns(sameMasterNames(runs), repeatNames(len(runs)))
	m.Config, m.BaselineRTT, m.BaselineParallel = runs[0].Config, runs[0].BaselineRTT, runs[0].BaselineParallel
	m.OpenLoop = combineOpenLoop(runs, false)
	m.MeasuredSeconds = 0
	for _, r := range runs {
		m.MeasuredSeconds += r.MeasuredSeconds
	}
	m.StartedAt = runs[0].StartedAt
	m.Events = repeatEvents(runs)
	oneMachineCost(&m, runs)
	spreadFigures(rep)
	m.Throughput = medianThroughput(rep)
	medianLatencies(&m, runs)
	m.Repeats = rep
	combineReadings(&m, runs)
	return m
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
func repeatEvents(runs []results.Run) []results.Event {
	var out []results.Event
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
func oneMachineCost(m *results.Run, runs []results.Run) {
	m.Client.Cores = runs[0].Client.Cores
	if m.Servers == nil {
		return
	}
	m.Servers.CPUSeconds = 0
	for _, r := range runs {
		if r.Servers != nil {
			m.Servers.CPUSeconds += r.Servers.CPUSeconds
		}
	}
	m.Servers.CPUMicrosCycle = m.Servers.CPUSeconds * 1e6 / cyclesOf(runs)
}

// medianLatencies sets m's latencies to the medians of the repeats'.
func medianLatencies(m *results.Run, runs []results.Run) {
	m.AcquireLatency = medianLatency(runs, func(r results.Run) results.Latency { return r.AcquireLatency })
	m.AcquireFailedLatency = medianLatency(runs, func(r results.Run) results.Latency { return r.AcquireFailedLatency })
	m.ReleaseLatency = medianLatency(runs, func(r results.Run) results.Latency { return r.ReleaseLatency })
	if runs[0].AcquireUncorrected != nil {
		l := medianLatency(runs, func(r results.Run) results.Latency {
			if r.AcquireUncorrected == nil {
				return results.Latency{}
			}
			return *r.AcquireUncorrected
		})
		m.AcquireUncorrected = &l
	}
}

// cyclesOf is cyclesIn, or 1 when the runs measured none (a divisor).
func cyclesOf(runs []results.Run) float64 {
	if c := cyclesIn(runs); c != 0 {
		return c
	}
	return 1
}

// medianLatency: each percentile is the median of the repeats' own
// (repeats with no sample left out); count adds, max is the largest, mean
// is weighted by count.
func medianLatency(runs []results.Run, get func(results.Run) results.Latency) results.Latency {
	var out results.Latency
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
func combineOpenLoop(runs []results.Run, concurrent bool) *results.OpenLoop {
	var out *results.OpenLoop
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
func sameMasterNames(runs []results.Run) []results.Run {
	names := sortedKeys(runs[0].Outcomes.PerMaster)
	out := make([]results.Run, len(runs))
	for i, r := range runs {
		out[i] = r
		mine := sortedKeys(r.Outcomes.PerMaster)
		if i == 0 || len(mine) != len(names) || slices.Equal(mine, names) {
			continue
		}
		pm := map[string]results.MasterOutcomes{}
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

// sortedKeys are m's keys in order.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// SpreadText is a spread's relative size, "3.1%", or "—" with one sample.
func SpreadText(sp results.Spread) string {
	if sp.N < 2 {
		return "—"
	}
	return fmt.Sprintf("%.1f%%", sp.RelSpread*100)
}

// CIText says what the ± of a repeated cell is: a 95% interval of the
// median, or with fewer than 6 repeats the range and the level it reaches.
func CIText(r *results.Repeats) string {
	for _, f := range Figures {
		sp := r.Spread[f.Name]
		if sp.N < 2 {
			continue
		}
		if sp.CILow == sp.Min && sp.CIHigh == sp.Max && sp.CILevel < CIConfidence {
			return fmt.Sprintf("range of the repeats (a %.1f%% interval of the median: 6+ repeats reach 95%%)", sp.CILevel*100)
		}
		return fmt.Sprintf("%.0f%% confidence interval of the median", sp.CILevel*100)
	}
	return "range of the repeats"
}

// combineReadings sets the machine split, Redis cost and verdict of repeats
// run one after another on one machine: shares are averaged over the
// repeats' measured time, the Redis cost is the repeat with the median CPU
// per cycle, and the verdict is worked out again on the combined result.
func combineReadings(m *results.Run, runs []results.Run) {
	var splits []*results.CPUSplit
	var weights []float64
	var costs []*results.RedisCost
	for _, r := range runs {
		if r.Machine != nil {
			splits, weights = append(splits, r.Machine), append(weights, r.MeasuredSeconds)
		}
		if r.RedisCost != nil {
			costs = append(costs, r.RedisCost)
		}
	}
	m.Machine = meanSplit(splits, weights)
	m.RedisCost = nil
	if len(costs) > 0 {
		slices.SortFunc(costs, func(a, b *results.RedisCost) int { return cmp.Compare(a.CPUMicrosCycle, b.CPUMicrosCycle) })
		m.RedisCost = costs[len(costs)/2]
	}
	l := results.LimitOf(m)
	m.Limit = &l
}

func meanSplit(splits []*results.CPUSplit, weights []float64) *results.CPUSplit {
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
	var proxy float64
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
	}
	if out.ProxyShare != nil {
		out.ProxyShare = &proxy
	}
	if !sameMasters {
		out.MasterCoreShare = medianMasterShares(splits)
	}
	return &out
}

// medianMasterShares are the masters' core shares of the repeat with the
// median busiest master: with fresh masters for each repeat a master's
// share is not averaged with another's.
func medianMasterShares(splits []*results.CPUSplit) map[string]float64 {
	sorted := slices.Clone(splits)
	busiest := func(s *results.CPUSplit) float64 { b, _ := results.BusiestMaster(&results.Run{Machine: s}); return b }
	slices.SortFunc(sorted, func(a, b *results.CPUSplit) int { return cmp.Compare(busiest(a), busiest(b)) })
	return sorted[len(sorted)/2].MasterCoreShare
}
