package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"lockbench/report/plots"
	"lockbench/results"
)

// figure is one plot of the report, named by its file stem.
type figure struct {
	Name    string
	Title   string
	Caption string // what this shows, one line under the plot
	Fig     *plots.Figure
	Cell    int // timeline: index into the cells, else -1
}

func renderFigure(f figure, format string) ([]byte, error) {
	b, err := plots.Render(f.Fig, format)
	if err != nil {
		return nil, fmt.Errorf("plot %s: %w", f.Name, err)
	}
	return b, nil
}

// figures builds every plot that has something to show.
func figures(res *loadedDir, s *Summary) []figure {
	var out []figure
	add := func(f *figure) {
		if f != nil {
			out = append(out, *f)
		}
	}
	add(spectrumFigure(res.Cells))
	add(loadFigure(res.Cells, s))
	add(modesFigure(res.Cells, s))
	add(contentionFigure(res.Cells, s))
	add(waitingFigure(res.Cells, s))
	add(priceFigure(s.Price))
	for i, c := range res.Cells {
		add(timelineFigure(c, i, s))
	}
	return out
}

// legendLabel keeps legend entries to one readable line.
func legendLabel(s string) string { return plots.Truncate(s, 60) }

var spectrumTicks = []plots.Tick{
	{Value: 2, Label: "50%"}, {Value: 10, Label: "90%"}, {Value: 100, Label: "99%"},
	{Value: 1e3, Label: "99.9%"}, {Value: 1e4, Label: "99.99%"}, {Value: 1e5, Label: "99.999%"}, {Value: 1e6, Label: "99.9999%"},
}

func spectrumFigure(cells []*cell) *figure {
	p := &plots.Panel{
		X: plots.Axis{Label: "percentile", Log: true, Min: plots.F(1), Max: plots.F(100), Ticks: spectrumTicks},
		Y: plots.Axis{Label: "acquire latency (ms)"},
	}
	var ys []float64
	for i, c := range cells {
		h := c.Totals[results.MetricAcquire]
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		xs, vs := spectrumLine(h)
		if len(xs) < 2 {
			continue
		}
		ys = append(ys, vs...)
		p.Series = append(p.Series, plots.Series{Label: legendLabel(c.Info.Label), X: xs, Y: vs, Color: i})
	}
	if len(p.Series) == 0 {
		return nil
	}
	p.Y.Log = plots.SpansDecades(ys...)
	return &figure{
		Name:    "latency-spectrum",
		Title:   "Acquire latency by percentile",
		Caption: "Latency of successful acquires (ms) at each percentile, one line per cell, from the HDR histograms of the whole measured window; the right end is the tail (99.99% = 1 acquire in 10 000 was slower).",
		Fig:     &plots.Figure{Title: "Acquire latency by percentile", Grid: [][]*plots.Panel{{p}}, Width: 900, Height: 520},
		Cell:    -1,
	}
}

// loadFigure draws throughput and acquire p99 against load, a column for
// each of closed and open loop that has a load sweep.
func loadFigure(cells []*cell, s *Summary) *figure {
	sums := summariesByCell(cells, s.Cells)
	var cols [][2]*plots.Panel
	colour := 0 // across both loads, so no two lines share a colour
	for _, kind := range []string{"closed", "open"} {
		var mine []*cell
		for _, c := range cells {
			if c.Set.Load == kind {
				mine = append(mine, c)
			}
		}
		if tp, lat := loadPanels(mine, kind, sums, s.SLO, &colour); tp != nil {
			cols = append(cols, [2]*plots.Panel{tp, lat})
		}
	}
	if len(cols) == 0 {
		return nil
	}
	grid := [][]*plots.Panel{make([]*plots.Panel, len(cols)), make([]*plots.Panel, len(cols))}
	for i, c := range cols {
		grid[0][i], grid[1][i] = c[0], c[1]
	}
	return &figure{
		Name:    "throughput-vs-load",
		Title:   "Throughput and p99 against load",
		Caption: "Top: lock cycles per second achieved (acquire + release); bottom: acquire p99 (ms), against workers (closed loop) or offered acquires/s (open loop). One line per configuration; rings mark the knee, the highest rate still within the SLO (dashed red line)." + errorBarNote(cells),
		Fig:     &plots.Figure{Title: "Throughput and acquire p99 against load", Grid: grid, Width: 620 * float64(len(cols)), Height: 760},
		Cell:    -1,
	}
}

// loadPanels are the throughput and p99 panels of one load kind (closed
// or open), nil when no configuration has two load steps; lat is nil when
// no cell acquired anything. colour is the next line colour.
func loadPanels(cells []*cell, kind string, sums map[*cell]CellSummary, slo SLO, colour *int) (tp, lat *plots.Panel) {
	tp = &plots.Panel{Y: plots.Axis{Label: "throughput (cycles/s)", Min: plots.F(0)}}
	lat = &plots.Panel{Y: plots.Axis{Label: "acquire p99 (ms)"}}
	tp.Title, lat.Title = "Closed loop", "Closed loop"
	tp.X.Label, lat.X.Label = "workers", "workers"
	if kind == "open" {
		tp.Title, lat.Title = "Open loop", "Open loop"
		tp.X.Label, lat.X.Label = "offered rate (acquires/s)", "offered rate (acquires/s)"
	}
	xs, p99s, knees := addLoadLines(tp, lat, groupBy(cells, loadSkip), sums, colour)
	if len(tp.Series) == 0 {
		return nil, nil
	}
	addKnees(tp, lat, knees)
	if kind == "open" {
		lo, hi := minMax(xs)
		tp.Series = append(tp.Series, plots.Series{Label: "offered rate (ideal)", X: []float64{lo, hi}, Y: []float64{lo, hi}, Color: 7, Dashed: true})
	}
	lat.HLines = p99SLOLine(slo)
	logX := plots.SpansDecades(xs...)
	tp.X.Log, lat.X.Log = logX, logX
	tp.X.Ticks = valueTicks(xs)
	lat.X.Ticks = tp.X.Ticks
	// One x range for both panels, even where a step has no p99.
	lo, hi := minMax(xs)
	tp.X.Min, tp.X.Max = plots.F(lo), plots.F(hi)
	lat.X.Min, lat.X.Max = tp.X.Min, tp.X.Max
	dodge(tp.Series, logX, lo, hi)
	dodge(lat.Series, logX, lo, hi)
	lat.Y.Log = plots.SpansDecades(append(p99s, slo.AcquireP99Micros/1000)...)
	if len(p99s) == 0 {
		lat = nil // no cell acquired anything: no latency to draw
	}
	return tp, lat
}

// addLoadLines adds one line per configuration with at least two load
// steps to tp and lat; it returns every step's load and p99 (ms) and the
// configurations' knees.
func addLoadLines(tp, lat *plots.Panel, groups []*group, sums map[*cell]CellSummary, colour *int) (xs, p99s []float64, knees []*CellSummary) {
	for _, g := range groups {
		t, l, knee := loadLines(g, sums)
		if distinctFloats(t.X) < 2 {
			continue
		}
		t.Label, t.Color = legendLabel(g.Label), *colour
		l.Label, l.Color = t.Label, *colour
		tp.Series, lat.Series = append(tp.Series, t), append(lat.Series, l)
		*colour++
		if *colour == 7 { // grey is kept for the knee and the ideal line
			*colour++
		}
		xs, p99s = append(xs, t.X...), append(p99s, l.Y...)
		if knee != nil {
			knees = append(knees, knee)
		}
	}
	return xs, p99s, knees
}

// addKnees rings the knees on both panels.
func addKnees(tp, lat *plots.Panel, knees []*CellSummary) {
	if len(knees) == 0 {
		return
	}
	var kneeX, kneeY, kneeP []float64
	for _, k := range knees {
		kneeX = append(kneeX, loadOf(*k))
		kneeY = append(kneeY, k.CyclesPerSec)
		kneeP = append(kneeP, k.Acquire.P99/1000)
	}
	const kneeLabel = "knee: most cycles/s within the SLO"
	tp.Series = append(tp.Series, plots.Series{Label: kneeLabel, X: kneeX, Y: kneeY, Color: 7, Glyph: 1})
	lat.Series = append(lat.Series, plots.Series{Label: kneeLabel, X: kneeX, Y: kneeP, Color: 7, Glyph: 1})
}

// p99SLOLine marks the SLO's acquire p99 (ms) on a latency panel.
func p99SLOLine(slo SLO) []plots.Marker {
	return []plots.Marker{{At: slo.AcquireP99Micros / 1000, Tag: "SLO", Legend: "SLO: acquire p99 ≤ " + results.FormatMicros(slo.AcquireP99Micros), Color: 3}}
}

// loadLines are one configuration's throughput and p99 against load, with
// error bars when its cells repeated, and its knee (the most cycles/s
// within the SLO).
func loadLines(g *group, sums map[*cell]CellSummary) (tp, lat plots.Series, knee *CellSummary) {
	sort.SliceStable(g.Cells, func(i, j int) bool { return g.Cells[i].Set.loadValue() < g.Cells[j].Set.loadValue() })
	var x, y, px, p, ylo, yhi, plo, phi []float64
	for _, c := range g.Cells {
		cs := sums[c]
		lv := c.Set.loadValue()
		if lv <= 0 {
			continue
		}
		x, y = append(x, lv), append(y, cs.CyclesPerSec)
		lo, hi := spreadBounds(cs, "cycles_per_sec", cs.CyclesPerSec, 1)
		ylo, yhi = append(ylo, lo), append(yhi, hi)
		if cs.Acquire.P99 > 0 { // no successful acquire: no p99
			px, p = append(px, lv), append(p, cs.Acquire.P99/1000)
			lo, hi := spreadBounds(cs, "acquire_p99", cs.Acquire.P99, 1000)
			plo, phi = append(plo, lo), append(phi, hi)
		}
		if cs.MeetsSLO && (knee == nil || cs.CyclesPerSec > knee.CyclesPerSec) {
			knee = &cs
		}
	}
	tp = withErrors(plots.Series{X: x, Y: y, Points: true}, ylo, yhi)
	lat = withErrors(plots.Series{X: px, Y: p, Points: true}, plo, phi)
	return tp, lat, knee
}

// modesFigure compares sequential and multiplexed acquisition: bars of
// p50 and p99 per configuration, or lines against N when N was swept.
func modesFigure(cells []*cell, s *Summary) *figure {
	modes := map[string]bool{}
	for _, c := range cells {
		modes[c.Set.Mode] = true
	}
	if !modes["sequential"] || !modes["multiplexed"] {
		return nil
	}
	if distinctN(cells) >= 2 {
		if f := modesByNFigure(cells, s); f != nil {
			return f
		}
	}
	pairs := modePairs(cells, summariesByCell(cells, s.Cells))
	if len(pairs) == 0 {
		return nil
	}
	bars, repeated := modeBars(pairs)
	p := &plots.Panel{
		X:    plots.Axis{Label: "masters (N) and other settings"},
		Y:    plots.Axis{Label: "acquire latency (ms)"},
		Bars: bars,
	}
	var all []float64
	for _, set := range bars.Sets {
		all = append(all, set.Values...)
	}
	// Bars cannot stand on a log axis; dots can.
	p.Y.Log = plots.SpansDecades(all...)
	w := math.Max(700, 130*float64(len(pairs)))
	return &figure{
		Name:    "acquisition-modes",
		Title:   "Sequential vs multiplexed acquisition",
		Caption: modesCaption(repeated, p.Y.Log, cells),
		Fig:     &plots.Figure{Title: "Sequential vs multiplexed acquisition", Grid: [][]*plots.Panel{{p}}, Width: w, Height: 520},
		Cell:    -1,
	}
}

// modesCaption says how the modes' bars (or, on a log axis or with error
// bars, dots) are drawn.
func modesCaption(repeated, logY bool, cells []*cell) string {
	switch {
	case logY:
		return "Acquire latency p50 (light circles) and p99 (dark triangles) in ms, on a log scale since they span decades, when the N masters are asked one after another (sequential) or all at once (multiplexed), for each N and other swept setting." + errorBarNote(cells)
	case repeated:
		return "Acquire latency p50 (light circles) and p99 (dark triangles) in ms, medians of the repeats with error bars, when the N masters are asked one after another (sequential) or all at once (multiplexed), for each N and other swept setting." + errorBarNote(cells)
	}
	return "Acquire latency p50 (light) and p99 (dark) in ms when the N masters are asked one after another (sequential) or all at once (multiplexed), for each N and other swept setting."
}

// modePair is one configuration's sequential and multiplexed cells.
type modePair struct {
	name     string
	n        int
	seq, mux *CellSummary
}

// modePairs pairs the cells that differ only in mode, both with acquires,
// by N; a pair's name is its settings, N first.
func modePairs(cells []*cell, sums map[*cell]CellSummary) []*modePair {
	var pairs []*modePair
	for _, g := range groupBy(cells, map[string]bool{"mode": true}) {
		pr := &modePair{n: g.Cells[0].Set.N}
		for _, c := range g.Cells {
			cs := sums[c]
			switch c.Set.Mode {
			case "sequential":
				pr.seq = &cs
			case "multiplexed":
				pr.mux = &cs
			}
		}
		if pr.seq == nil || pr.mux == nil || pr.seq.Acquire.Count == 0 || pr.mux.Acquire.Count == 0 {
			continue
		}
		parts := strings.Fields(g.Key)
		if !strings.HasPrefix(g.Key, "N=") {
			parts = append([]string{"N=" + strconv.Itoa(pr.n)}, parts...)
		}
		pr.name = strings.Join(parts, "\n")
		pairs = append(pairs, pr)
	}
	sort.SliceStable(pairs, func(i, j int) bool { return pairs[i].n < pairs[j].n })
	return pairs
}

// modeBars are the pairs' p50 and p99 (ms) of each mode, with error bars
// when any cell was repeated.
func modeBars(pairs []*modePair) (bars *plots.Bars, repeated bool) {
	bars = &plots.Bars{Sets: []plots.BarSet{
		{Label: "sequential p50", Color: 0, Light: true},
		{Label: "sequential p99", Color: 0},
		{Label: "multiplexed p50", Color: 1, Light: true},
		{Label: "multiplexed p99", Color: 1},
	}}
	for _, pr := range pairs {
		bars.Groups = append(bars.Groups, pr.name)
		for i, v := range []struct {
			cs     *CellSummary
			figure string
			value  float64
		}{{pr.seq, "acquire_p50", pr.seq.Acquire.P50}, {pr.seq, "acquire_p99", pr.seq.Acquire.P99},
			{pr.mux, "acquire_p50", pr.mux.Acquire.P50}, {pr.mux, "acquire_p99", pr.mux.Acquire.P99}} {
			set := &bars.Sets[i]
			lo, hi := spreadBounds(*v.cs, v.figure, v.value, 1000)
			set.Values, set.Low, set.High = append(set.Values, v.value/1000), append(set.Low, lo), append(set.High, hi)
			repeated = repeated || v.cs.Repeats != nil
		}
	}
	if !repeated {
		for i := range bars.Sets {
			bars.Sets[i].Low, bars.Sets[i].High = nil, nil
		}
	}
	return bars, repeated
}

// contentionFigure draws the acquire success ratio against keys or
// workers, whichever was swept.
func contentionFigure(cells []*cell, s *Summary) *figure {
	axis := ""
	switch {
	case distinct(cells, "keys") >= 2:
		axis = "keys"
	case distinct(cells, "workers") >= 2:
		axis = "workers"
	default:
		return nil
	}
	p := &plots.Panel{
		X: plots.Axis{Label: map[string]string{"keys": "keys (distinct lock names)", "workers": "workers"}[axis]},
		Y: plots.Axis{Label: "acquire success ratio", Max: plots.F(1)},
	}
	xs, ys := addSuccessLines(p, groupBy(cells, map[string]bool{axis: true}), axis, summariesByCell(cells, s.Cells))
	if len(p.Series) == 0 {
		return nil
	}
	p.X.Log = plots.SpansDecades(xs...)
	p.X.Ticks = valueTicks(xs)
	// Start the axis a little below the lowest ratio: differences near 1
	// are what matter and would vanish on a 0..1 axis.
	lo, _ := minMax(append(ys, s.SLO.MinSuccess))
	p.Y.Min = plots.F(math.Max(0, math.Floor((lo-0.02)*20)/20))
	p.HLines = []plots.Marker{{At: s.SLO.MinSuccess, Tag: "SLO", Legend: "SLO: success ≥ " + results.Pct(s.SLO.MinSuccess), Color: 3}}
	return &figure{
		Name:    "contention",
		Title:   "Acquire success against " + axis,
		Caption: fmt.Sprintf("Share of acquire attempts that got the lock (acquired / (acquired + not acquired + errors)) against %s; fewer keys or more workers mean more attempts find the lock taken.", axis),
		Fig:     &plots.Figure{Title: "Acquire success ratio against " + axis, Grid: [][]*plots.Panel{{p}}, Width: 900, Height: 480},
		Cell:    -1,
	}
}

// waitingFigure draws what waiting callers saw against the workers
// contending: time to lock p99 and server commands per acquired lock, one
// line per configuration (wait strategy, keys, ...).
func waitingFigure(cells []*cell, s *Summary) *figure {
	if distinct(cells, "workers") < 2 || !slices.ContainsFunc(cells, func(c *cell) bool { return c.Run.Contention != nil }) {
		return nil
	}
	groups, sums := groupBy(cells, map[string]bool{"workers": true}), summariesByCell(cells, s.Cells)
	panel := func(label string, get func(*results.Contention) float64) (*plots.Panel, []float64) {
		p := &plots.Panel{X: plots.Axis{Label: "workers contending"}, Y: plots.Axis{Label: label}}
		xs, ys := addWorkerLines(p, groups, sums, get)
		p.X.Log, p.X.Ticks = plots.SpansDecades(xs...), valueTicks(xs)
		p.Y.Log = plots.SpansDecades(ys...)
		return p, xs
	}
	wait, xs := panel("time to lock p99 (ms)", func(c *results.Contention) float64 { return c.TimeToLock.P99 / 1000 })
	cmds, _ := panel("server commands per acquired lock", func(c *results.Contention) float64 { return c.CommandsPerLock })
	if len(wait.Series) == 0 || len(xs) == 0 {
		return nil
	}
	return &figure{
		Name:  "waiting",
		Title: "Time to lock and commands per lock against contenders",
		Caption: "Left: the 99th percentile of a caller's time to lock (from its first attempt on a key to holding it, across every retry and wait). " +
			"Right: commands sent to all servers per acquired lock, what the waiting costs them. One line per configuration (wait strategy, keys).",
		Fig:  &plots.Figure{Title: "What waiting callers see, and what it costs", Grid: [][]*plots.Panel{{wait, cmds}}, Width: 1200, Height: 480},
		Cell: -1,
	}
}

// addWorkerLines adds one line of get against workers per group with at
// least two worker counts; it returns all their points.
func addWorkerLines(p *plots.Panel, groups []*group, sums map[*cell]CellSummary, get func(*results.Contention) float64) (xs, ys []float64) {
	for gi, g := range groups {
		sort.SliceStable(g.Cells, func(i, j int) bool { return g.Cells[i].Set.Workers < g.Cells[j].Set.Workers })
		var x, y []float64
		for _, c := range g.Cells {
			if ct := sums[c].Contention; ct != nil && get(ct) > 0 {
				x, y = append(x, float64(c.Set.Workers)), append(y, get(ct))
			}
		}
		if distinctFloats(x) < 2 {
			continue
		}
		p.Series = append(p.Series, plots.Series{Label: legendLabel(g.Label), X: x, Y: y, Color: gi, Points: true})
		xs, ys = append(xs, x...), append(ys, y...)
	}
	return xs, ys
}

// addSuccessLines adds one success-ratio line per group with at least two
// values of axis; it returns all their points.
func addSuccessLines(p *plots.Panel, groups []*group, axis string, sums map[*cell]CellSummary) (xs, ys []float64) {
	for gi, g := range groups {
		sort.SliceStable(g.Cells, func(i, j int) bool { return axisValue(g.Cells[i], axis) < axisValue(g.Cells[j], axis) })
		var x, y []float64
		for _, c := range g.Cells {
			v := axisValue(c, axis)
			cs := sums[c]
			if v <= 0 || cs.Attempts() == 0 {
				continue
			}
			x, y = append(x, v), append(y, cs.SuccessRatio)
		}
		if distinctFloats(x) < 2 {
			continue
		}
		p.Series = append(p.Series, plots.Series{Label: legendLabel(g.Label), X: x, Y: y, Color: gi, Points: true})
		xs, ys = append(xs, x...), append(ys, y...)
	}
	return xs, ys
}

func axisValue(c *cell, axis string) float64 {
	if axis == "keys" {
		return c.Set.Keys
	}
	return float64(c.Set.Workers)
}

// timelineFigure draws a cell's throughput, failed acquires and p99 per
// second, with its fault events and, under chaos, its safety per second.
func timelineFigure(c *cell, idx int, s *Summary) *figure {
	acq := c.Intervals[results.MetricAcquire]
	if len(acq) < 2 {
		return nil
	}
	if segs := repeatSegments(acq, c.Run.Repeats); len(segs) > 1 {
		return repeatTimelineFigure(c, idx, s, segs)
	}
	origin := acq[0].StartTimeMs()
	for _, m := range metrics {
		for _, h := range c.Intervals[m] {
			origin = min(origin, h.StartTimeMs())
		}
	}
	tx, rate, px, p99 := stepLines(acq, origin)
	top := &plots.Panel{
		Title: "Throughput per second",
		X:     plots.Axis{Label: "time since the measured window opened (s)", Min: plots.F(0)},
		Y:     plots.Axis{Label: "per second", Min: plots.F(0)},
		Series: []plots.Series{
			{Label: "cycles/s", X: tx, Y: rate, Color: 0},
		},
	}
	addFailedLine(top, c.Intervals[results.MetricFailed], origin)
	marks := eventMarkers(c.Run.Events)
	grid := timelineGrid(top, p99Panel(px, p99, s.SLO), marks)
	caption := "Cycles per second, failed acquires per second and acquire p99 (ms) for each 1 s interval of the HDR interval logs, drawn as steps."
	if safety := safetyPanel(c.Run.Safety, tx[len(tx)-1]); safety != nil {
		safety.VLines = marks
		grid = append(grid, []*plots.Panel{safety})
		caption += " The last panel counts, per second, the holds that began overlapping another holder (violations) and the acknowledged writes overwritten (lost updates)."
	}
	if len(marks) > 0 {
		caption += " Numbered dashed lines mark the faults and steps listed in the legend."
	}
	return timeline(c, idx, caption, grid)
}

// p99Panel is a timeline's acquire p99 per second, with the SLO; no line
// when no interval had an acquire.
func p99Panel(px, p99 []float64, slo SLO) *plots.Panel {
	bottom := &plots.Panel{
		Title: "Acquire p99 per second",
		X:     plots.Axis{Label: "time since the measured window opened (s)", Min: plots.F(0)},
		Y:     plots.Axis{Label: "acquire p99 (ms)"},
	}
	if len(px) > 0 {
		bottom.Series = []plots.Series{{Label: "acquire p99", X: px, Y: p99, Color: 1}}
		bottom.Y.Log = plots.SpansDecades(append(p99, slo.AcquireP99Micros/1000)...)
		bottom.HLines = p99SLOLine(slo)
	}
	return bottom
}

// stepLines draw intervals as flat steps over their own seconds, time
// from origin (ms): the count per second and, where an interval has
// values, its p99 in ms.
func stepLines(ivs []*hdrhistogram.Histogram, origin int64) (tx, rate, px, p99 []float64) {
	for _, h := range ivs {
		t0 := float64(h.StartTimeMs()-origin) / 1000
		t1 := t0 + intervalSeconds(h)
		r := float64(h.TotalCount()) / intervalSeconds(h)
		tx, rate = append(tx, t0, t1), append(rate, r, r)
		if h.TotalCount() > 0 {
			v := float64(h.ValueAtQuantile(99)) / 1000
			px, p99 = append(px, t0, t1), append(p99, v, v)
		}
	}
	return tx, rate, px, p99
}

// addFailedLine adds failed acquires per second to a throughput panel
// when there were any.
func addFailedLine(top *plots.Panel, failed []*hdrhistogram.Histogram, origin int64) {
	fx, fr, _, _ := stepLines(failed, origin)
	var anyFailed bool
	for _, h := range failed {
		anyFailed = anyFailed || h.TotalCount() > 0
	}
	if anyFailed && len(fx) >= 2 {
		top.Series = append(top.Series, plots.Series{Label: "failed acquires/s", X: fx, Y: fr, Color: 5})
	}
}

// timelineGrid stacks the throughput panel and, when it has a line, the
// p99 panel, both marked with the events.
func timelineGrid(top, bottom *plots.Panel, marks []plots.Marker) [][]*plots.Panel {
	top.VLines, bottom.VLines = marks, marks
	grid := [][]*plots.Panel{{top}}
	if len(bottom.Series) > 0 {
		grid = append(grid, []*plots.Panel{bottom})
	}
	return grid
}

// timeline is cell c's timeline figure.
func timeline(c *cell, idx int, caption string, grid [][]*plots.Panel) *figure {
	return &figure{
		Name: fmt.Sprintf("timeline-%03d", c.Info.Index), Title: "Timeline: " + c.Info.Label, Caption: caption,
		Fig:  &plots.Figure{Title: plots.Truncate("Timeline: "+c.Info.Label, 90), Grid: grid, Width: 900, Height: 300 * float64(len(grid))},
		Cell: idx,
	}
}

// eventMarkers are a cell's events as numbered vertical lines.
func eventMarkers(events []results.Event) []plots.Marker {
	var marks []plots.Marker
	for i, e := range events {
		if math.IsNaN(e.AtSeconds) || math.IsInf(e.AtSeconds, 0) {
			continue
		}
		text := fmt.Sprintf("%d: %s", i+1, e.Kind)
		if e.Target != "" {
			text += " " + e.Target
		}
		if e.Detail != "" {
			text += " (" + e.Detail + ")"
		}
		text += fmt.Sprintf(" at %.1f s", e.AtSeconds)
		marks = append(marks, plots.Marker{At: e.AtSeconds, Tag: strconv.Itoa(i + 1), Legend: plots.Truncate(text, 70), Color: 4})
	}
	return marks
}

// repeatSegments splits a repeated cell's intervals (all repeats' logs
// in order) at the start of each repeat.
func repeatSegments(ivs []*hdrhistogram.Histogram, rep *results.Repeats) [][]*hdrhistogram.Histogram {
	if rep == nil || len(rep.Runs) < 2 {
		return nil
	}
	var out [][]*hdrhistogram.Histogram
	start, k := 0, 1
	for i := 1; i <= len(ivs); i++ {
		if i == len(ivs) {
			out = append(out, ivs[start:i])
			break
		}
		if k < len(rep.Runs) && ivs[i].StartTimeMs() >= rep.Runs[k].StartedAt.UnixMilli() {
			out = append(out, ivs[start:i])
			start = i
			for k < len(rep.Runs) && ivs[i].StartTimeMs() >= rep.Runs[k].StartedAt.UnixMilli() {
				k++
			}
		}
	}
	return out
}

// repeatTimelineFigure draws a repeated cell's timeline as one line per
// repeat, each from the start of its own measured window, so that the
// repeats lie over one another instead of apart across the sweep.
func repeatTimelineFigure(c *cell, idx int, s *Summary, segs [][]*hdrhistogram.Histogram) *figure {
	top := &plots.Panel{Title: "Throughput per second",
		X: plots.Axis{Label: "time since the repeat's measured window opened (s)", Min: plots.F(0)},
		Y: plots.Axis{Label: "cycles per second", Min: plots.F(0)}}
	bottom := &plots.Panel{Title: "Acquire p99 per second",
		X: plots.Axis{Label: "time since the repeat's measured window opened (s)", Min: plots.F(0)},
		Y: plots.Axis{Label: "acquire p99 (ms)"}}
	var all []float64
	for k, seg := range segs {
		tx, rate, px, p99 := stepLines(seg, seg[0].StartTimeMs())
		colour := k
		if colour >= 7 {
			colour++ // grey is kept for markers
		}
		label := fmt.Sprintf("repeat %d", k+1)
		top.Series = append(top.Series, plots.Series{Label: label, X: tx, Y: rate, Color: colour})
		if len(px) > 0 {
			bottom.Series = append(bottom.Series, plots.Series{Label: label, X: px, Y: p99, Color: colour})
			all = append(all, p99...)
		}
	}
	bottom.Y.Log = plots.SpansDecades(append(all, s.SLO.AcquireP99Micros/1000)...)
	bottom.HLines = p99SLOLine(s.SLO)
	grid := timelineGrid(top, bottom, eventMarkers(c.Run.Events))
	return timeline(c, idx, fmt.Sprintf("Cycles per second and acquire p99 (ms) for each 1 s interval of the HDR interval logs, one line per repeat (%d), each from the start of its own measured window: a repeat that stands apart is the machine's noise.", len(segs)), grid)
}

// spectrumLine is h's latency (ms) against 1/(1−percentile), the x of
// the percentile spectrum.
func spectrumLine(h *hdrhistogram.Histogram) (xs, vs []float64) {
	for _, b := range h.CumulativeDistributionWithTicks(5) {
		if b.Quantile >= 100 { // 1/(1-p) is infinite at the max
			continue
		}
		x := 1 / (1 - b.Quantile/100)
		y := float64(b.ValueAt) / 1000
		if math.IsInf(x, 0) || math.IsNaN(x) || y <= 0 {
			continue
		}
		xs, vs = append(xs, x), append(vs, y)
	}
	return xs, vs
}

func distinctN(cells []*cell) int {
	set := map[int]bool{}
	for _, c := range cells {
		set[c.Set.N] = true
	}
	return len(set)
}

// nSkip are the axes a line of the modes-against-N figure runs along or
// that split it into panels.
var nSkip = map[string]bool{"local": true, "masters": true, "N": true, "workers": true, "rate": true}

// modesByNFigure draws acquire latency against N, one line per mode ×
// wait (and other setting), p50 solid and p99 dashed, one panel per load:
// the trend the comparison exists to show (sequential grows with N,
// multiplexed barely) is read off the slope.
func modesByNFigure(cells []*cell, s *Summary) *figure {
	sums := summariesByCell(cells, s.Cells)
	var loads []float64
	for _, c := range cells {
		if !slices.Contains(loads, c.Set.loadValue()) {
			loads = append(loads, c.Set.loadValue())
		}
	}
	sort.Float64s(loads)
	colours := map[string]int{}
	var row []*plots.Panel
	var ys []float64
	for _, lv := range loads {
		var mine []*cell
		for _, c := range cells {
			if c.Set.loadValue() == lv {
				mine = append(mine, c)
			}
		}
		if p, y := nPanel(mine, sums, colours); p != nil {
			row, ys = append(row, p), append(ys, y...)
		}
	}
	if len(row) == 0 {
		return nil
	}
	logY := plots.SpansDecades(ys...)
	for _, p := range row {
		p.Y.Log = logY
	}
	caption := "Acquire latency (ms) against the number of masters N: solid lines p50, dashed p99, one colour per acquisition mode × wait (and other swept setting), set a little apart at each N, one panel per load. Sequential acquisition asks the masters one after another, so its latency grows with N; multiplexed asks all at once." + errorBarNote(cells)
	return &figure{
		Name:    "acquisition-modes",
		Title:   "Sequential vs multiplexed acquisition against N",
		Caption: caption,
		Fig:     &plots.Figure{Title: "Sequential vs multiplexed acquisition against N", Grid: [][]*plots.Panel{row}, Width: math.Max(700, 460*float64(len(row))), Height: 520},
		Cell:    -1,
	}
}

// nPanel is one load's panel of latency against N, nil when no group has
// two N; ys are its values (for the shared log scale).
func nPanel(cells []*cell, sums map[*cell]CellSummary, colours map[string]int) (*plots.Panel, []float64) {
	p := &plots.Panel{Title: loadTitle(cells[0].Set), X: plots.Axis{Label: "masters (N)"}, Y: plots.Axis{Label: "acquire latency (ms)"}}
	var xs, ys []float64
	for _, g := range groupBy(cells, nSkip) {
		series, x, y := nSeries(g, sums, colours)
		p.Series = append(p.Series, series...)
		xs, ys = append(xs, x...), append(ys, y...)
	}
	if len(p.Series) == 0 {
		return nil, nil
	}
	ns := make([]float64, len(xs))
	for i, x := range xs {
		ns[i] = math.Round(x) // the N under a dodged point
	}
	p.X.Ticks = valueTicks(ns)
	lo, hi := minMax(ns)
	p.X.Min, p.X.Max = plots.F(lo-0.5), plots.F(hi+0.5)
	return p, ys
}

func loadTitle(s settings) string {
	if s.Load == "open" {
		return results.Rate(s.Rate) + " acquires/s offered"
	}
	if s.Workers == 1 {
		return "1 worker"
	}
	return strconv.Itoa(s.Workers) + " workers"
}

// nSeries is one group's p50 and p99 lines against N, with error bars
// when its cells repeated; the colour follows the group's label so that
// it matches across panels.
func nSeries(g *group, sums map[*cell]CellSummary, colours map[string]int) ([]plots.Series, []float64, []float64) {
	cs := slices.Clone(g.Cells)
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].Set.N < cs[j].Set.N })
	var x, p50, p99, lo50, hi50, lo99, hi99 []float64
	for _, c := range cs {
		sum := sums[c]
		if sum.Acquire.Count == 0 || sum.Acquire.P50 <= 0 {
			continue
		}
		x = append(x, float64(c.Set.N))
		p50, p99 = append(p50, sum.Acquire.P50/1000), append(p99, sum.Acquire.P99/1000)
		l, h := spreadBounds(sum, "acquire_p50", sum.Acquire.P50, 1000)
		lo50, hi50 = append(lo50, l), append(hi50, h)
		l, h = spreadBounds(sum, "acquire_p99", sum.Acquire.P99, 1000)
		lo99, hi99 = append(lo99, l), append(hi99, h)
	}
	if distinctFloats(x) < 2 {
		return nil, nil, nil
	}
	colour, ok := colours[g.Label]
	if !ok {
		colour = len(colours)
		if colour >= 7 { // grey is kept for markers
			colour++
		}
		colours[g.Label] = colour
	}
	// Lines side by side at each N (dodged by a few hundredths), so that
	// their error bars do not hide each other.
	dodged := make([]float64, len(x))
	for i := range x {
		dodged[i] = x[i] + 0.05*(float64(colour)-1.5)
	}
	x = dodged
	label := legendLabel(g.Label)
	return []plots.Series{
		withErrors(plots.Series{Label: label + " p50", X: x, Y: p50, Color: colour, Points: true}, lo50, hi50),
		withErrors(plots.Series{Label: label + " p99", X: x, Y: p99, Color: colour, Points: true, Dashed: true}, lo99, hi99),
	}, x, slices.Concat(p50, p99, lo50, hi99)
}

// dodge sets the lines with error bars a little apart at each x (1% of
// the axis per line), so that their bars do not hide each other.
func dodge(series []plots.Series, logX bool, lo, hi float64) {
	k := 0
	for i := range series {
		if len(series[i].YLow) > 0 {
			k++
		}
	}
	j := 0
	for i := range series {
		s := &series[i]
		if len(s.YLow) == 0 {
			continue
		}
		off := 0.01 * (float64(j) - float64(k-1)/2)
		j++
		x := make([]float64, len(s.X))
		for n, v := range s.X {
			if logX {
				x[n] = v * math.Pow(hi/lo, off)
			} else {
				x[n] = v + off*(hi-lo)
			}
		}
		s.X = x
	}
}

// spreadBounds is the interval of a repeated cell's figure (its
// confidence interval of the median) divided by unit; a cell measured
// once has none, and its bar collapses onto the point.
func spreadBounds(cs CellSummary, figure string, v, unit float64) (lo, hi float64) {
	if cs.Repeats != nil {
		if sp := cs.Repeats.Spread[figure]; sp.N >= 2 {
			return sp.CILow / unit, sp.CIHigh / unit
		}
	}
	return v / unit, v / unit
}

// withErrors sets a series' error bars when any point has a spread.
func withErrors(s plots.Series, lo, hi []float64) plots.Series {
	for i := range lo {
		if lo[i] != s.Y[i] || hi[i] != s.Y[i] {
			s.YLow, s.YHigh = lo, hi
			return s
		}
	}
	return s
}

// errorBarNote is the caption's word on error bars, when cells repeated.
func errorBarNote(cells []*cell) string {
	for _, c := range cells {
		if c.Run.Repeats != nil {
			return " Points of repeated cells are medians; the error bars span the " + results.CIText(c.Run.Repeats) + "."
		}
	}
	return ""
}

// safetyPanel draws a chaos cell's safety timeline second by second, so the
// picture says when: violations and lost updates (and, with fencing, the
// stale writes refused) against the fault marks. nil unless the cell
// checked a protected resource.
func safetyPanel(s results.Safety, end float64) *plots.Panel {
	if !s.ResourceChecked {
		return nil
	}
	n := int(math.Ceil(end))
	for _, x := range s.Timeline {
		n = max(n, int(x.Second)+1)
	}
	viol, lost, rej := make([]float64, n), make([]float64, n), make([]float64, n)
	for _, x := range s.Timeline {
		if x.Second < 0 {
			continue
		}
		viol[x.Second] += float64(x.Violations)
		lost[x.Second] += float64(x.LostUpdates)
		rej[x.Second] += float64(x.StaleWritesRejected)
	}
	steps := func(label string, v []float64, color int, dashed bool) plots.Series {
		sr := plots.Series{Label: label, Color: color, Dashed: dashed}
		for i, y := range v {
			sr.X, sr.Y = append(sr.X, float64(i), float64(i+1)), append(sr.Y, y, y)
		}
		return sr
	}
	p := &plots.Panel{
		Title: fmt.Sprintf("Safety per second: %d violations, %d lost updates in all", s.Violations, s.LostUpdates),
		X:     plots.Axis{Label: "time since the measured window opened (s)", Min: plots.F(0)},
		Y:     plots.Axis{Label: "per second"},
		Series: []plots.Series{
			steps("violations (overlapping holds begun)", viol, 3, false),
			steps("lost updates", lost, 2, true),
		},
	}
	switch {
	case s.Fencing:
		p.Series = append(p.Series, steps("stale writes refused (fencing)", rej, 6, false))
	case s.GuardedWrite:
		p.Series = append(p.Series, steps("guarded writes refused", rej, 6, false))
	}
	return p
}

func summariesByCell(cells []*cell, sums []CellSummary) map[*cell]CellSummary {
	m := make(map[*cell]CellSummary, len(cells))
	for i, c := range cells {
		m[c] = sums[i]
	}
	return m
}

func distinctFloats(v []float64) int {
	set := map[float64]bool{}
	for _, x := range v {
		set[x] = true
	}
	return len(set)
}

// valueTicks labels the load steps themselves when there are few of them.
func valueTicks(xs []float64) []plots.Tick {
	if distinctFloats(xs) > 10 {
		return nil
	}
	seen := map[float64]bool{}
	var ticks []plots.Tick
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			label := strconv.FormatFloat(x, 'f', -1, 64)
			switch {
			case x >= 10000 && math.Mod(x, 1000) == 0:
				label = results.Count(int64(x/1000)) + "k" // short enough not to collide
			case x == math.Trunc(x):
				label = results.Count(int64(x))
			}
			ticks = append(ticks, plots.Tick{Value: x, Label: label})
		}
	}
	return ticks
}

func minMax(v []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range v {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}
