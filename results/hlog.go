package results

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// WriteIntervalLog writes intervals as an HdrHistogram interval log of one
// metric (named in the header comment) with absolute timestamps. The
// intervals are written untagged, whatever tag they were read with: one
// metric per file, so HdrHistogram's own tools (the Java
// HistogramLogProcessor reads only untagged intervals unless given -tag)
// read the files as they are.
func WriteIntervalLog(w io.Writer, metric string, intervals []*hdrhistogram.Histogram) error {
	bw := bufio.NewWriter(w)
	lw := hdrhistogram.NewHistogramLogWriter(bw)
	if err := lw.OutputLogFormatVersion(); err != nil {
		return err
	}
	if len(intervals) > 0 {
		if err := lw.OutputStartTime(intervals[0].StartTimeMs()); err != nil {
			return err
		}
	}
	if err := lw.OutputComment(logComment(metric)); err != nil {
		return err
	}
	if err := lw.OutputLegend(); err != nil {
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
