package report

import (
	"errors"
	"io"
	"lockbench/results"
	"os"
	"sort"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// readLogFile reads one metric's interval log; a missing file is no error
// (older cells, closed loop without the uncorrected log).
func readLogFile(path string) ([]*hdrhistogram.Histogram, bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	hs, err := results.ReadIntervalLog(f)
	if err != nil {
		return nil, true, &results.InputError{Field: "hlog", Value: path, Problem: err.Error(), Accepted: "an HdrHistogram interval log"}
	}
	return hs, true, nil
}

// total adds all intervals into one histogram: counts add exactly, which
// is the only sound way to combine percentiles.
func total(intervals []*hdrhistogram.Histogram) (*hdrhistogram.Histogram, int64) {
	h := results.NewHistogram()
	var dropped int64
	for _, iv := range intervals {
		dropped += h.Merge(iv)
	}
	return h, dropped
}

// intervalSeconds is an interval's length, 1 s when it was not stamped.
func intervalSeconds(h *hdrhistogram.Histogram) float64 {
	d := float64(h.EndTimeMs()-h.StartTimeMs()) / 1000
	if d <= 0 {
		return 1
	}
	return d
}

// mergeIntervals combines interval logs of segments that ran at the same
// time on several machines: intervals starting in the same slot of the
// common timeline are added. Slots are rounded, so clocks a few hundred
// ms apart still line up.
func mergeIntervals(logs [][]*hdrhistogram.Histogram) ([]*hdrhistogram.Histogram, int64) {
	var all []*hdrhistogram.Histogram
	for _, l := range logs {
		all = append(all, l...)
	}
	if len(all) == 0 {
		return nil, 0
	}
	base, step := slotGrid(all)
	slots := map[int64]*hdrhistogram.Histogram{}
	var dropped int64
	for _, h := range all {
		off := h.StartTimeMs() - base
		k := (off + step/2) / step
		m := slots[k]
		if m == nil {
			m = results.NewHistogram()
			m.SetStartTimeMs(h.StartTimeMs())
			m.SetEndTimeMs(h.EndTimeMs())
			slots[k] = m
		}
		dropped += m.Merge(h)
		m.SetStartTimeMs(min(m.StartTimeMs(), h.StartTimeMs()))
		m.SetEndTimeMs(max(m.EndTimeMs(), h.EndTimeMs()))
	}
	keys := sortedKeys(slots)
	out := make([]*hdrhistogram.Histogram, len(keys))
	for i, k := range keys {
		out[i] = slots[k]
	}
	return out, dropped
}

// slotGrid is the common timeline of intervals: its start (the earliest
// interval's, ms) and its step (the median interval length, 1 s if none).
func slotGrid(all []*hdrhistogram.Histogram) (base, step int64) {
	base = all[0].StartTimeMs()
	var lengths []int64
	for _, h := range all {
		base = min(base, h.StartTimeMs())
		lengths = append(lengths, h.EndTimeMs()-h.StartTimeMs())
	}
	sort.Slice(lengths, func(i, j int) bool { return lengths[i] < lengths[j] })
	step = lengths[len(lengths)/2]
	if step <= 0 {
		step = 1000
	}
	return base, step
}

// writePercentiles writes the classic HdrHistogram percentile distribution
// (values in ms, from µs) exactly as HdrHistogram's plotters read it.
func writePercentiles(path string, h *hdrhistogram.Histogram) error {
	return writeShared(path, func(w io.Writer) error {
		_, err := h.PercentilesPrint(w, 5, 1000.0)
		return err
	})
}

// ConcatIntervalLogs writes the intervals of several interval logs (the
// repeats of one cell, in order) into one log at out. Missing inputs are
// skipped; with none at all nothing is written.
func ConcatIntervalLogs(out, tag string, paths []string) error {
	var all []*hdrhistogram.Histogram
	found := false
	for _, p := range paths {
		hs, ok, err := readLogFile(p)
		if err != nil {
			return err
		}
		found = found || ok
		all = append(all, hs...)
	}
	if !found {
		return nil
	}
	return writeShared(out, func(w io.Writer) error { return results.WriteIntervalLog(w, tag, all) })
}
