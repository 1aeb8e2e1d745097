package report

import (
	"fmt"
	"lockbench/results"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// acquisitionCells is the shipped acquisition-compare scenario in small:
// N × mode × wait × workers, each cell repeated; sequential latency grows
// with N, multiplexed barely.
func acquisitionCells() []synthCell {
	var cells []synthCell
	i := 0
	for _, n := range []int{1, 3, 5} {
		for _, mode := range []string{"sequential", "multiplexed"} {
			for _, wait := range []string{"all", "quorum"} {
				for _, w := range []int{1, 64} {
					median := 200.0
					if mode == "sequential" {
						median *= float64(n)
					} else {
						median *= 1 + 0.1*float64(n)
					}
					if wait == "quorum" {
						median *= 0.8
					}
					median *= 1 + float64(w)/32
					config := cfg("none", mode, w, "closed", 0, 100000)
					config["local"], config["wait"] = n, wait
					cells = append(cells, synthCell{
						Index: i, Axes: map[string]string{"local": fmt.Sprint(n), "mode": mode, "wait": wait, "workers": fmt.Sprint(w)},
						Config: config, MedianUs: median, Sigma: 0.3, PerSec: int(float64(w) * 1e6 / median / 4), Seconds: 3,
						Seed: 3, SlowFrom: -1, SlowTo: -1, Repeats: 5, RepeatNoise: 0.05,
					})
					i++
				}
			}
		}
	}
	return cells
}

func TestSpreadInTablesAndPlots(t *testing.T) {
	dir := reportDir(t)
	writeSynthDir(t, dir, "synthetic repeated sweep", sweepCells())
	s, err := Build([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Cells[0].Repeats == nil || s.Cells[0].Repeats.Count != 5 || s.Cells[5].Repeats != nil {
		t.Fatalf("summary repeats: %+v / %+v", s.Cells[0].Repeats, s.Cells[5].Repeats)
	}
	page := mustRead(t, filepath.Join(dir, "report.html"))
	sp := s.Cells[0].Repeats.Spread["cycles_per_sec"]
	want := results.Rate(sp.Median) + " ±" + results.SpreadText(sp)
	if !strings.Contains(page, "<td>"+want+"</td>") || !strings.Contains(page, "medians of their repeats") {
		t.Errorf("report.html cells table lacks %q and its note", want)
	}
	if md := mustRead(t, filepath.Join(dir, "report.md")); !strings.Contains(md, want) {
		t.Errorf("report.md lacks %q", want)
	}
	csvText := mustRead(t, filepath.Join(dir, "cells.csv"))
	if !strings.Contains(strings.SplitN(csvText, "\n", 2)[0], "cycles_per_sec_rel_spread") {
		t.Error("cells.csv has no spread columns")
	}
	// Persistence and mode change throughput far beyond 4% noise.
	if len(s.Differences) == 0 || !strings.Contains(s.Differences[0].Text, "vs none") || s.Differences[0].Figures[0].Verdict != "significant" {
		t.Errorf("differences: %+v", s.Differences)
	}
	if !strings.Contains(page, "against the noise of the repeats") {
		t.Error("report.html verdict lacks the differences")
	}

	res, err := loadDir(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	figs := figures(res, s)
	load := figureNamed(t, figs, "throughput-vs-load")
	bars := 0
	for _, row := range load.Fig.Grid {
		for _, p := range row {
			for _, se := range p.Series {
				if len(se.YLow) > 0 {
					bars++
					for i := range se.Y {
						if se.YLow[i] > se.Y[i] || se.YHigh[i] < se.Y[i] {
							t.Errorf("%s point %d: error bar %v..%v does not hold %v", se.Label, i, se.YLow[i], se.YHigh[i], se.Y[i])
						}
					}
				}
			}
		}
	}
	if bars == 0 || !strings.Contains(load.Caption, "error bars") {
		t.Error("throughput-vs-load has no error bars")
	}
	// A repeated cell's timeline: one line per repeat, laid over each other.
	tl := figureNamed(t, figs, "timeline-000")
	if se := tl.Fig.Grid[0][0].Series; len(se) != 5 || se[4].Label != "repeat 5" || se[4].X[0] != 0 {
		t.Errorf("timeline of a repeated cell: %d series", len(se))
	}
	modes := figureNamed(t, figs, "acquisition-modes")
	if b := modes.Fig.Grid[0][0].Bars; b == nil || len(b.Sets[0].Low) == 0 {
		t.Error("acquisition-modes bars have no error bars")
	}
}

func TestModesAgainstN(t *testing.T) {
	dir := t.TempDir()
	writeSynthDir(t, dir, "acquisition compare", acquisitionCells())
	s, err := Build([]string{dir}, Options{Formats: []string{"png", "html", "json"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := loadDir(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	f := figureNamed(t, figures(res, s), "acquisition-modes")
	row := f.Fig.Grid[0]
	if len(f.Fig.Grid) != 1 || len(row) != 2 || row[0].Title != "1 worker" || row[1].Title != "64 workers" {
		t.Fatalf("want one panel per worker count, got %d rows, %d panels", len(f.Fig.Grid), len(row))
	}
	for _, p := range row {
		if len(p.Series) != 8 { // 2 modes × 2 waits × p50, p99
			t.Errorf("%s: %d lines, want 8", p.Title, len(p.Series))
		}
		for _, se := range p.Series {
			var n []float64
			for _, x := range se.X {
				n = append(n, math.Round(x))
			}
			if !slices.Equal(n, []float64{1, 3, 5}) || len(se.YLow) != 3 {
				t.Errorf("%s %s: x %v, error bars %d", p.Title, se.Label, se.X, len(se.YLow))
			}
			// The trend the figure exists to show.
			if strings.Contains(se.Label, "sequential") && !(se.Y[2] > 3*se.Y[0]) {
				t.Errorf("%s %s: sequential does not grow with N: %v", p.Title, se.Label, se.Y)
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "acquisition-modes.png"))
	if err != nil {
		t.Fatal(err)
	}
	checkPNG(t, "acquisition-modes.png", b)
}

func figureNamed(t *testing.T, figs []figure, name string) figure {
	t.Helper()
	for _, f := range figs {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no figure %s", name)
	return figure{}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Two settings whose cells differ by less than their noise: the verdict
// says so rather than quoting the change as an effect.
func TestNoiseVerdict(t *testing.T) {
	dir := t.TempDir()
	var cells []synthCell
	for i, p := range []string{"none", "aof-everysec"} {
		cells = append(cells, synthCell{Index: i, Axes: map[string]string{"persistence": p}, Config: cfg(p, "multiplexed", 16, "closed", 0, 1000),
			MedianUs: 500, Sigma: 0.3, PerSec: 4000, Seconds: 2, Seed: 5, SlowFrom: -1, SlowTo: -1, Repeats: 5, RepeatNoise: 0.05})
	}
	writeSynthDir(t, dir, "noise", cells)
	s, err := Build([]string{dir}, Options{Formats: []string{"md", "json"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Differences) != 1 {
		t.Fatalf("differences: %+v", s.Differences)
	}
	d := s.Differences[0]
	if !strings.HasPrefix(d.Text, "aof-everysec vs none: ") || d.Figures[0].Verdict != "within noise" || !strings.Contains(d.Text, "cycles/s, within noise") {
		t.Errorf("verdict: %s", d.Text)
	}
	if md := mustRead(t, filepath.Join(dir, "report.md")); !strings.Contains(md, d.Text) {
		t.Error("report.md lacks the verdict line")
	}
}

// With too few repeats to test, a change is weighed against the spread as
// a ratio: a fall to a tenth is beyond a spread of +103% (×2.03), a 3%
// change within a ±5% spread.
func TestNoiseVerdictTooFewRepeats(t *testing.T) {
	f, _ := results.FigureByName("cycles_per_sec")
	r := judge("c", "", f, []float64{1000, 1500, 3600}, []float64{100, 150, 160}, DefaultAlpha)
	if r.Verdict != "too few repeats" {
		t.Fatalf("3+3: %s", r.Verdict)
	}
	if v, text := noiseVerdict(f, r, 100*math.Max(r.Old.RelSpread, r.New.RelSpread)); v != "beyond spread" || !strings.Contains(text, "too few to test") {
		t.Errorf("−90%% against ±%.0f%%: %s: %s", 100*r.Old.RelSpread, v, text)
	}
	r = judge("c", "", f, []float64{950, 1000, 1050}, []float64{970, 1030, 1080}, DefaultAlpha)
	if v, _ := noiseVerdict(f, r, 5); v != "within noise" {
		t.Errorf("+3%% against ±5%%: %s", v)
	}
}

// Segments of a repeated sweep merge repeat by repeat: repeat k's
// throughput is the segments' sum, its percentiles come from their added
// repeat-k logs, and the headline is the median of the merged repeats.
func TestMergeSegmentsWithRepeats(t *testing.T) {
	root := t.TempDir()
	var dirs []string
	for seg := range 2 {
		cells := []synthCell{{Index: 0, Axes: map[string]string{"mode": "multiplexed"}, Config: cfg("none", "multiplexed", 16, "closed", 0, 1000),
			MedianUs: 400 * float64(seg+1), Sigma: 0.3, PerSec: 2000, Seconds: 6, Seed: uint64(seg + 1), SlowFrom: -1, SlowTo: -1, Repeats: 3, RepeatNoise: 0.05}}
		d := filepath.Join(root, fmt.Sprintf("seg%d", seg))
		writeSynthDir(t, d, "segment", cells)
		dirs = append(dirs, d)
	}
	out := filepath.Join(root, "merged")
	if err := Merge(dirs, out); err != nil {
		t.Fatal(err)
	}
	var segRuns [2]results.Run
	for i, d := range dirs {
		readJSON(t, filepath.Join(d, "cells", "000-mode=multiplexed.json"), &segRuns[i])
	}
	var m results.Run
	readJSON(t, filepath.Join(out, "cells", "000-mode=multiplexed.json"), &m)
	if m.Repeats == nil || m.Repeats.Count != 3 {
		t.Fatalf("merged repeats: %+v (warnings %v)", m.Repeats, m.Warnings)
	}
	for k := range 3 {
		want := segRuns[0].Repeats.Runs[k].CyclesPerSec + segRuns[1].Repeats.Runs[k].CyclesPerSec
		if got := m.Repeats.Runs[k].CyclesPerSec; math.Abs(got-want) > 1e-6 {
			t.Errorf("repeat %d: %v cycles/s, want the segments' sum %v", k+1, got, want)
		}
		var logs [][]*hdrhistogram.Histogram
		for _, d := range dirs {
			hs, _, err := results.ReadLogFile(results.RepeatLogPath(d, "000-mode=multiplexed", k+1, results.MetricAcquire))
			if err != nil {
				t.Fatal(err)
			}
			logs = append(logs, hs)
		}
		ivs, _ := results.MergeIntervals(logs, 0, 0)
		sum, _ := results.Total(ivs)
		if got, want := m.Repeats.Runs[k].AcquireP99, results.Summarize(sum).P99; got != want {
			t.Errorf("repeat %d: p99 %v, want %v from the added logs", k+1, got, want)
		}
	}
	if m.Throughput.CyclesPerSec != m.Repeats.Spread["cycles_per_sec"].Median || m.AcquireLatency.P99 != m.Repeats.Spread["acquire_p99"].Median {
		t.Errorf("headline is not the median of the merged repeats")
	}
	if _, err := os.Stat(results.RepeatLogPath(out, "000-mode=multiplexed", 3, results.MetricRelease)); err != nil {
		t.Errorf("merged per-repeat logs: %v", err)
	}
}
