package results

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// ReadIntervalLog reads every interval histogram of an HdrHistogram
// interval log. Intervals keep their StartTimeMs/EndTimeMs (Unix ms).
func ReadIntervalLog(r io.Reader) ([]*hdrhistogram.Histogram, error) {
	lr := hdrhistogram.NewHistogramLogReader(r)
	var out []*hdrhistogram.Histogram
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			return out, err
		}
		if h == nil { // the reader's end of file
			return out, nil
		}
		out = append(out, h)
	}
}

// newLogWriter starts an interval log of metric: the format version, the
// start time (startMs < 0: none), the metric in a comment, the legend.
func newLogWriter(w io.Writer, metric string, startMs int64) (*hdrhistogram.HistogramLogWriter, error) {
	lw := hdrhistogram.NewHistogramLogWriter(w)
	steps := []func() error{lw.OutputLogFormatVersion, func() error { return lw.OutputStartTime(startMs) },
		func() error { return lw.OutputComment(logComment(metric)) }, lw.OutputLegend}
	if startMs < 0 {
		steps = append(steps[:1], steps[2:]...)
	}
	for _, f := range steps {
		if err := f(); err != nil {
			return nil, err
		}
	}
	return lw, nil
}

// WriteIntervalLog writes intervals as an HdrHistogram interval log of one
// metric (named in the header comment) with absolute timestamps. The
// intervals are written untagged, whatever tag they were read with: one
// metric per file, so HdrHistogram's own tools (the Java
// HistogramLogProcessor reads only untagged intervals unless given -tag)
// read the files as they are.
func WriteIntervalLog(w io.Writer, metric string, intervals []*hdrhistogram.Histogram) error {
	bw := bufio.NewWriter(w)
	start := int64(-1)
	if len(intervals) > 0 {
		start = intervals[0].StartTimeMs()
	}
	lw, err := newLogWriter(bw, metric, start)
	if err != nil {
		return err
	}
	for _, h := range intervals {
		h.SetTag("")
		if err := lw.OutputIntervalHistogram(h); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// logComment is the header comment of a metric's interval log.
func logComment(metric string) string {
	return "lockbench " + metric + " latency, microseconds, 1 s intervals (one metric per file, untagged)"
}

// CellStem is the file stem of a cell: cells/NNN-ID without ".json".
func CellStem(c CellInfo) string {
	if c.File != "" {
		return strings.TrimSuffix(c.File, ".json")
	}
	return filepath.Join("cells", c.ID)
}

// LogPath is where a cell's interval log of one metric lives.
func LogPath(dir string, c CellInfo, metric string) string {
	return filepath.Join(dir, filepath.FromSlash(CellStem(c))+"."+metric+".hlog")
}

// RepeatLogPath is where a sweep keeps repeat k's own log of a cell.
func RepeatLogPath(dir, id string, k int, metric string) string {
	return filepath.Join(dir, "cells", "repeats", fmt.Sprintf("%s.r%d.%s.hlog", id, k, metric))
}

// ReadLogFile reads one metric's interval log; a missing file is no error
// (older cells, closed loop without the uncorrected log).
func ReadLogFile(path string) ([]*hdrhistogram.Histogram, bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	hs, err := ReadIntervalLog(f)
	if err != nil {
		return nil, true, &InputError{Field: "hlog", Value: path, Problem: err.Error(), Accepted: "an HdrHistogram interval log"}
	}
	return hs, true, nil
}

// ConcatIntervalLogs writes the intervals of several interval logs (the
// repeats of one cell, in order) into one log at out. Missing inputs are
// skipped; with none at all nothing is written.
func ConcatIntervalLogs(out, tag string, paths []string) error {
	var all []*hdrhistogram.Histogram
	found := false
	for _, p := range paths {
		hs, ok, err := ReadLogFile(p)
		if err != nil {
			return err
		}
		found = found || ok
		all = append(all, hs...)
	}
	if !found {
		return nil
	}
	return WriteFileShared(out, func(w io.Writer) error { return WriteIntervalLog(w, tag, all) })
}

// MergeIntervals adds interval logs that ran at the same time (a fault
// cell's clients, or a sweep's segments on several machines) slot by slot
// of one grid: from base (ms; 0: the earliest start), step ms long (0: the
// median interval length, 1 s if none). An interval goes to the slot its
// middle falls in: ticks land a little after the grid, machines' clocks
// differ by a few hundred ms, and a paused client's interval spans the
// pause. Merged intervals keep to the grid, so they never overlap; an
// empty interval (the tail of a client that stopped on a tick) is left
// out. dropped counts values beyond the histograms' range.
func MergeIntervals(logs [][]*hdrhistogram.Histogram, base, step int64) (merged []*hdrhistogram.Histogram, dropped int64) {
	var all []*hdrhistogram.Histogram
	for _, l := range logs {
		for _, h := range l {
			if h.EndTimeMs() > h.StartTimeMs() {
				all = append(all, h)
			}
		}
	}
	if len(all) == 0 {
		return nil, 0
	}
	base, step = slotGrid(all, base, step)
	slots := map[int64]*hdrhistogram.Histogram{}
	for _, h := range all {
		k := max(0, ((h.StartTimeMs()+h.EndTimeMs())/2-base)/step)
		m := slots[k]
		if m == nil {
			m = NewHistogram()
			m.SetStartTimeMs(base + k*step)
			slots[k] = m
		}
		dropped += m.Merge(h)
		m.SetEndTimeMs(min(base+(k+1)*step, max(m.EndTimeMs(), h.EndTimeMs())))
	}
	for _, k := range slices.Sorted(maps.Keys(slots)) {
		merged = append(merged, slots[k])
	}
	return merged, dropped
}

// slotGrid fills in MergeIntervals' unset base and step.
func slotGrid(all []*hdrhistogram.Histogram, base, step int64) (int64, int64) {
	if base == 0 {
		base = all[0].StartTimeMs()
		for _, h := range all {
			base = min(base, h.StartTimeMs())
		}
	}
	if step == 0 {
		lengths := make([]int64, len(all))
		for i, h := range all {
			lengths[i] = h.EndTimeMs() - h.StartTimeMs()
		}
		slices.Sort(lengths)
		step = lengths[len(lengths)/2]
	}
	if step <= 0 {
		step = 1000
	}
	return base, step
}

// Total adds intervals into one histogram: counts add exactly, the only
// sound way to combine percentiles; dropped counts values beyond its range.
func Total(intervals []*hdrhistogram.Histogram) (h *hdrhistogram.Histogram, dropped int64) {
	h = NewHistogram()
	for _, iv := range intervals {
		dropped += h.Merge(iv)
	}
	return h, dropped
}
