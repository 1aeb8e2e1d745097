package results

import "slices"

// MergeRuns adds the counts of concurrent segments of one cell (dirs
// name them in warnings). Latencies are left to the caller, who
// recomputes them from the added histograms; without histograms they keep
// only what can be combined soundly.
func MergeRuns(runs []Run, dirs []string) Run {
	m := runs[0]
	if len(runs) == 1 {
		return m
	}
	m.Throughput = Throughput{}
	for _, r := range runs {
		m.Throughput.CyclesPerSec += r.Throughput.CyclesPerSec
		m.Throughput.AcquiresPerSec += r.Throughput.AcquiresPerSec
		m.MeasuredSeconds = max(m.MeasuredSeconds, r.MeasuredSeconds)
		m.Interrupted = m.Interrupted || r.Interrupted
		if !r.StartedAt.IsZero() && r.StartedAt.Before(m.StartedAt) {
			m.StartedAt = r.StartedAt
		}
	}
	m.Outcomes = addOutcomes(runs)
	m.Safety = addSafety(runs)
	cycles := cyclesIn(runs)
	m.Client = addClients(runs, cycles)
	if s := largestServers(runs, cycles); s != nil {
		m.Servers = s
	}
	m.Warnings, m.Events = segmentNotes(runs, dirs)
	m.OpenLoop = combineOpenLoop(runs, true)
	// Without histograms, percentiles cannot be combined: keep counts and
	// the largest max only.
	m.AcquireLatency = mergeCountsOnly(runs, func(r Run) Latency { return r.AcquireLatency })
	m.AcquireFailedLatency = mergeCountsOnly(runs, func(r Run) Latency { return r.AcquireFailedLatency })
	m.ReleaseLatency = mergeCountsOnly(runs, func(r Run) Latency { return r.ReleaseLatency })
	m.AcquireUncorrected = nil
	// What waiting callers saw adds up across segments (counts, and the
	// latencies from their histograms, which the caller recomputes); the
	// handoff gap and hot keys stay each segment's own.
	m.Contention, m.Fairness = mergeContention(runs), mergeFairness(runs)
	if m.Contention != nil {
		m.Warnings = append(m.Warnings, "merge: handoff gaps and hot keys are each segment's (a key the segments share also changes hands between them)")
	}
	return m
}

// mergeContention adds the segments' contention figures: counts summed,
// per-lock ratios weighted by acquisitions, latencies by count and max
// only (the caller recomputes them from the histograms). nil when a
// segment has none.
func mergeContention(runs []Run) *Contention {
	var out Contention
	var acquired, attempts, commands float64
	for _, r := range runs {
		c := r.Contention
		if c == nil {
			return nil
		}
		a := float64(r.Outcomes.Acquired)
		acquired, attempts, commands = acquired+a, attempts+c.AttemptsPerLock*a, commands+c.CommandsPerLock*a
		out.GaveUp += c.GaveUp
		out.Starved += c.Starved
		out.StarvedWaits += c.StarvedWaits
		out.SlowestWaits = append(out.SlowestWaits, c.SlowestWaits...)
		out.Commands = AddCommands(out.Commands, c.Commands)
		out.Wakeups = AddWakeups(out.Wakeups, c.Wakeups)
	}
	if acquired > 0 {
		out.AttemptsPerLock, out.CommandsPerLock = attempts/acquired, commands/acquired
	}
	out.TimeToLock = mergeCountsOnly(runs, func(r Run) Latency { return r.Contention.TimeToLock })
	out.GaveUpWait = mergeOptional(runs, func(r Run) *Latency { return r.Contention.GaveUpWait })
	out.HandoffGap = mergeOptional(runs, func(r Run) *Latency { return r.Contention.HandoffGap })
	return &out
}

// mergeOptional merges a latency some segments may lack (nil: none has it).
func mergeOptional(runs []Run, get func(Run) *Latency) *Latency {
	var have []Run
	for _, r := range runs {
		if get(r) != nil {
			have = append(have, r)
		}
	}
	if len(have) == 0 {
		return nil
	}
	l := mergeCountsOnly(have, func(r Run) Latency { return *get(r) })
	return &l
}

// AddCommands is a + b (nil: not counted), without changing either.
func AddCommands(a, b *Commands) *Commands {
	if b == nil {
		return a
	}
	out := Commands{}
	if a != nil {
		out = a.Clone()
	}
	out.Add(*b)
	return &out
}

// AddWakeups is a + b (nil: not counted), without changing either.
func AddWakeups(a, b *Wakeups) *Wakeups {
	if b == nil {
		return a
	}
	out := Wakeups{}
	if a != nil {
		out = *a
	}
	out.Add(*b)
	return &out
}

// mergeFairness is Jain's index over every segment's workers, exact from
// each segment's index, workers and acquisitions: a segment's sum of
// squares is (Σx)² / (n · J).
func mergeFairness(runs []Run) *Fairness {
	var out Fairness
	var sum, squares float64
	for i, r := range runs {
		f := r.Fairness
		if f == nil || f.JainIndex <= 0 || f.Workers == 0 {
			return nil
		}
		s := float64(r.Outcomes.Acquired)
		sum, squares = sum+s, squares+s*s/(float64(f.Workers)*f.JainIndex)
		out.Workers, out.Idle = out.Workers+f.Workers, out.Idle+f.Idle
		if i == 0 || f.MinAcquired < out.MinAcquired {
			out.MinAcquired = f.MinAcquired
		}
		out.MaxAcquired = max(out.MaxAcquired, f.MaxAcquired)
	}
	if squares > 0 {
		out.JainIndex = sum * sum / (float64(out.Workers) * squares)
	}
	return &out
}

// cyclesIn is how many cycles the runs measured in all.
func cyclesIn(runs []Run) float64 {
	var c float64
	for _, r := range runs {
		c += r.Throughput.CyclesPerSec * r.MeasuredSeconds
	}
	return c
}

// addOutcomes adds the runs' acquire outcomes, master by master.
func addOutcomes(runs []Run) Outcomes {
	out := Outcomes{PerMaster: map[string]MasterOutcomes{}}
	for _, r := range runs {
		out.Add(r.Outcomes)
	}
	return out
}

// addSafety adds the runs' safety counts; the merged verdict says why
// nothing was judged only when nothing was judged anywhere.
func addSafety(runs []Run) Safety {
	var out Safety
	for i, r := range runs {
		out.Violations += r.Safety.Violations
		out.MaxConcurrentHolder = max(out.MaxConcurrentHolder, r.Safety.MaxConcurrentHolder)
		out.JudgedHolds += r.Safety.JudgedHolds
		out.HoldsNotJudged += r.Safety.HoldsNotJudged
		if i == 0 || out.NotJudged != "" && r.Safety.NotJudged != "" {
			out.NotJudged = r.Safety.NotJudged
		} else {
			out.NotJudged = ""
		}
	}
	return out
}

// addClients adds the clients' cost over cycles; the busiest client
// decides whether the figure was client-bound.
func addClients(runs []Run, cycles float64) Client {
	var c Client
	for _, r := range runs {
		c.CPUSeconds += r.Client.CPUSeconds
		c.Cores += r.Client.Cores
		c.CPUShare = max(c.CPUShare, r.Client.CPUShare)
		c.ClientBound = c.ClientBound || r.Client.ClientBound
		c.RSSStartMB = max(c.RSSStartMB, r.Client.RSSStartMB)
		c.RSSEndMB = max(c.RSSEndMB, r.Client.RSSEndMB)
		c.IncludesAdapter = c.IncludesAdapter || r.Client.IncludesAdapter
		c.LockbenchCPUSeconds += r.Client.CPUSeconds - r.Client.AdapterCPUSeconds
		c.AdapterCPUSeconds += r.Client.AdapterCPUSeconds
	}
	c.perCycle(cycles)
	return c
}

// largestServers is the masters' CPU of concurrent segments, nil when no
// run read it. Every segment saw the same masters' counters over the same
// window: the largest reading is taken rather than their sum.
func largestServers(runs []Run, cycles float64) *Servers {
	var s *Servers
	for _, r := range runs {
		if r.Servers == nil {
			continue
		}
		if s == nil {
			s = &Servers{PerMaster: map[string]float64{}}
		}
		s.CPUSeconds = max(s.CPUSeconds, r.Servers.CPUSeconds)
		s.ReplicaCPUSeconds = max(s.ReplicaCPUSeconds, r.Servers.ReplicaCPUSeconds)
		s.MonitorCPUSeconds = max(s.MonitorCPUSeconds, r.Servers.MonitorCPUSeconds)
		s.BusiestShare = max(s.BusiestShare, r.Servers.BusiestShare)
		for a, v := range r.Servers.PerMaster {
			s.PerMaster[a] = max(s.PerMaster[a], v)
		}
	}
	if s != nil && cycles > 0 {
		s.perCycle(cycles)
	}
	return s
}

// segmentNotes gathers the runs' warnings, each prefixed with its
// segment's name, and their distinct events.
func segmentNotes(runs []Run, dirs []string) (warnings []string, events []Event) {
	for i, r := range runs {
		for _, w := range r.Warnings {
			warnings = append(warnings, dirs[i]+": "+w)
		}
		for _, e := range r.Events {
			if !slices.Contains(events, e) {
				events = append(events, e)
			}
		}
	}
	return warnings, events
}

func mergeCountsOnly(runs []Run, f func(Run) Latency) Latency {
	var l Latency
	for _, r := range runs {
		x := f(r)
		l.Count += x.Count
		l.Max = max(l.Max, x.Max)
	}
	return l
}
