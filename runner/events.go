package runner

import (
	"cmp"
	"math"
	"slices"
	"time"

	"lockbench/check"
	"lockbench/results"
)

// faultEvents judge each fault event of a cell apart, as Jepsen's nemesis
// schedules do (a history holds several: fault, recovery, the next): each
// lock-taking fault is one event, and what broke is laid to the event whose
// window holds its moment, from the event to the next one's. What broke
// before the first event is laid to the first, so that nothing hides; a
// fault that takes no lock (a replica's lag) opens no event of its own.
// An event is judged when it exercised a hold, or, in a cell that states
// what it expects of its exercised holds (a session lock no fault can hand
// on), when it met one, and always when something broke in its window.
func faultEvents(ms []met, ck check.Findings, t0 time.Time, expectsNone bool) []results.FaultEvent {
	var out []results.FaultEvent
	var starts []int64
	for i, m := range ms {
		if m.exercised < 0 {
			continue
		}
		out = append(out, results.FaultEvent{
			Fault: i, AtS: math.Round(m.at.Sub(t0).Seconds()*1000) / 1000, Exercised: m.exercised, Held: m.held,
			Judged: m.exercised > 0 || expectsNone && m.held > 0,
		})
		starts = append(starts, m.at.UnixNano())
	}
	if len(out) == 0 {
		return nil
	}
	order := make([]int, len(out)) // the events by their moments, which the faults' order need not be
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(starts[a], starts[b]) })
	byTime := make([]results.FaultEvent, len(out))
	sorted := make([]int64, len(out))
	for k, i := range order {
		byTime[k], sorted[k] = out[i], starts[i]
	}
	out, starts = byTime, sorted
	lay := func(at int64, add func(*results.FaultEvent)) {
		i, found := slices.BinarySearch(starts, at)
		if !found {
			i-- // the event before at (-1: before the first)
		}
		add(&out[max(i, 0)])
	}
	for _, at := range ck.ViolationStarts {
		lay(at, func(e *results.FaultEvent) { e.Violations++ })
	}
	for _, at := range ck.InPromiseStarts {
		lay(at, func(e *results.FaultEvent) { e.InPromise++ })
	}
	for _, at := range append(slices.Clone(ck.Writes.LostAt), ck.Writes.StaleAt...) {
		lay(at, func(e *results.FaultEvent) { e.DataLost++ })
	}
	for i := range out { // what broke is judged, exercised or not: nothing lost hides
		out[i].Judged = out[i].Judged || out[i].Violations > 0 || out[i].DataLost > 0
	}
	return out
}
