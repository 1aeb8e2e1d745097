package report

import (
	"fmt"
	"io"
	"lockbench/results"
	"os"
	"path/filepath"
	"slices"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Merge combines results directories of segments that ran the same cells
// at the same time on several machines into out. Cells are matched by ID.
// Latencies are recomputed from the added histograms (percentiles are
// never averaged), counts and throughputs add since the segments ran
// concurrently, and the merged interval logs are written next to the
// merged cell results. A cell found in one directory only is copied.
func Merge(dirs []string, out string) error {
	inputs, err := loadSegments(dirs, out)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(out, "cells"), 0o755); err != nil {
		return fmt.Errorf("out: %w", err)
	}
	man := mergeManifests(inputs, dirs)
	segments := len(inputs)
	if !areSegments(inputs) {
		renameCollisions(inputs)
		man.Description = strings.Replace(man.Description, "segments", "runs (side by side: different scenarios)", 1)
		segments = 1 // each cell is one run's: none is missing from the others
	}
	for _, segs := range cellsByID(inputs) {
		info, err := mergeCell(segs, segments, out)
		if err != nil {
			return err
		}
		man.Cells = append(man.Cells, info)
	}
	return results.WriteFileShared(filepath.Join(out, "manifest.json"), func(w io.Writer) error { return results.WriteJSON(w, man) })
}

// loadSegments checks the merge's arguments and loads every segment.
func loadSegments(dirs []string, out string) ([]*loadedDir, error) {
	if len(dirs) == 0 {
		return nil, &results.InputError{Field: "DIR", Value: "", Problem: "nothing to merge", Accepted: "one or more results directories"}
	}
	if out == "" {
		return nil, &results.InputError{Field: "--out", Value: "", Problem: "no output directory", Accepted: "a directory for the merged results"}
	}
	absOut, _ := filepath.Abs(out)
	var inputs []*loadedDir
	for _, d := range dirs {
		if a, _ := filepath.Abs(d); a == absOut {
			return nil, &results.InputError{Field: "--out", Value: out, Problem: "is one of the input directories", Accepted: "a new directory, so that no segment is overwritten"}
		}
		r, err := loadDir(d, false)
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, r)
	}
	return inputs, nil
}

// areSegments says the inputs are segments of one run (its scenario's
// name in each): their cells add up. Runs of different scenarios are put
// side by side instead, whatever their cells' ids.
func areSegments(inputs []*loadedDir) bool {
	for _, r := range inputs {
		if r.Manifest.Name != inputs[0].Manifest.Name {
			return false
		}
	}
	return true
}

// renameCollisions gives a cell whose id another run's cell has too its
// run's name in front (id and label), so that it stays a cell of its own.
func renameCollisions(inputs []*loadedDir) {
	runs := map[string]int{}
	for _, r := range inputs {
		for _, c := range r.Cells {
			runs[c.Info.ID]++
		}
	}
	for _, r := range inputs {
		name := fileSafe(r.Manifest.Name)
		for _, c := range r.Cells {
			if runs[c.Info.ID] < 2 {
				continue
			}
			if c.Info.File == "" {
				c.Info.File = "cells/" + c.Info.ID + ".json" // where its files are read from
			}
			c.Info.ID, c.Info.Label, c.renamed = name+"-"+c.Info.ID, r.Manifest.Name+": "+c.Info.Label, true
		}
	}
}

// fileSafe is name with what a file name cannot hold replaced.
func fileSafe(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ' ' || r == ':' {
			return '-'
		}
		return r
	}, name)
}

// segCell is one segment's copy of a cell.
type segCell struct {
	dir string
	c   *cell
}

// cellsByID groups the segments' copies of each cell, cells in order of
// first appearance.
func cellsByID(inputs []*loadedDir) [][]segCell {
	var order []string
	byID := map[string][]segCell{}
	for _, r := range inputs {
		for _, c := range r.Cells {
			if _, ok := byID[c.Info.ID]; !ok {
				order = append(order, c.Info.ID)
			}
			byID[c.Info.ID] = append(byID[c.Info.ID], segCell{r.Dir, c})
		}
	}
	out := make([][]segCell, len(order))
	for i, id := range order {
		out[i] = byID[id]
	}
	return out
}

// mergeCell writes the merged result and logs of one cell's segments into
// out and returns the cell's manifest entry; inputs is how many segments
// the merge has.
func mergeCell(segs []segCell, inputs int, out string) (results.CellInfo, error) {
	first := segs[0].c
	info := first.Info
	if info.File == "" || first.renamed {
		info.File = "cells/" + info.ID + ".json"
	}
	runs := make([]results.Run, len(segs))
	segNames := make([]string, len(segs))
	for i, s := range segs {
		runs[i], segNames[i] = s.c.Run, s.dir
	}
	merged := results.MergeRuns(runs, segNames)
	if len(runs) > 1 {
		merged.Warnings = append(merged.Warnings, fmt.Sprintf("merged from %d segments: %s", len(runs), strings.Join(segNames, ", ")))
		merged.Repeats = nil // added up per repeat below, when the segments' repeats line up
	}
	if len(segs) < inputs {
		// Throughput and counts then cover fewer machines than the rest.
		merged.Warnings = append(merged.Warnings, fmt.Sprintf("merge: cell %s is in %d of %d segments (%s)", info.ID, len(segs), inputs, strings.Join(segNames, ", ")))
	}
	if err := mergeCellLogs(&merged, segs, out, info); err != nil {
		return info, err
	}
	if len(segs) > 1 && first.Run.Repeats != nil {
		cells := make([]*cell, len(segs))
		for i, sg := range segs {
			cells[i] = sg.c
		}
		if err := applySegmentRepeats(&merged, segNames, cells, out, info); err != nil {
			return info, err
		}
	}
	ci := info
	merged.Cell = &ci
	path := filepath.Join(out, filepath.FromSlash(info.File))
	return info, results.WriteFileShared(path, func(w io.Writer) error { return results.WriteJSON(w, merged) })
}

// mergedMetrics are the interval logs a merge adds: the latencies and
// what waiting callers saw.
var mergedMetrics = append(slices.Clone(metrics), results.MetricTimeToLock, results.MetricGaveUp, results.MetricHandoffGap)

// mergeCellLogs adds the segments' interval logs of each metric, writes
// them to out and sets the merged latencies from them.
func mergeCellLogs(merged *results.Run, segs []segCell, out string, info results.CellInfo) error {
	recomputed := map[string]bool{}
	for _, m := range mergedMetrics {
		logs, have, err := segmentLogs(segs, m)
		if err != nil {
			return err
		}
		if len(have) == 0 {
			continue
		}
		if len(have) != len(segs) {
			// Adding some segments' histograms would understate the
			// tail; a partial merge is worse than none.
			return &results.InputError{Field: "hlog", Value: results.LogPath(segs[0].dir, segs[0].c.Info, m), Problem: fmt.Sprintf("cell %s has a %s log in %s but not in every segment", info.ID, m, strings.Join(have, ", ")), Accepted: "segments with the same set of .hlog files"}
		}
		lat, dropped, err := addLogs(logs, m, results.LogPath(out, info, m))
		if dropped > 0 {
			merged.Warnings = append(merged.Warnings, fmt.Sprintf("merge: %d %s values beyond the histogram range were dropped", dropped, m))
		}
		if err != nil {
			return err
		}
		recomputed[m] = true
		setLatency(merged, m, lat)
	}
	if len(segs) > 1 {
		for _, m := range []string{results.MetricAcquire, results.MetricFailed, results.MetricRelease} {
			if !recomputed[m] {
				merged.Warnings = append(merged.Warnings, fmt.Sprintf("merge: no %s interval logs, so its percentiles could not be merged (count and max only)", m))
			}
		}
	}
	return nil
}

// segmentLogs reads metric m's interval log of every segment that has
// one; have names those segments.
func segmentLogs(segs []segCell, m string) (logs [][]*hdrhistogram.Histogram, have []string, err error) {
	for _, s := range segs {
		hs, ok, err := results.ReadLogFile(results.LogPath(s.dir, s.c.Info, m))
		if err != nil {
			return nil, nil, err
		}
		if ok {
			logs = append(logs, hs)
			have = append(have, s.dir)
		}
	}
	return logs, have, nil
}

// addLogs adds concurrent segments' interval logs of metric m interval by
// interval, writes the sum to path and summarizes it; dropped counts the
// values beyond the histogram range.
func addLogs(logs [][]*hdrhistogram.Histogram, m, path string) (lat results.Latency, dropped int64, err error) {
	ivs, dropped := results.MergeIntervals(logs, 0, 0)
	sum, _ := results.Total(ivs)
	lat = results.Summarize(sum)
	return lat, dropped, results.WriteFileShared(path, func(w io.Writer) error { return results.WriteIntervalLog(w, m, ivs) })
}

// setLatency puts a latency recomputed from metric m's logs in its place.
func setLatency(r *results.Run, m string, lat results.Latency) {
	if c := r.Contention; c != nil {
		switch m {
		case results.MetricTimeToLock:
			c.TimeToLock = lat
		case results.MetricGaveUp:
			c.GaveUpWait = &lat
		case results.MetricHandoffGap:
			c.HandoffGap = &lat
		}
	}
	switch m {
	case results.MetricAcquire:
		r.AcquireLatency = lat
	case results.MetricAcquireUncorrected:
		r.AcquireUncorrected = &lat
	case results.MetricFailed:
		r.AcquireFailedLatency = lat
	case results.MetricRelease:
		r.ReleaseLatency = lat
	}
}

func mergeManifests(inputs []*loadedDir, dirs []string) results.Manifest {
	m := inputs[0].Manifest
	m.Cells = nil
	m.Segment = ""
	var hosts []string
	for _, r := range inputs {
		rm := r.Manifest
		if !rm.StartedAt.IsZero() && (m.StartedAt.IsZero() || rm.StartedAt.Before(m.StartedAt)) {
			m.StartedAt = rm.StartedAt
		}
		if rm.FinishedAt.After(m.FinishedAt) {
			m.FinishedAt = rm.FinishedAt
		}
		m.Interrupted = m.Interrupted || rm.Interrupted
		if h := rm.Machine.Hostname; h != "" && !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	if len(inputs) > 1 {
		note := fmt.Sprintf("merged from %d segments (%s)", len(inputs), strings.Join(dirs, ", "))
		if len(hosts) > 0 {
			note += " run on " + strings.Join(hosts, ", ")
		}
		if m.Description != "" {
			m.Description += "; " + note
		} else {
			m.Description = note
		}
	}
	return m
}

// applySegmentRepeats gives a merged cell the repeats of its segments,
// added repeat by repeat (segments run their repeat k together): counts
// and throughput add, percentiles come from the added per-repeat logs,
// and the headline figures become the medians again. Without lined-up
// repeats or their logs the cell keeps the all-repeats figures, and says so.
func applySegmentRepeats(merged *results.Run, dirs []string, cells []*cell, out string, info results.CellInfo) error {
	rep, lats, err := mergeRepeats(dirs, cells, out, info)
	if err != nil {
		return err
	}
	if rep == nil {
		merged.Warnings = append(merged.Warnings, "merge: the segments' repeats do not line up (or their per-repeat logs are missing); figures cover all repeats, without a spread")
		return nil
	}
	merged.Repeats = rep
	merged.Throughput = rep.MedianThroughput()
	merged.AcquireLatency = results.MedianLatency(lats, func(r results.Run) results.Latency { return r.AcquireLatency })
	merged.ReleaseLatency = results.MedianLatency(lats, func(r results.Run) results.Latency { return r.ReleaseLatency })
	return nil
}

// mergeRepeats adds the segments' repeat k into one repeat k and writes its
// added logs to out; nil when the repeats do not line up or logs are missing.
func mergeRepeats(dirs []string, cells []*cell, out string, info results.CellInfo) (*results.Repeats, []results.Run, error) {
	n := cells[0].Run.Repeats.Count
	for _, c := range cells {
		if c.Run.Repeats == nil || c.Run.Repeats.Count != n || len(c.Run.Repeats.Runs) != n {
			return nil, nil, nil
		}
	}
	rep := &results.Repeats{Count: n, Spread: map[string]results.Spread{}, FreshMasters: cells[0].Run.Repeats.FreshMasters}
	var lats []results.Run
	for k := 1; k <= n; k++ {
		lat, ok, err := mergeRepeatLogs(dirs, cells, out, info.ID, k)
		if err != nil || !ok {
			return nil, nil, err
		}
		rr := addRepeatFigures(cells, k)
		a, r := lat.AcquireLatency, lat.ReleaseLatency
		rr.AcquireP50, rr.AcquireP90, rr.AcquireP99, rr.AcquireP999 = a.P50, a.P90, a.P99, a.P999
		rr.ReleaseP50, rr.ReleaseP99 = r.P50, r.P99
		rep.Runs = append(rep.Runs, rr)
		lats = append(lats, lat)
	}
	rep.SpreadFigures()
	return rep, lats, nil
}

// mergeRepeatLogs adds the segments' acquire and release logs of repeat k,
// writes them to out and returns their latencies; ok is false when a
// segment has no such log.
func mergeRepeatLogs(dirs []string, cells []*cell, out, id string, k int) (lat results.Run, ok bool, err error) {
	for _, m := range []string{results.MetricAcquire, results.MetricRelease} {
		var logs [][]*hdrhistogram.Histogram
		for i, c := range cells {
			hs, ok, err := results.ReadLogFile(results.RepeatLogPath(dirs[i], c.Info.ID, k, m))
			if err != nil || !ok {
				return lat, false, err
			}
			logs = append(logs, hs)
		}
		path := results.RepeatLogPath(out, id, k, m)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return lat, false, fmt.Errorf("out: %w", err)
		}
		l, _, err := addLogs(logs, m, path)
		if err != nil {
			return lat, false, err
		}
		setLatency(&lat, m, l)
	}
	return lat, true, nil
}

// addRepeatFigures adds the segments' counts and rates of repeat k.
func addRepeatFigures(cells []*cell, k int) results.RepeatRun {
	rr := results.RepeatRun{Repeat: k}
	for i, c := range cells {
		x := c.Run.Repeats.Runs[k-1]
		if i == 0 || x.StartedAt.Before(rr.StartedAt) {
			rr.StartedAt = x.StartedAt
		}
		rr.MeasuredSeconds = max(rr.MeasuredSeconds, x.MeasuredSeconds)
		rr.CyclesPerSec += x.CyclesPerSec
		rr.AcquiresPerSec += x.AcquiresPerSec
		rr.Tally.Add(x.Tally)
		rr.Violations += x.Violations
		rr.Interrupted = rr.Interrupted || x.Interrupted
	}
	return rr
}
