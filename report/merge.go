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
	if len(dirs) == 0 {
		return &InputError{Field: "DIR", Value: "", Problem: "nothing to merge", Accepted: "one or more results directories"}
	}
	if out == "" {
		return &InputError{Field: "--out", Value: "", Problem: "no output directory", Accepted: "a directory for the merged results"}
	}
	absOut, _ := filepath.Abs(out)
	var inputs []*loadedDir
	for _, d := range dirs {
		if a, _ := filepath.Abs(d); a == absOut {
			return &InputError{Field: "--out", Value: out, Problem: "is one of the input directories", Accepted: "a new directory, so that no segment is overwritten"}
		}
		r, err := loadDir(d, false)
		if err != nil {
			return err
		}
		inputs = append(inputs, r)
	}
	if err := os.MkdirAll(filepath.Join(out, "cells"), 0o755); err != nil {
		return fmt.Errorf("out: %w", err)
	}

	// Cells in order of first appearance.
	type seg struct {
		dir string
		c   *cell
	}
	var order []string
	byID := map[string][]seg{}
	for _, r := range inputs {
		for _, c := range r.Cells {
			if _, ok := byID[c.Info.ID]; !ok {
				order = append(order, c.Info.ID)
			}
			byID[c.Info.ID] = append(byID[c.Info.ID], seg{r.Dir, c})
		}
	}

	man := mergeManifests(inputs, dirs)
	for _, id := range order {
		segs := byID[id]
		first := segs[0].c
		info := first.Info
		if info.File == "" {
			info.File = "cells/" + id + ".json"
		}
		runs := make([]results.Run, len(segs))
		for i, s := range segs {
			runs[i] = s.c.Run
		}
		segNames := make([]string, len(segs))
		for i, s := range segs {
			segNames[i] = s.dir
		}
		merged := mergeRuns(runs, segNames)
		if len(runs) > 1 {
			merged.Warnings = append(merged.Warnings, fmt.Sprintf("merged from %d segments: %s", len(runs), strings.Join(segNames, ", ")))
			merged.Repeats = nil // added up per repeat below, when the segments' repeats line up
		}
		if len(segs) < len(inputs) {
			// Throughput and counts then cover fewer machines than the rest.
			merged.Warnings = append(merged.Warnings, fmt.Sprintf("merge: cell %s is in %d of %d segments (%s)", id, len(segs), len(inputs), strings.Join(segNames, ", ")))
		}
		recomputed := map[string]bool{}
		for _, m := range metrics {
			var logs [][]*hdrhistogram.Histogram
			var have []string
			for _, s := range segs {
				hs, ok, err := readLogFile(results.LogPath(s.dir, s.c.Info, m))
				if err != nil {
					return err
				}
				if ok {
					logs = append(logs, hs)
					have = append(have, s.dir)
				}
			}
			if len(have) == 0 {
				continue
			}
			if len(have) != len(segs) {
				// Adding some segments' histograms would understate the
				// tail; a partial merge is worse than none.
				return &InputError{Field: "hlog", Value: results.LogPath(segs[0].dir, first.Info, m), Problem: fmt.Sprintf("cell %s has a %s log in %s but not in every segment", id, m, strings.Join(have, ", ")), Accepted: "segments with the same set of .hlog files"}
			}
			ivs, dropped := mergeIntervals(logs)
			if dropped > 0 {
				merged.Warnings = append(merged.Warnings, fmt.Sprintf("merge: %d %s values beyond the histogram range were dropped", dropped, m))
			}
			sum, _ := total(ivs)
			lat := results.Summarize(sum)
			recomputed[m] = true
			switch m {
			case results.MetricAcquire:
				merged.AcquireLatency = lat
			case results.MetricAcquireUncorrected:
				merged.AcquireUncorrected = &lat
			case results.MetricFailed:
				merged.AcquireFailedLatency = lat
			case results.MetricRelease:
				merged.ReleaseLatency = lat
			}
			path := results.LogPath(out, info, m)
			if err := writeShared(path, func(w io.Writer) error { return results.WriteIntervalLog(w, m, ivs) }); err != nil {
				return err
			}
		}
		if len(segs) > 1 {
			for _, m := range []string{results.MetricAcquire, results.MetricFailed, results.MetricRelease} {
				if !recomputed[m] {
					merged.Warnings = append(merged.Warnings, fmt.Sprintf("merge: no %s interval logs, so its percentiles could not be merged (count and max only)", m))
				}
			}
		}
		if len(segs) > 1 && first.Run.Repeats != nil {
			cells := make([]*cell, len(segs))
			for i, sg := range segs {
				cells[i] = sg.c
			}
			if err := applySegmentRepeats(&merged, segNames, cells, out, info); err != nil {
				return err
			}
		}
		ci := info
		merged.Cell = &ci
		path := filepath.Join(out, filepath.FromSlash(info.File))
		if err := writeShared(path, func(w io.Writer) error { return results.WriteJSON(w, merged) }); err != nil {
			return err
		}
		man.Cells = append(man.Cells, info)
	}
	return writeShared(filepath.Join(out, "manifest.json"), func(w io.Writer) error { return results.WriteJSON(w, man) })
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

// mergeRuns adds the counts of concurrent segments of one cell. Latencies
// are left to the caller, who recomputes them from the added histograms;
// without histograms they keep only what can be combined soundly.
func mergeRuns(runs []results.Run, dirs []string) results.Run {
	m := runs[0]
	if len(runs) == 1 {
		return m
	}
	m.Throughput = results.Throughput{}
	m.Outcomes = results.Outcomes{PerMaster: map[string]results.MasterOutcomes{}}
	m.Safety = results.Safety{}
	m.Warnings = nil
	m.Events = nil
	var cpuSec, cycles float64
	var client results.Client
	var servers *results.Servers
	for i, r := range runs {
		m.Throughput.CyclesPerSec += r.Throughput.CyclesPerSec
		m.Throughput.AcquiresPerSec += r.Throughput.AcquiresPerSec
		m.Outcomes.Acquired += r.Outcomes.Acquired
		m.Outcomes.NotAcquired += r.Outcomes.NotAcquired
		m.Outcomes.Errors += r.Outcomes.Errors
		for addr, o := range r.Outcomes.PerMaster {
			t := m.Outcomes.PerMaster[addr]
			t.OK += o.OK
			t.Taken += o.Taken
			t.Timeout += o.Timeout
			t.Error += o.Error
			t.Pending += o.Pending
			t.NotSent += o.NotSent
			t.Late += o.Late
			t.LateReleased += o.LateReleased
			m.Outcomes.PerMaster[addr] = t
		}
		m.Safety.Violations += r.Safety.Violations
		m.Safety.MaxConcurrentHolder = max(m.Safety.MaxConcurrentHolder, r.Safety.MaxConcurrentHolder)
		m.Safety.JudgedHolds += r.Safety.JudgedHolds
		m.Safety.HoldsNotJudged += r.Safety.HoldsNotJudged
		if i == 0 || m.Safety.NotJudged != "" && r.Safety.NotJudged != "" {
			m.Safety.NotJudged = r.Safety.NotJudged // nothing judged anywhere: say why
		} else {
			m.Safety.NotJudged = ""
		}
		// Client cost adds; the busiest client decides whether the figure
		// was client-bound.
		cpuSec += r.Client.CPUSeconds
		cycles += r.Throughput.CyclesPerSec * r.MeasuredSeconds
		client.Cores += r.Client.Cores
		client.CPUShare = max(client.CPUShare, r.Client.CPUShare)
		client.ClientBound = client.ClientBound || r.Client.ClientBound
		client.RSSStartMB = max(client.RSSStartMB, r.Client.RSSStartMB)
		client.RSSEndMB = max(client.RSSEndMB, r.Client.RSSEndMB)
		// Every segment saw the same masters' CPU counters over the same
		// window: take the largest reading rather than adding.
		if r.Servers != nil {
			if servers == nil {
				servers = &results.Servers{PerMaster: map[string]float64{}}
			}
			servers.CPUSeconds = max(servers.CPUSeconds, r.Servers.CPUSeconds)
			servers.BusiestShare = max(servers.BusiestShare, r.Servers.BusiestShare)
			for a, v := range r.Servers.PerMaster {
				servers.PerMaster[a] = max(servers.PerMaster[a], v)
			}
		}
		m.MeasuredSeconds = max(m.MeasuredSeconds, r.MeasuredSeconds)
		m.Interrupted = m.Interrupted || r.Interrupted
		if !r.StartedAt.IsZero() && r.StartedAt.Before(m.StartedAt) {
			m.StartedAt = r.StartedAt
		}
		for _, w := range r.Warnings {
			m.Warnings = append(m.Warnings, dirs[i]+": "+w)
		}
		for _, e := range r.Events {
			if !slices.Contains(m.Events, e) {
				m.Events = append(m.Events, e)
			}
		}
	}
	client.CPUSeconds = cpuSec
	if cycles > 0 {
		client.CPUMicrosCycle = cpuSec * 1e6 / cycles
	}
	m.Client = client
	m.OpenLoop = combineOpenLoop(runs, true)
	if servers != nil {
		if cycles > 0 {
			servers.CPUMicrosCycle = servers.CPUSeconds * 1e6 / cycles
		}
		m.Servers = servers
	}
	// Without histograms, percentiles cannot be combined: keep counts and
	// the largest max only.
	m.AcquireLatency = mergeCountsOnly(runs, func(r results.Run) results.Latency { return r.AcquireLatency })
	m.AcquireFailedLatency = mergeCountsOnly(runs, func(r results.Run) results.Latency { return r.AcquireFailedLatency })
	m.ReleaseLatency = mergeCountsOnly(runs, func(r results.Run) results.Latency { return r.ReleaseLatency })
	m.AcquireUncorrected = nil
	return m
}

func mergeCountsOnly(runs []results.Run, f func(results.Run) results.Latency) results.Latency {
	var l results.Latency
	for _, r := range runs {
		x := f(r)
		l.Count += x.Count
		l.Max = max(l.Max, x.Max)
	}
	return l
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
	merged.Throughput = results.Throughput{CyclesPerSec: rep.Spread["cycles_per_sec"].Median, AcquiresPerSec: rep.Spread["acquires_per_sec"].Median}
	merged.AcquireLatency = medianLatency(lats, func(r results.Run) results.Latency { return r.AcquireLatency })
	merged.ReleaseLatency = medianLatency(lats, func(r results.Run) results.Latency { return r.ReleaseLatency })
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
		rr := addRepeatFigures(cells, k)
		var lat results.Run
		for _, m := range []string{results.MetricAcquire, results.MetricRelease} {
			var logs [][]*hdrhistogram.Histogram
			for i, c := range cells {
				hs, ok, err := readLogFile(RepeatLogPath(dirs[i], c.Info.ID, k, m))
				if err != nil || !ok {
					return nil, nil, err
				}
				logs = append(logs, hs)
			}
			ivs, _ := mergeIntervals(logs)
			sum, _ := total(ivs)
			if m == results.MetricAcquire {
				lat.AcquireLatency = results.Summarize(sum)
			} else {
				lat.ReleaseLatency = results.Summarize(sum)
			}
			path := RepeatLogPath(out, info.ID, k, m)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return nil, nil, fmt.Errorf("out: %w", err)
			}
			if err := writeShared(path, func(w io.Writer) error { return results.WriteIntervalLog(w, m, ivs) }); err != nil {
				return nil, nil, err
			}
		}
		a, r := lat.AcquireLatency, lat.ReleaseLatency
		rr.AcquireP50, rr.AcquireP90, rr.AcquireP99, rr.AcquireP999 = a.P50, a.P90, a.P99, a.P999
		rr.ReleaseP50, rr.ReleaseP99 = r.P50, r.P99
		rep.Runs = append(rep.Runs, rr)
		lats = append(lats, lat)
	}
	for _, f := range Figures {
		rep.Spread[f.Name] = NewSpread(Samples(results.Run{Repeats: rep}, f))
	}
	return rep, lats, nil
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
		rr.Acquired += x.Acquired
		rr.NotAcquired += x.NotAcquired
		rr.Errors += x.Errors
		rr.Violations += x.Violations
		rr.Interrupted = rr.Interrupted || x.Interrupted
	}
	return rr
}

// RepeatLogPath is where a sweep keeps repeat k's own log of a cell.
func RepeatLogPath(dir, id string, k int, metric string) string {
	return filepath.Join(dir, "cells", "repeats", fmt.Sprintf("%s.r%d.%s.hlog", id, k, metric))
}
