package report

import (
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html"
	"image"
	_ "image/png" // image.Decode of the plots
	"io"
	"lockbench/results"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// reportDir is where TestBuild writes its report: a temp dir, or the
// directory in LOCKBENCH_REPORT_EXAMPLE_DIR so that
// testdata/render-check.sh can open the page in a browser. The test runs
// and checks the same either way.
func reportDir(t *testing.T) string {
	if d := os.Getenv("LOCKBENCH_REPORT_EXAMPLE_DIR"); d != "" {
		// Written over, never emptied: the variable might name a real directory.
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

func TestBuild(t *testing.T) {
	dir := reportDir(t)
	cells := sweepCells()
	writeSynthDir(t, dir, "synthetic sweep", cells)

	s, err := Build([]string{dir}, Options{TargetRate: 30000, Thresholds: mustThresholds(t, "violations==0")})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Cells) != len(cells) {
		t.Fatalf("summary has %d cells, want %d", len(s.Cells), len(cells))
	}

	// Every plot the data calls for, and each a real image.
	want := []string{"latency-spectrum", "throughput-vs-load", "acquisition-modes", "contention"}
	for _, c := range cells {
		want = append(want, fmt.Sprintf("timeline-%03d", c.Index))
	}
	for _, name := range want {
		for _, ext := range []string{".png", ".svg"} {
			if !slices.Contains(s.Plots, name+ext) {
				t.Errorf("plot %s%s not written; plots: %v", name, ext, s.Plots)
			}
		}
	}
	for _, p := range s.Plots {
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		switch filepath.Ext(p) {
		case ".png":
			checkPNG(t, p, b)
		case ".svg":
			checkSVG(t, p, b)
		default:
			t.Errorf("plot %s: unexpected format", p)
		}
	}

	checkHTML(t, dir)
	checkMarkdown(t, dir)

	// summary.json parses back into a Summary.
	var back Summary
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	if len(back.Cells) != len(cells) || len(back.Capacity) == 0 || !back.Thresholds.OK {
		t.Errorf("summary.json: %d cells, %d capacity rows, thresholds ok=%v", len(back.Cells), len(back.Capacity), back.Thresholds.OK)
	}
	for _, f := range back.Files {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("summary.json lists %s: %v", f, err)
		}
	}

	// cells.csv: a header and one row per cell, with the axes as columns.
	f, err := os.Open(filepath.Join(dir, "cells.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("cells.csv: %v", err)
	}
	if len(rows) != len(cells)+1 {
		t.Fatalf("cells.csv has %d rows, want header + %d", len(rows), len(cells))
	}
	for _, col := range []string{"index", "id", "label", "persistence", "mode", "workers", "rate", "cycles_per_sec", "p99_us", "success_ratio", "client_bound"} {
		if !slices.Contains(rows[0], col) {
			t.Errorf("cells.csv header lacks %q: %v", col, rows[0])
		}
	}
	p99col := slices.Index(rows[0], "p99_us")
	if got, want := rows[1][p99col], fmt.Sprintf("%.0f", s.Cells[0].Acquire.P99); got != want {
		t.Errorf("cells.csv p99 of cell 0 = %s, want %s", got, want)
	}

	// The classic percentile distribution per cell.
	for _, c := range s.Cells {
		b, err := os.ReadFile(filepath.Join(dir, c.PercentilesFile))
		if err != nil {
			t.Fatalf("percentiles of %s: %v", c.ID, err)
		}
		if !bytes.Contains(b, []byte("Value\tPercentile\tTotalCount\t1/(1-Percentile)")) || !bytes.Contains(b, []byte("#[Max")) {
			t.Errorf("%s: not a percentile distribution:\n%.300s", c.PercentilesFile, b)
		}
	}

	// The fault cell's timeline shows its events.
	if len(s.Cells[5].Events) != 2 {
		t.Errorf("cell 5 events: %v", s.Cells[5].Events)
	}

	// A report written elsewhere links only to files that are there.
	out := t.TempDir()
	s2, err := Build([]string{dir}, Options{OutDir: out, Formats: []string{"html"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(s2.Plots) != 0 {
		t.Errorf("html alone wrote plot files %v", s2.Plots)
	}
	checkHTML(t, out)
}

func checkPNG(t *testing.T, name string, b []byte) {
	t.Helper()
	if len(b) < 1024 {
		t.Errorf("%s: %d bytes, want ≥ 1 KB", name, len(b))
	}
	img, format, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	if format != "png" {
		t.Errorf("%s: format %s", name, format)
	}
	if r := img.Bounds(); r.Dx() < 300 || r.Dy() < 300 {
		t.Errorf("%s: %dx%d px, want ≥ 300x300", name, r.Dx(), r.Dy())
	}
}

func checkSVG(t *testing.T, name string, b []byte) {
	t.Helper()
	if len(b) < 1024 {
		t.Errorf("%s: %d bytes", name, len(b))
	}
	dec := xml.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := dec.Token()
		if err != nil {
			t.Errorf("%s: no <svg> root: %v", name, err)
			return
		}
		if se, ok := tok.(xml.StartElement); ok {
			if se.Name.Local != "svg" {
				t.Errorf("%s: root element <%s>, want <svg>", name, se.Name.Local)
			}
			break
		}
	}
	// The whole document must parse.
	for {
		if _, err := dec.Token(); err != nil {
			if err.Error() != "EOF" {
				t.Errorf("%s: %v", name, err)
			}
			return
		}
	}
}

var attrRE = regexp.MustCompile(`(?i)\s(src|href)\s*=\s*"([^"]*)"`)

// checkHTML: every src and href is a data: URI that decodes, an anchor on
// the page or a file that exists; nothing is fetched from elsewhere.
func checkHTML(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if strings.Contains(page, "ZgotmplZ") {
		t.Error("report.html: a value was rejected by html/template (ZgotmplZ)")
	}
	for _, bad := range []string{"<script", "<link", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("report.html contains %q: it must stand alone", bad)
		}
	}
	imgs := 0
	for _, m := range attrRE.FindAllStringSubmatch(page, -1) {
		attr, v := strings.ToLower(m[1]), html.UnescapeString(m[2])
		switch {
		case strings.HasPrefix(v, "data:"):
			if attr != "src" {
				t.Errorf("data URI in %s", attr)
			}
			payload, ok := strings.CutPrefix(v, "data:image/png;base64,")
			if !ok {
				t.Errorf("data URI is not a base64 PNG: %.40s", v)
				continue
			}
			png, err := base64.StdEncoding.DecodeString(payload)
			if err != nil {
				t.Errorf("data URI: %v", err)
				continue
			}
			checkPNG(t, "embedded image", png)
			imgs++
		case strings.HasPrefix(v, "#"):
			if !strings.Contains(page, `id="`+v[1:]+`"`) {
				t.Errorf("report.html links to %s, which is not on the page", v)
			}
		default:
			u, err := url.Parse(v)
			if err != nil || u.Scheme != "" || u.Host != "" || filepath.IsAbs(u.Path) {
				t.Errorf("report.html refers to %q: only relative files and data URIs are allowed", v)
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(u.Path))); err != nil {
				t.Errorf("report.html refers to %q: %v", v, err)
			}
		}
	}
	if imgs == 0 {
		t.Error("report.html embeds no images")
	}
	if n := strings.Count(page, "<img "); n != imgs {
		t.Errorf("report.html: %d <img> but %d embedded PNGs", n, imgs)
	}
}

var mdLinkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

func checkMarkdown(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	images := 0
	for _, m := range mdLinkRE.FindAllStringSubmatch(string(b), -1) {
		p, err := url.PathUnescape(m[1])
		if err != nil {
			t.Errorf("report.md link %q: %v", m[1], err)
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			t.Errorf("report.md links to %q: %v", m[1], err)
		}
		if strings.HasSuffix(p, ".png") {
			images++
		}
	}
	if images == 0 {
		t.Error("report.md shows no PNG plots")
	}
}

// TestMergeAddsHistograms: two segments of one cell with disjoint samples
// merge into exactly the histogram of all samples.
func TestMergeAddsHistograms(t *testing.T) {
	base := t.TempDir()
	a, b, out := filepath.Join(base, "seg1"), filepath.Join(base, "seg2"), filepath.Join(base, "merged")
	cell := func(seed uint64, median float64) synthCell {
		return synthCell{Index: 0, Axes: map[string]string{"mode": "multiplexed"}, Config: cfg("none", "multiplexed", 16, "closed", 0, 100000),
			MedianUs: median, Sigma: 0.6, PerSec: 3000, Seconds: 6, FailedPerS: 3, ClientShare: 0.3, Seed: seed, SlowFrom: -1, SlowTo: -1}
	}
	other := synthCell{Index: 1, Axes: map[string]string{"mode": "sequential"}, Config: cfg("none", "sequential", 16, "closed", 0, 100000),
		MedianUs: 900, Sigma: 0.5, PerSec: 1000, Seconds: 6, ClientShare: 0.3, Seed: 3, SlowFrom: -1, SlowTo: -1}
	sa := writeSynthDir(t, a, "sweep", []synthCell{cell(1, 400), other})
	sb := writeSynthDir(t, b, "sweep", []synthCell{cell(2, 700), other})

	if err := Merge([]string{a, b}, out); err != nil {
		t.Fatal(err)
	}
	id := cell(1, 0).id()
	all := results.NewHistogram()
	for _, v := range append(sa[id], sb[id]...) {
		must(t, all.RecordValue(v))
	}

	f, err := os.Open(filepath.Join(out, "cells", id+".acquire.hlog"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	merged := results.NewHistogram()
	lr := hdrhistogram.NewHistogramLogReader(f)
	intervals := 0
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		intervals++
		merged.Merge(h)
	}
	if intervals != 6 {
		t.Errorf("merged log has %d intervals, want 6 (segments ran at the same time)", intervals)
	}
	if got, want := merged.TotalCount(), int64(len(sa[id])+len(sb[id])); got != want {
		t.Fatalf("merged count %d, want %d", got, want)
	}
	for _, q := range []float64{50, 99, 99.9} {
		got, want := float64(merged.ValueAtQuantile(q)), float64(all.ValueAtQuantile(q))
		if math.Abs(got-want)/want > 0.001 {
			t.Errorf("merged p%v = %v µs, single histogram of all samples %v µs", q, got, want)
		}
	}

	// The merged cell JSON has latencies recomputed from the merged
	// histogram and counts added.
	var run, ra, rb results.Run
	readJSON(t, filepath.Join(out, "cells", id+".json"), &run)
	readJSON(t, filepath.Join(a, "cells", id+".json"), &ra)
	readJSON(t, filepath.Join(b, "cells", id+".json"), &rb)
	if run.AcquireLatency.P99 != float64(all.ValueAtQuantile(99)) || run.AcquireLatency.Count != all.TotalCount() {
		t.Errorf("merged JSON acquire latency %+v, want p99 %d count %d", run.AcquireLatency, all.ValueAtQuantile(99), all.TotalCount())
	}
	if run.Outcomes.Acquired != ra.Outcomes.Acquired+rb.Outcomes.Acquired {
		t.Errorf("acquired %d, want %d", run.Outcomes.Acquired, ra.Outcomes.Acquired+rb.Outcomes.Acquired)
	}
	if d := run.Throughput.CyclesPerSec - (ra.Throughput.CyclesPerSec + rb.Throughput.CyclesPerSec); math.Abs(d) > 1e-6 {
		t.Errorf("merged throughput off by %v", d)
	}
	if run.Outcomes.PerMaster["127.0.0.1:7001"].OK != ra.Outcomes.PerMaster["127.0.0.1:7001"].OK+rb.Outcomes.PerMaster["127.0.0.1:7001"].OK {
		t.Error("per-master outcomes not added")
	}

	// Report over both segments: Build merges into OutDir first.
	out2 := filepath.Join(base, "report")
	s, err := Build([]string{a, b}, Options{OutDir: out2, Formats: []string{"json", "csv"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Cells) != 2 || s.Cells[0].Acquire.P99 != float64(all.ValueAtQuantile(99)) {
		t.Errorf("report over segments: %d cells, p99 %v", len(s.Cells), s.Cells[0].Acquire.P99)
	}
	if !strings.Contains(s.Description, "merged from 2 segments") {
		t.Errorf("description %q does not say it was merged", s.Description)
	}
	if _, err := Build([]string{a, b}, Options{}); err == nil || !strings.Contains(err.Error(), "--out") {
		t.Errorf("several dirs without an output dir: %v", err)
	}
	if err := Merge([]string{a, b}, a); err == nil {
		t.Error("merging into an input directory must fail")
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestIntervalLogReadBack: the .hlog files read back with hdrhistogram-go's
// reader give the intervals that were written, and so do the logs this
// package writes.
func TestIntervalLogReadBack(t *testing.T) {
	dir := t.TempDir()
	c := synthCell{Index: 0, Axes: map[string]string{"mode": "multiplexed"}, Config: cfg("none", "multiplexed", 4, "closed", 0, 10),
		MedianUs: 500, Sigma: 0.5, PerSec: 700, Seconds: 4, FailedPerS: 1, Seed: 5, SlowFrom: 1, SlowTo: 2}
	writeSynthDir(t, dir, "x", []synthCell{c})
	info := results.CellInfo{ID: c.id(), File: "cells/" + c.id() + ".json"}
	path := results.LogPath(dir, info, results.MetricAcquire)

	read := func(path string) []*hdrhistogram.Histogram {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		lr := hdrhistogram.NewHistogramLogReader(f)
		var out []*hdrhistogram.Histogram
		for {
			h, err := lr.NextIntervalHistogram()
			if err != nil {
				t.Fatal(err)
			}
			if h == nil {
				return out
			}
			out = append(out, h)
		}
	}
	got := read(path)
	if len(got) != 4 {
		t.Fatalf("%d intervals, want 4", len(got))
	}
	for i, h := range got {
		want := int64(700)
		if i == 1 {
			want = 70 // the slow second
		}
		if h.TotalCount() != want || h.EndTimeMs()-h.StartTimeMs() != 1000 {
			t.Errorf("interval %d: count %d tag %q length %d ms", i, h.TotalCount(), h.Tag(), h.EndTimeMs()-h.StartTimeMs())
		}
		if i > 0 && h.StartTimeMs() != got[i-1].EndTimeMs() {
			t.Errorf("interval %d starts at %d, previous ended at %d", i, h.StartTimeMs(), got[i-1].EndTimeMs())
		}
	}

	// Our own writer round-trips too.
	out := filepath.Join(dir, "copy.hlog")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	must(t, results.WriteIntervalLog(f, results.MetricAcquire, got))
	must(t, f.Close())
	again := read(out)
	if len(again) != len(got) {
		t.Fatalf("round trip: %d intervals, want %d", len(again), len(got))
	}
	for i := range got {
		if !again[i].Equals(got[i]) || again[i].StartTimeMs() != got[i].StartTimeMs() || again[i].EndTimeMs() != got[i].EndTimeMs() {
			t.Errorf("round trip interval %d differs", i)
		}
		// The synthetic input is tagged as older versions wrote it; the copy
		// is untagged (one metric per file).
		if again[i].Tag() != "" {
			t.Errorf("round trip interval %d tagged %q", i, again[i].Tag())
		}
	}
}

// TestCapacity: rate steps whose p99 crosses the SLO at 40 000/s put the
// knee at 20 000/s; a client-bound configuration says so.
func TestCapacity(t *testing.T) {
	dir := t.TempDir()
	var cells []synthCell
	for i, r := range []float64{5000, 10000, 20000, 40000} {
		median := 800.0
		if r == 40000 {
			median = 8000 // p99 ≈ 22 ms
		}
		cells = append(cells, synthCell{Index: i, Axes: map[string]string{"driver": "lockbench", "rate": fmt.Sprint(r)},
			Config: cfg("none", "multiplexed", 256, "open", r, 100000), MedianUs: median, Sigma: 0.4,
			PerSec: int(r / 10), Seconds: 3, ClientShare: 0.3, Seed: 9, SlowFrom: -1, SlowTo: -1})
	}
	for i, r := range []float64{5000, 10000, 20000} {
		c := synthCell{Index: 4 + i, Axes: map[string]string{"driver": "redsync", "rate": fmt.Sprint(r)},
			Config: cfg("none", "multiplexed", 256, "open", r, 100000), MedianUs: 900, Sigma: 0.4,
			PerSec: int(r / 10), Seconds: 3, ClientShare: 0.5, Seed: 9, SlowFrom: -1, SlowTo: -1,
			CommandCost: &results.CommandCost{CommandMicrosCycle: 100, ProjectedRate: 10_000, CPUMicrosCycle: 400, ProjectedRateCPU: 2500}}
		switch r {
		case 10000:
			c.ClientShare = 0.92 // the load generator ran out of CPU
		case 20000:
			// Past the knee on a box that lockbench and the masters filled,
			// while no master came near a core: the machine, a lower bound.
			c.MedianUs = 8000
			c.Machine = &results.CPUSplit{Cores: 8, BusyShare: 0.97, ClientShare: 0.5, ServersShare: 0.4, OtherShare: 0.07,
				MastersShareMachine: true, MasterCoreShare: map[string]float64{"a": 0.5}}
		}
		cells = append(cells, c)
	}
	writeSynthDir(t, dir, "capacity", cells)
	s, err := Build([]string{dir}, Options{TargetRate: 3000, Formats: []string{"json"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Capacity) != 2 {
		t.Fatalf("capacity rows %+v, want one per driver", s.Capacity)
	}
	lb, rs := s.Capacity[0], s.Capacity[1]
	if lb.Config != "driver=lockbench" || rs.Config != "driver=redsync" {
		t.Fatalf("configurations %q, %q", lb.Config, rs.Config)
	}
	knee := s.Cells[2]
	if s.Cells[3].MeetsSLO || !knee.MeetsSLO {
		t.Fatalf("SLO: 20000/s met=%v (p99 %v µs), 40000/s met=%v (p99 %v µs)", knee.MeetsSLO, knee.Acquire.P99, s.Cells[3].MeetsSLO, s.Cells[3].Acquire.P99)
	}
	if lb.KneeLoad != 20000 || lb.MaxRate != knee.CyclesPerSec || !lb.KneeFound || lb.ClientBound || !strings.Contains(lb.Note, "server capacity") ||
		!lb.ServerCapacity || lb.LowerBound || lb.Limit == nil || lb.Limit.By != results.LimitLatency || lb.GroupsFrom != "knee" {
		t.Errorf("lockbench capacity %+v, want knee at 20000 offered/s, %v cycles/s, a server capacity set by latency", lb, knee.CyclesPerSec)
	}
	wantHead := (knee.CyclesPerSec/3000 - 1) * 100
	if lb.HeadroomPct == nil || math.Abs(*lb.HeadroomPct-wantHead) > 1e-9 {
		t.Errorf("headroom %v, want %v", lb.HeadroomPct, wantHead)
	}
	if lb.Groups == nil || *lb.Groups != int(math.Ceil(3000/knee.CyclesPerSec)) {
		t.Errorf("lock groups %v, want ceil(3000/%v)", lb.Groups, knee.CyclesPerSec)
	}
	if !rs.ClientBound || rs.KneeLoad != 10000 || !rs.KneeFound || rs.Limit == nil || rs.Limit.By != results.LimitMachine || !rs.LowerBound || rs.ServerCapacity ||
		!strings.Contains(rs.Note, "lower bound: limited by the shared machine at 20,000 offered/s") || !strings.Contains(rs.Note, "projects 2,500 cycles/s") {
		t.Errorf("redsync capacity %+v: want a lower bound at 10000/s, limited by the machine, with the projection beside", rs)
	}
	// Never from a knee the machine set (3000 / 1000 cycles/s would be 3):
	// from the projection, 3000 / 2500.
	if rs.Groups == nil || *rs.Groups != 2 || rs.GroupsFrom != "projection" || rs.ProjectedRate != 2500 || rs.ProjectionBasis != "cpu" {
		t.Errorf("redsync lock groups %v from %q (projection %v %s), want 2 from the projection", rs.Groups, rs.GroupsFrom, rs.ProjectedRate, rs.ProjectionBasis)
	}
	// A higher SLO moves the knee.
	s, err = Build([]string{dir}, Options{SLOP99: 30 * time.Millisecond, Formats: []string{"json"}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Capacity[0].KneeLoad != 40000 || s.Capacity[0].KneeFound || s.Capacity[0].HeadroomPct != nil {
		t.Errorf("with a 30 ms SLO: %+v, want every step within it and no target figures", s.Capacity[0])
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	_, err := Build([]string{dir}, Options{})
	var ie *results.InputError
	if err == nil || !asInputError(err, &ie) || ie.Field != "DIR" {
		t.Errorf("directory without a manifest: %v", err)
	}
	writeSynthDir(t, dir, "x", []synthCell{{Index: 0, Config: cfg("none", "multiplexed", 1, "closed", 0, 1), MedianUs: 300, Sigma: 0.3, PerSec: 10, Seconds: 2, SlowFrom: -1, SlowTo: -1}})
	_, err = Build([]string{dir}, Options{Formats: []string{"pdf"}})
	if err == nil || !asInputError(err, &ie) || ie.Field != "--format" || !strings.Contains(err.Error(), "html, md, json, csv, png, svg") {
		t.Errorf("bad format: %v", err)
	}
}

func asInputError(err error, target **results.InputError) bool {
	ie, ok := err.(*results.InputError)
	if ok {
		*target = ie
	}
	return ok
}

// TestSparseInput: one cell draws only the plots it has data for, and cells
// without interval logs still get tables (and no empty plots).
func TestSparseInput(t *testing.T) {
	dir := t.TempDir()
	writeSynthDir(t, dir, "one", []synthCell{{Index: 0, Config: cfg("none", "multiplexed", 16, "closed", 0, 1000),
		MedianUs: 400, Sigma: 0.5, PerSec: 500, Seconds: 3, ClientShare: 0.2, Seed: 1, SlowFrom: -1, SlowTo: -1}})
	s, err := Build([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"latency-spectrum.png", "latency-spectrum.svg", "timeline-000.png", "timeline-000.svg"}
	if !slices.Equal(s.Plots, want) {
		t.Errorf("plots %v, want %v", s.Plots, want)
	}
	if len(s.Capacity) != 1 || s.Capacity[0].Config != "all cells" || !strings.Contains(s.Capacity[0].Note, "lower bound") {
		t.Errorf("capacity %+v", s.Capacity)
	}
	checkHTML(t, dir)

	logs, _ := filepath.Glob(filepath.Join(dir, "cells", "*.hlog"))
	for _, l := range logs {
		must(t, os.Remove(l))
	}
	for _, p := range s.Plots {
		must(t, os.Remove(filepath.Join(dir, p)))
	}
	s, err = Build([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Plots) != 0 || s.Cells[0].PercentilesFile != "" || s.Cells[0].Acquire.P99 == 0 {
		t.Errorf("without logs: plots %v, percentiles %q, p99 %v", s.Plots, s.Cells[0].PercentilesFile, s.Cells[0].Acquire.P99)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "No plot had data to show") || strings.Contains(string(b), "<img") {
		t.Error("report.html without logs should say there are no plots and show no image")
	}
}

// Chaos cells (a protected resource, fault events) get a safety table in
// the HTML and the Markdown; plain sweeps do not.
func TestSafetyTable(t *testing.T) {
	dir := t.TempDir()
	writeSynthDir(t, dir, "chaos", []synthCell{
		{Index: 0, Config: cfg("none", "multiplexed", 16, "closed", 0, 1000), MedianUs: 400, Sigma: 0.5, PerSec: 500, Seconds: 3, ClientShare: 0.2, Seed: 1, SlowFrom: -1, SlowTo: -1},
		{Index: 1, Config: cfg("aof-always", "multiplexed", 16, "closed", 0, 1000), MedianUs: 900, Sigma: 0.5, PerSec: 300, Seconds: 3, ClientShare: 0.2, Seed: 2, SlowFrom: -1, SlowTo: -1},
	})
	if _, err := Build([]string{dir}, Options{}); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	if strings.Contains(string(page), "Safety under faults") {
		t.Fatal("a sweep without faults got a safety table")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "cells", "00*.json"))
	sort.Strings(files)
	for i, f := range files {
		var r results.Run
		b, _ := os.ReadFile(f)
		must(t, json.Unmarshal(b, &r))
		r.Safety = results.Safety{Violations: int64(7 * (1 - i)), ResourceChecked: true, AcknowledgedWrites: 1000, LostUpdates: int64(3 * (1 - i)),
			Fencing: i == 1, StaleWritesRejected: int64(5 * i), AvailabilityOps: 0.9, AvailabilityTime: 0.75}
		r.Events = []results.Event{{AtSeconds: 1, Kind: "crash", Target: "master 0"}, {AtSeconds: 1.2, Kind: "restart", Target: "master 0"}}
		if i == 1 { // cell 0 has no verdict: unchecked
			r.Safety.Verdict, r.Safety.NotJudged = "not judged", "scheduled fault \"crash at 3s\" did not happen"
		}
		must(t, results.WriteFileAtomic(f, func(w io.Writer) error { return results.WriteJSON(w, r) }))
	}
	s, err := Build([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	page, _ = os.ReadFile(filepath.Join(dir, "report.html"))
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{"Safety under faults", "crash, restart", ">7<", ">" + results.Pct(0.75) + "<"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if !strings.Contains(string(md), "| 1 | ") || !strings.Contains(string(md), "| crash, restart | ") || !strings.Contains(string(md), "| yes | 5 |") {
		t.Errorf("report.md safety table:\n%s", md)
	}
	// A cell without a verdict is unchecked, never met, and its violations
	// are still red; a cell that judged nothing is red with the reason.
	for _, want := range []string{`class="bad">7<`, `>unchecked<`, `bad">NOT JUDGED: scheduled fault &#34;crash at 3s&#34; did not happen<`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	for _, want := range []string{"| **7** |", "| unchecked |", "| **NOT JUDGED: scheduled fault \"crash at 3s\" did not happen** |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(string(page)+string(md), ">met<") || strings.Contains(string(md), "| met |") {
		t.Error("a cell was shown as met")
	}
	// Chaos cells alone get no capacity plan (their load is contention by
	// design): not in the summary, the HTML or the Markdown.
	if len(s.Capacity) != 0 {
		t.Errorf("capacity for chaos cells: %+v", s.Capacity)
	}
	for _, no := range []string{"Capacity planning", "SLO used for capacity"} {
		if strings.Contains(string(page), no) || strings.Contains(string(md), no) {
			t.Errorf("a chaos report shows %q", no)
		}
	}
}

// Runs of different scenarios are put side by side, not added: a cell id
// both have is two cells, each under its run's name.
func TestMergeKeepsOtherScenariosApart(t *testing.T) {
	base := t.TempDir()
	a, b, out := filepath.Join(base, "etcd"), filepath.Join(base, "redis"), filepath.Join(base, "merged")
	cell := func(seed uint64, median float64) synthCell {
		return synthCell{Index: 0, Axes: map[string]string{"mode": "multiplexed"}, Config: cfg("none", "multiplexed", 16, "closed", 0, 100000),
			MedianUs: median, Sigma: 0.6, PerSec: 3000, Seconds: 6, ClientShare: 0.3, Seed: seed, SlowFrom: -1, SlowTo: -1}
	}
	writeSynthDir(t, a, "chaos-etcd", []synthCell{cell(1, 400)})
	writeSynthDir(t, b, "chaos-redis", []synthCell{cell(2, 700)})
	if err := Merge([]string{a, b}, out); err != nil {
		t.Fatal(err)
	}
	d, err := loadDir(out, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Cells) != 2 {
		t.Fatalf("%d cells; want the two runs' cells side by side", len(d.Cells))
	}
	for i, name := range []string{"chaos-etcd", "chaos-redis"} {
		c := d.Cells[i]
		if !strings.HasPrefix(c.Info.ID, name+"-") || !strings.HasPrefix(c.Info.Label, name+": ") {
			t.Errorf("cell %d: id %q label %q; want them under %s", i, c.Info.ID, c.Info.Label, name)
		}
		for _, w := range c.Run.Warnings {
			if strings.Contains(w, "segments") {
				t.Errorf("cell %d warns of segments, though the runs were put side by side: %s", i, w)
			}
		}
		if c.Run.Outcomes.Acquired == 0 || c.Totals[results.MetricAcquire] == nil || c.Totals[results.MetricAcquire].TotalCount() != c.Run.AcquireLatency.Count {
			t.Errorf("cell %d: %d acquired, its own log not kept (%v)", i, c.Run.Outcomes.Acquired, c.Totals[results.MetricAcquire] != nil)
		}
	}
}
