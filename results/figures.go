package results

import (
	"math"
	"strings"
)

// Figure is one number of a cell that repeats spread and compare judges.
type Figure struct {
	Name string // JSON key, --fail-on name
	Text string // short human name
	// Higher says whether a larger value is better (throughput) or worse
	// (latency): it decides what counts as a regression.
	Higher bool
	Micros bool // a latency in µs
	// Fault: a fault cell's safety figure (a benchmark's repeats show
	// none of them).
	Fault bool
	get   func(RepeatRun) float64
}

// Figures are the figures with a spread, in the order tables show them.
var Figures = []Figure{
	{"cycles_per_sec", "cycles/s", true, false, false, func(r RepeatRun) float64 { return r.CyclesPerSec }},
	{"acquires_per_sec", "acquires/s", true, false, false, func(r RepeatRun) float64 { return r.AcquiresPerSec }},
	{"acquire_p50", "acquire p50", false, true, false, func(r RepeatRun) float64 { return r.AcquireP50 }},
	{"acquire_p90", "acquire p90", false, true, false, func(r RepeatRun) float64 { return r.AcquireP90 }},
	{"acquire_p99", "acquire p99", false, true, false, func(r RepeatRun) float64 { return r.AcquireP99 }},
	{"acquire_p999", "acquire p99.9", false, true, false, func(r RepeatRun) float64 { return r.AcquireP999 }},
	{"release_p50", "release p50", false, true, false, func(r RepeatRun) float64 { return r.ReleaseP50 }},
	{"release_p99", "release p99", false, true, false, func(r RepeatRun) float64 { return r.ReleaseP99 }},
	{"time_to_lock_p50", "time to lock p50", false, true, false, func(r RepeatRun) float64 { return r.TimeToLockP50 }},
	{"time_to_lock_p99", "time to lock p99", false, true, false, func(r RepeatRun) float64 { return r.TimeToLockP99 }},
	{"attempts_per_lock", "attempts/lock", false, false, false, func(r RepeatRun) float64 { return r.AttemptsPerLock }},
	{"commands_per_lock", "commands/lock", false, false, false, func(r RepeatRun) float64 { return r.CommandsPerLock }},
	{"jain_index", "Jain's index", true, false, false, func(r RepeatRun) float64 { return r.JainIndex }},
	// A fault cell's safety, spread over its repeats; unavailability only
	// where a failover or election measured one.
	{"violations", "violations", false, false, true, func(r RepeatRun) float64 { return float64(r.Violations) }},
	{"lost_updates", "lost updates", false, false, true, func(r RepeatRun) float64 { return float64(r.LostUpdates) }},
	{"unavailable_s", "unavailable s", false, false, true, func(r RepeatRun) float64 {
		if r.UnavailableSeconds == 0 {
			return math.NaN() // none measured: no sample
		}
		return r.UnavailableSeconds
	}},
}

// FigureByName finds a figure, by its name or by the rules' name for it
// (throughput, acquire.p99); ok is false for an unknown name.
func FigureByName(name string) (Figure, bool) {
	if name == "throughput" {
		name = "cycles_per_sec"
	}
	name = strings.ReplaceAll(name, ".", "_")
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
func repeatRunOf(i int, r Run) RepeatRun {
	rr := RepeatRun{
		Repeat: i + 1, StartedAt: r.StartedAt, MeasuredSeconds: r.MeasuredSeconds,
		CyclesPerSec: FiniteOr0(r.Throughput.CyclesPerSec), AcquiresPerSec: FiniteOr0(r.Throughput.AcquiresPerSec),
		AcquireP50: r.AcquireLatency.P50, AcquireP90: r.AcquireLatency.P90, AcquireP99: r.AcquireLatency.P99, AcquireP999: r.AcquireLatency.P999,
		ReleaseP50: r.ReleaseLatency.P50, ReleaseP99: r.ReleaseLatency.P99,
		Tally: r.Outcomes.Tally, Violations: r.Safety.Violations, Interrupted: r.Interrupted,
	}
	if c := r.Contention; c != nil {
		rr.TimeToLockP50, rr.TimeToLockP99, rr.AttemptsPerLock, rr.CommandsPerLock = c.TimeToLock.P50, c.TimeToLock.P99, c.AttemptsPerLock, c.CommandsPerLock
	}
	if f := r.Fairness; f != nil {
		rr.JainIndex = f.JainIndex
	}
	if r.Safety.ResourceChecked {
		rr.LostUpdates, rr.StaleWritesRejected, rr.Verdict = r.Safety.DataLost(), r.Safety.StaleWritesRejected, r.Safety.Verdict
		if u := longestUnavailable(&r); !math.IsNaN(u) {
			rr.UnavailableSeconds = u
		}
		rr.ViolationsInPromise = r.Safety.ViolationsInPromise
		rr.WritesPast = writesPast(r.Failovers)
		rr.ExercisedHolds, rr.FaultEvents = r.Safety.ExercisedHolds, r.Safety.FaultEvents
		if u := r.Safety.Unavailable; u != nil {
			rr.UnavailableToEnd = u.ToEnd
		}
	}
	return rr
}

// RepeatRuns are r's repeats' own figures, or r as its one run.
func (r Run) RepeatRuns() []RepeatRun {
	if r.Repeats != nil && len(r.Repeats.Runs) > 0 {
		return r.Repeats.Runs
	}
	return []RepeatRun{repeatRunOf(0, r)}
}

// Samples are one figure's values across the repeats of r; a run without
// repeats is one sample of its headline figure.
func Samples(r Run, f Figure) []float64 {
	if r.Repeats == nil || len(r.Repeats.Runs) == 0 {
		return []float64{f.get(repeatRunOf(0, r))}
	}
	out := make([]float64, 0, len(r.Repeats.Runs))
	for _, rr := range r.Repeats.Runs {
		if rr.Interrupted || rr.Acquired == 0 && f.Micros || f.Fault && rr.Verdict == NotJudged {
			continue // a cut-short repeat, no latency to speak of, or a fault repeat that judged nothing
		}
		out = append(out, f.get(rr))
	}
	return out
}

// FiniteOr0 is v, or 0 for NaN and ±Inf (which JSON cannot hold).
func FiniteOr0(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// writesPast sums the failovers' writes past the promoted node (nil: none
// counted them).
func writesPast(fs []Failover) *int64 {
	var sum *int64
	for _, f := range fs {
		if f.WritesPast != nil {
			sum = new(int64(*f.WritesPast + ptrOr0(sum)))
		}
	}
	return sum
}

func ptrOr0(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
