package results

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// Unit is what a metric's figure is counted in. It decides how a rule's
// value is written (a latency needs a duration unit, a ratio may be a
// percentage) and how a figure is shown.
type Unit string

// Units of the metric table.
const (
	UnitMicros  Unit = "µs"       // latencies
	UnitRatio   Unit = "ratio"    // 0..1
	UnitRate    Unit = "cycles/s" // per second of the measured window
	UnitCount   Unit = ""         // a plain count
	UnitSeconds Unit = "s"
	UnitBool    Unit = "0/1" // 1: yes, 0: no
)

// Metric is one figure of a result that a rule (a threshold or an
// expectation) can name.
type Metric struct {
	Name string
	Unit Unit
	// Read is the figure in r; NaN when r did not measure it (an absent
	// section, a latency of nothing), so that it is never judged a pass.
	Read func(r *Run) float64
	// Probe marks the in-run probe's figures: none of them is judged when
	// the probe judged no hold (Safety.NotJudged says why).
	Probe bool
}

// Format writes v in the metric's unit, for messages and the report.
func (m Metric) Format(v float64) string {
	switch {
	case math.IsNaN(v):
		return "not measured"
	case m.Unit == UnitMicros:
		return FormatMicros(v)
	case m.Unit == UnitRatio:
		return strconv.FormatFloat(v, 'f', 4, 64)
	case m.Unit == UnitRate:
		return strconv.FormatFloat(v, 'f', 0, 64) + " cycles/s"
	case m.Unit == UnitSeconds:
		return strconv.FormatFloat(v, 'g', 4, 64) + " s"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// LatencyStats are the statistics of a latency metric: acquire.p99.
var LatencyStats = []string{"p50", "p90", "p99", "p999", "max", "mean"}

// latencyKinds are the latency families, each read from its summary (nil:
// not in this result).
var latencyKinds = []struct {
	name string
	read func(r *Run) *Latency
}{
	{MetricAcquire, func(r *Run) *Latency { return &r.AcquireLatency }},
	{MetricFailed, func(r *Run) *Latency { return &r.AcquireFailedLatency }},
	{MetricRelease, func(r *Run) *Latency { return &r.ReleaseLatency }},
	{MetricTimeToLock, func(r *Run) *Latency {
		if r.Contention == nil {
			return nil
		}
		return &r.Contention.TimeToLock
	}},
	// The waits of callers that gave up (gave_up is their count).
	{"gave_up_wait", func(r *Run) *Latency {
		if r.Contention == nil {
			return nil
		}
		return r.Contention.GaveUpWait
	}},
}

// plainMetrics are the metrics without a statistic.
var plainMetrics = []Metric{
	{Name: "success", Unit: UnitRatio, Read: func(r *Run) float64 {
		if r.Outcomes.Attempts() == 0 {
			return math.NaN() // an idle cell passes no SLO
		}
		return SuccessRatio(r.Outcomes)
	}},
	{Name: "throughput", Unit: UnitRate, Read: func(r *Run) float64 { return r.Throughput.CyclesPerSec }},
	{Name: "errors", Read: func(r *Run) float64 { return float64(r.Outcomes.Errors) }},
	{Name: "acquisitions", Read: func(r *Run) float64 { return float64(r.Outcomes.Acquired) }},
	{Name: "violations", Probe: true, Read: func(r *Run) float64 { return float64(r.Safety.Violations) }},
	// violations_in_promise: exclusion broken within what the locks
	// promised (Redis: their validity windows); a fault cell's (NaN
	// elsewhere, and in older results).
	{Name: "violations_in_promise", Probe: true, Read: func(r *Run) float64 {
		if p := r.Safety.ViolationsInPromise; p != nil {
			return float64(*p)
		}
		return math.NaN()
	}},
	{Name: "max_concurrent_holders", Probe: true, Read: func(r *Run) float64 { return float64(r.Safety.MaxConcurrentHolder) }},
	{Name: "lost_updates", Read: resource(func(s Safety) float64 { return float64(s.LostUpdates) })},
	{Name: "stale_writes_accepted", Read: resource(func(s Safety) float64 { return float64(s.StaleWritesAccepted) })},
	{Name: "writes_in_doubt", Read: resource(func(s Safety) float64 { return float64(s.WritesInDoubt) })},
	{Name: "stale_writes_rejected", Read: resource(func(s Safety) float64 { return float64(s.StaleWritesRejected) })},
	{Name: "availability_attempts", Unit: UnitRatio, Read: resource(func(s Safety) float64 { return s.AvailabilityOps })},
	{Name: "availability_time", Unit: UnitRatio, Read: resource(func(s Safety) float64 { return s.AvailabilityTime })},
	{Name: "stock_left", Read: func(r *Run) float64 {
		if p := r.Safety.StockLeft; p != nil {
			return float64(*p)
		}
		return math.NaN()
	}},
	{Name: "linearizable", Unit: UnitBool, Read: linearizable},
	// The holds the faults exercised (their lock could be handed on
	// meanwhile) and the holds they met at all; NaN in a cell whose
	// faults take no lock, and in older results.
	{Name: MetricExercisedHolds, Read: func(r *Run) float64 { return ptrOrNaN(r.Safety.ExercisedHolds) }},
	{Name: "held_at_faults", Read: func(r *Run) float64 { return ptrOrNaN(r.Safety.HeldAtFaults) }},
	{Name: "probe_violations", Read: func(r *Run) float64 {
		if c := r.Config; c != nil && c.ChaosConfig != nil {
			return float64(c.ChaosConfig.Checks.ProbeViolations)
		}
		return math.NaN()
	}},
	{Name: "gave_up", Read: func(r *Run) float64 {
		if c := r.Contention; c != nil {
			return float64(c.GaveUp)
		}
		return math.NaN()
	}},
	// A failover's unavailability window, the longest of the cell's.
	{Name: "unavailable_s", Unit: UnitSeconds, Read: longestUnavailable},
}

// resource reads a figure of the protected-resource checker: a cell
// without the resource measured none of them.
func resource(f func(Safety) float64) func(*Run) float64 {
	return func(r *Run) float64 {
		if !r.Safety.ResourceChecked {
			return math.NaN()
		}
		return f(r.Safety)
	}
}

// linearizable is 1 or 0 by the history's judge; unknown is not measured.
func linearizable(r *Run) float64 {
	l := r.Safety.Linearizability
	switch {
	case l == nil || l.Verdict == UnknownVerdict:
		return math.NaN()
	case l.Verdict == Linearizable:
		return 1
	}
	return 0
}

// longestUnavailable is the cell's outage span where it was measured,
// else (older results) the longest failover's time to its first grant.
func longestUnavailable(r *Run) float64 {
	if u := r.Safety.Unavailable; u != nil {
		return u.Seconds
	}
	longest := math.NaN()
	for _, f := range r.Failovers {
		if f.Unavailable != nil && !(*f.Unavailable <= longest) {
			longest = *f.Unavailable
		}
	}
	return longest
}

// latencyMetric is one statistic of one latency family; a summary of
// nothing (no count, no figure) is not measured.
func latencyMetric(kind string, read func(*Run) *Latency, stat string) Metric {
	return Metric{Name: kind + "." + stat, Unit: UnitMicros, Read: func(r *Run) float64 {
		l := read(r)
		if l == nil || *l == (Latency{}) {
			return math.NaN()
		}
		return map[string]float64{"p50": l.P50, "p90": l.P90, "p99": l.P99, "p999": l.P999, "max": l.Max, "mean": l.Mean}[stat]
	}}
}

// Metrics is the one metric table: every figure a threshold or an
// expectation can name, in a stable order.
var Metrics = buildMetrics()

var metricByName = func() map[string]Metric {
	m := map[string]Metric{}
	for _, x := range Metrics {
		m[x.Name] = x
	}
	return m
}()

func buildMetrics() []Metric {
	var out []Metric
	for _, k := range latencyKinds {
		for _, s := range LatencyStats {
			out = append(out, latencyMetric(k.name, k.read, s))
		}
	}
	return append(out, plainMetrics...)
}

// LookupMetric finds a metric by name, or by the name compare's figures
// give it (cycles_per_sec, acquire_p99): one name per figure across rules
// and --fail-on.
func LookupMetric(name string) (Metric, bool) {
	if m, ok := metricByName[name]; ok {
		return m, true
	}
	if name == "cycles_per_sec" {
		return metricByName["throughput"], true
	}
	for _, k := range latencyKinds {
		if stat, ok := strings.CutPrefix(name, k.name+"_"); ok && isLatencyStat(stat) {
			return metricByName[k.name+"."+stat], true
		}
	}
	return Metric{}, false
}

// MetricNames lists every metric's name, in the table's order.
func MetricNames() []string {
	out := make([]string, len(Metrics))
	for i, m := range Metrics {
		out[i] = m.Name
	}
	return out
}

// metricsText is the metric table in a line, for error messages.
func metricsText() string {
	kinds := make([]string, len(latencyKinds))
	for i, k := range latencyKinds {
		kinds[i] = k.name
	}
	plain := make([]string, len(plainMetrics))
	for i, m := range plainMetrics {
		plain[i] = m.Name
	}
	return strings.Join(kinds, "|") + "." + strings.Join(LatencyStats, "|") + " (with a unit: ns, us, µs, ms, s), " +
		strings.Join(plain, ", ")
}

// isLatencyStat reports whether s is a latency statistic.
func isLatencyStat(s string) bool { return slices.Contains(LatencyStats, s) }

func ptrOrNaN(p *int64) float64 {
	if p == nil {
		return math.NaN()
	}
	return float64(*p)
}
