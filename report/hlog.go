package report

import (
	"io"
	"lockbench/results"
	"sort"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

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
	return results.WriteFileShared(path, func(w io.Writer) error {
		_, err := h.PercentilesPrint(w, 5, 1000.0)
		return err
	})
}
