package runner

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"lockbench/chaos"
	"lockbench/check"
	"lockbench/faults"
	"lockbench/results"
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

// unavailability is the longest outage after any fault that took a
// server, member or leader away (a crash, a failover, a leader cut off
// and proven so, a server paused), to the window's end; nil without one.
func unavailability(ck check.Findings, t0, windowEnd time.Time, events []faults.Event) *results.Unavailability {
	var worst *results.Unavailability
	for _, e := range events {
		if !takesServer(events, e) || !e.At.Before(windowEnd) {
			continue
		}
		span, toEnd := ck.Unavailable(e.At.UnixNano(), windowEnd.UnixNano())
		u := &results.Unavailability{Seconds: math.Round(time.Duration(span).Seconds()*1000) / 1000, ToEnd: toEnd,
			After: e.Kind + " " + e.Target, AtS: secondsFrom(t0, e.At)}
		if worst == nil || u.Seconds > worst.Seconds {
			worst = u
		}
	}
	return worst
}

// takesServer: event e took a server, a member or a leader away.
func takesServer(events []faults.Event, e faults.Event) bool {
	switch e.Kind {
	case "crash", "failover":
		return true
	case "pause":
		return !strings.HasPrefix(e.Target, "client")
	case "partition":
		return strings.HasPrefix(e.Target, "leader") && provenCut(events, e)
	}
	return false
}

// safetyWarnings say what the resource's checker found, in words (the
// overlapping and unjudged holds are said by the result builder).
func safetyWarnings(ck check.Findings, resErrs int64) []string {
	var w []string
	if ck.LostUpdates > 0 {
		w = append(w, fmt.Sprintf("safety: %d of %d acknowledged writes are missing from the final histories (lost: %s)", ck.LostUpdates, ck.Acks, idList(ck.Writes.LostIDs, ck.LostUpdates)))
	}
	if ck.StaleAccepted > 0 {
		w = append(w, fmt.Sprintf("safety: %d writes were accepted after a history other than the one they read (stale: %s)", ck.StaleAccepted, idList(ck.Writes.StaleIDs, ck.StaleAccepted)))
	}
	if ck.InDoubt > 0 {
		w = append(w, fmt.Sprintf("resource: %d writes got no answer (in doubt, neither safe nor lost); %d of them are in the final histories", ck.InDoubt, ck.Writes.InDoubtLanded))
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
	second := func(ns int64) int64 { return max(0, (ns-t0.UnixNano())/int64(time.Second)) }
	for _, ns := range ck.ViolationStarts {
		at(second(ns)).Violations++
	}
	for _, ns := range ck.Writes.LostAt { // by when the lost write was acknowledged
		at(second(ns)).LostUpdates++
	}
	for _, ns := range ck.Writes.RefusedAt {
		at(second(ns)).StaleWritesRejected++
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
		out[i] = results.ClientCounts{Client: r.Index, Attempts: r.Attempts(), Tally: r.Tally, AvailabilityAttempts: a, Overruns: r.HoldOverruns}
	}
	return out
}

// idList names the ids kept as evidence, and how many more there were.
func idList(ids []string, n int64) string {
	s := strings.Join(ids, ", ")
	if more := n - int64(len(ids)); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}
