// Package plots draws the report's figures with gonum/plot from plain data,
// so that the report package deals in numbers and labels, not canvases.
package plots

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// DPI of the PNG output; sizes below are in pixels at this density.
const DPI = 96

// Figure is one image: a grid of panels and one legend to their right,
// shared by all panels so that a label keeps its colour across them.
type Figure struct {
	Title string
	Grid  [][]*Panel // rows of panels
	// Width and Height of the panel grid in pixels; the legend adds width.
	Width, Height float64
}

// Panel is one set of axes.
type Panel struct {
	Title  string
	X, Y   Axis
	Series []Series
	Bars   *Bars
	VLines []Marker // vertical lines across the panel (events)
	HLines []Marker // horizontal lines across the panel (SLOs)
}

// Axis describes one axis. Min and Max, when set, widen the data range.
type Axis struct {
	Label string
	Log   bool
	Min   *float64
	Max   *float64
	Ticks []Tick // fixed labelled ticks instead of the automatic ones
}

// Tick is a labelled tick mark.
type Tick struct {
	Value float64
	Label string
}

// Series is one line.
type Series struct {
	Label  string
	X, Y   []float64
	Color  int  // index into the palette
	Dashed bool // a second family of lines in the same colours
	Points bool // mark each point too
	Glyph  int  // 0 none; otherwise a larger glyph drawn alone (no line)
	// YLow and YHigh, when given (one per point), draw an error bar from
	// YLow[i] to YHigh[i] at each point: the spread of repeats.
	YLow, YHigh []float64
}

// Bars is a grouped bar chart: one bar per set in each group.
type Bars struct {
	Groups []string
	Sets   []BarSet
}

// BarSet is one bar in every group.
type BarSet struct {
	Label  string
	Values []float64
	Color  int
	Light  bool // the lighter shade of Color
	// Low and High, when given, are error bars: the sets are then drawn
	// as dots with bars rather than as bars.
	Low, High []float64
}

// dots: a log axis has no base for a bar, and an error bar on a dot reads
// better than one on a bar's top.
func (b *Bars) dots(logY bool) bool {
	if logY {
		return true
	}
	for _, s := range b.Sets {
		if len(s.Low) > 0 {
			return true
		}
	}
	return false
}

// errorBars draws one error bar per point, from low[i] to high[i].
func errorBars(xys plotter.XYs, low, high []float64, clr color.Color, logY bool) (*plotter.YErrorBars, error) {
	if len(low) != len(xys) || len(high) != len(xys) {
		return nil, fmt.Errorf("%d points, %d low and %d high error values", len(xys), len(low), len(high))
	}
	if err := finite("error bar low", low); err != nil {
		return nil, err
	}
	if err := finite("error bar high", high); err != nil {
		return nil, err
	}
	if logY {
		if err := positive("error bar low", low); err != nil {
			return nil, err
		}
	}
	e := errs{xys: xys, low: low, high: high}
	eb, err := plotter.NewYErrorBars(e)
	if err != nil {
		return nil, err
	}
	eb.LineStyle.Color = clr
	eb.LineStyle.Width = vg.Points(1.2)
	eb.CapWidth = vg.Points(6)
	return eb, nil
}

// errs gives plotter.YErrorBars the distances below and above each point.
type errs struct {
	xys       plotter.XYs
	low, high []float64
}

func (e errs) Len() int                    { return len(e.xys) }
func (e errs) XY(i int) (float64, float64) { return e.xys[i].X, e.xys[i].Y }
func (e errs) YError(i int) (float64, float64) {
	return math.Max(0, e.xys[i].Y-e.low[i]), math.Max(0, e.high[i]-e.xys[i].Y)
}

// Marker is a full-width or full-height line with a short tag drawn next to
// it and a longer text in the legend.
type Marker struct {
	At     float64
	Tag    string
	Legend string
	Color  int
}

// F returns a pointer to v, for Axis.Min and Axis.Max.
func F(v float64) *float64 { return &v }

// Tableau 20: pairs of dark and light shades, readable and distinct.
var palette = []color.RGBA{
	{31, 119, 180, 255}, {174, 199, 232, 255},
	{255, 127, 14, 255}, {255, 187, 120, 255},
	{44, 160, 44, 255}, {152, 223, 138, 255},
	{214, 39, 40, 255}, {255, 152, 150, 255},
	{148, 103, 189, 255}, {197, 176, 213, 255},
	{140, 86, 75, 255}, {196, 156, 148, 255},
	{227, 119, 194, 255}, {247, 182, 210, 255},
	{127, 127, 127, 255}, {199, 199, 199, 255},
	{188, 189, 34, 255}, {219, 219, 141, 255},
	{23, 190, 207, 255}, {158, 218, 229, 255},
}

// Color returns the dark shade of colour i (cycling).
func Color(i int) color.Color { return palette[2*(mod(i, 10))] }

func lightColor(i int) color.Color { return palette[2*(mod(i, 10))+1] }

func mod(i, n int) int { return ((i % n) + n) % n }

// Dash patterns cycle every 10 colours so that 40 series stay distinct.
var dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)}}

var (
	sans     = font.Font{Typeface: "Liberation", Variant: "Sans"}
	sansBold = font.Font{Typeface: "Liberation", Variant: "Sans", Weight: xfont.WeightBold}
)

// SpansDecades reports whether positive values spread over more than a
// factor of 20, where a log axis shows them better than a linear one.
func SpansDecades(vals ...float64) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if v > 0 && !math.IsInf(v, 0) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	return hi > 0 && lo > 0 && hi/lo >= 20
}

// Render draws f as "png" or "svg".
func Render(f *Figure, format string) (out []byte, err error) {
	// gonum/plot panics on data it cannot draw (say a zero on a log
	// axis); a report must fail with a message instead.
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("plots: %q: %v", f.Title, r)
		}
	}()
	if f == nil || len(f.Grid) == 0 || len(f.Grid[0]) == 0 {
		return nil, errors.New("plots: empty figure")
	}
	lg := newLegend()
	grid, err := buildGrid(f, lg.add)
	if err != nil {
		return nil, err
	}
	lay := layOut(f, lg)
	var cw vg.CanvasWriterTo
	switch format {
	case "png":
		cw = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(lay.totalW, lay.totalH), vgimg.UseDPI(DPI))}
	case "svg":
		cw = vgsvg.New(lay.totalW, lay.totalH)
	default:
		return nil, fmt.Errorf("plots: format %q: want png or svg", format)
	}
	lay.paint(draw.New(cw), f.Title, grid, lg)
	var buf bytes.Buffer
	if _, err := cw.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("plots: %q: %w", f.Title, err)
	}
	return buf.Bytes(), nil
}

// legend is a figure's one legend; an entry is added once, by name, so a
// label keeps one entry across panels.
type legend struct {
	plot.Legend
	seen  map[string]bool
	names []string
}

func newLegend() *legend {
	l := &legend{Legend: plot.NewLegend(), seen: map[string]bool{}}
	l.TextStyle.Font = font.From(sans, 11)
	l.ThumbnailWidth = vg.Points(24)
	l.Top, l.Left = true, true
	l.Padding = vg.Points(3)
	return l
}

func (l *legend) add(name string, th plot.Thumbnailer) {
	if name == "" || l.seen[name] {
		return
	}
	l.seen[name] = true
	l.names = append(l.names, name)
	l.Add(name, th)
}

// buildGrid builds every panel of f (nil where f has none).
func buildGrid(f *Figure, addLegend func(string, plot.Thumbnailer)) ([][]*plot.Plot, error) {
	cols := len(f.Grid[0])
	grid := make([][]*plot.Plot, len(f.Grid))
	for r, row := range f.Grid {
		if len(row) != cols {
			return nil, fmt.Errorf("plots: %q: row %d has %d panels, want %d", f.Title, r, len(row), cols)
		}
		grid[r] = make([]*plot.Plot, cols)
		for c, pn := range row {
			if pn == nil {
				continue
			}
			p, err := pn.build(addLegend)
			if err != nil {
				return nil, fmt.Errorf("plots: %q: %w", f.Title, err)
			}
			grid[r][c] = p
		}
	}
	return grid, nil
}

// pt converts pixels at DPI to points.
func pt(px float64) vg.Length { return vg.Length(px * 72 / DPI) }

// layout is where a figure's parts go: the panel grid (gridW wide), the
// legend to its right and the title above, in points.
type layout struct {
	gridW, legendW, titleH, totalW, totalH vg.Length
	titleStyle                             text.Style
}

func layOut(f *Figure, lg *legend) layout {
	w, h := f.Width, f.Height
	if w <= 0 {
		w = 900
	}
	if h <= 0 {
		h = 480
	}
	lay := layout{gridW: pt(w)}
	if len(lg.names) > 0 {
		lay.legendW = legendWidth(&lg.Legend, lg.names) + pt(24)
	}
	lay.titleStyle = text.Style{Color: color.Black, Font: font.From(sansBold, 15), XAlign: draw.XCenter, YAlign: draw.YTop, Handler: plot.DefaultTextHandler}
	if f.Title != "" {
		lay.titleH = lay.titleStyle.Height(f.Title) + pt(16)
	}
	lay.totalW, lay.totalH = pt(w)+lay.legendW, pt(h)+lay.titleH
	// A long legend makes the figure taller rather than being cut off.
	entryH := lg.TextStyle.Height("Xg") + lg.Padding
	if need := vg.Length(len(lg.names))*entryH + lay.titleH + pt(24); need > lay.totalH {
		lay.totalH = need
	}
	return lay
}

// paint draws the title, the panels and the legend on dc.
func (lay layout) paint(dc draw.Canvas, title string, grid [][]*plot.Plot, lg *legend) {
	dc.FillPolygon(color.White, []vg.Point{{X: 0, Y: 0}, {X: lay.totalW, Y: 0}, {X: lay.totalW, Y: lay.totalH}, {X: 0, Y: lay.totalH}})
	if title != "" {
		dc.FillText(lay.titleStyle, vg.Point{X: lay.gridW / 2, Y: lay.totalH - pt(8)}, title)
	}
	area := dc
	area.Max.X = lay.gridW
	area.Max.Y = lay.totalH - lay.titleH
	tiles := draw.Tiles{Rows: len(grid), Cols: len(grid[0]), PadX: pt(28), PadY: pt(24), PadTop: pt(4), PadBottom: pt(6), PadLeft: pt(8), PadRight: pt(12)}
	canvases := plot.Align(grid, tiles, area)
	for r := range grid {
		for c, p := range grid[r] {
			if p != nil {
				p.Draw(canvases[r][c])
			}
		}
	}
	if lay.legendW > 0 {
		lc := dc
		lc.Min.X = lay.gridW + pt(8)
		lc.Max.Y = lay.totalH - lay.titleH - pt(10)
		lg.Draw(lc)
	}
}

// legendWidth is the room the legend needs: Legend keeps its entries
// private, so the caller passes their texts.
func legendWidth(l *plot.Legend, names []string) vg.Length {
	var w vg.Length
	for _, name := range names {
		w = max(w, l.TextStyle.Width(" "+name))
	}
	return w + l.ThumbnailWidth
}

// build makes the panel's plot: its bars and series, then its marker
// lines, then its axis ranges.
func (pn *Panel) build(addLegend func(string, plot.Thumbnailer)) (*plot.Plot, error) {
	p := pn.newPlot()
	hasData := false
	if pn.Bars != nil && len(pn.Bars.Groups) > 0 {
		if pn.X.Log {
			return nil, errors.New("bars need a nominal x axis")
		}
		if err := pn.addBars(p, addLegend); err != nil {
			return nil, err
		}
		hasData = true
	}
	for _, s := range pn.Series {
		drawn, err := pn.addSeries(p, s, addLegend)
		if err != nil {
			return nil, err
		}
		hasData = hasData || drawn
	}
	if !hasData {
		return nil, fmt.Errorf("panel %q has no data", pn.Title)
	}
	if err := pn.addRules(p, addLegend); err != nil {
		return nil, err
	}
	if pn.Bars == nil {
		if err := setRange(&p.X, pn.X); err != nil {
			return nil, fmt.Errorf("x axis: %w", err)
		}
	}
	if err := setRange(&p.Y, pn.Y); err != nil {
		return nil, fmt.Errorf("y axis: %w", err)
	}
	if pn.Bars != nil && !pn.Y.Log {
		p.Y.Max *= 1.08 // room above the tallest bar
	}
	return p, nil
}

// newPlot is an empty plot with the panel's title, axis labels, fonts and
// grid lines.
func (pn *Panel) newPlot() *plot.Plot {
	p := plot.New()
	p.Title.Text = pn.Title
	p.Title.TextStyle.Font = font.From(sansBold, 12)
	p.Title.Padding = vg.Points(6)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 12)
		a.Tick.Label.Font = font.From(sans, 10)
	}
	p.X.Label.Text = pn.X.Label
	p.Y.Label.Text = pn.Y.Label
	p.Add(gridLines())
	return p
}

// addRules draws the panel's vertical (events) and horizontal (SLO) lines.
func (pn *Panel) addRules(p *plot.Plot, addLegend func(string, plot.Thumbnailer)) error {
	for _, m := range pn.VLines {
		if err := finite("marker", []float64{m.At}); err != nil {
			return err
		}
		v := &rule{Marker: m, vertical: true}
		p.Add(v)
		addLegend(m.Legend, v)
	}
	for _, m := range pn.HLines {
		if err := finite("marker", []float64{m.At}); err != nil {
			return err
		}
		h := &rule{Marker: m}
		p.Add(h)
		addLegend(m.Legend, h)
	}
	return nil
}

// addSeries draws one series (a line, its points and error bars, or
// glyphs alone); drawn is false for an empty one.
func (pn *Panel) addSeries(p *plot.Plot, s Series, addLegend func(string, plot.Thumbnailer)) (drawn bool, err error) {
	if err := pn.check(s); err != nil || len(s.X) == 0 {
		return false, err
	}
	xys := make(plotter.XYs, len(s.X))
	for i := range s.X {
		xys[i] = plotter.XY{X: s.X[i], Y: s.Y[i]}
	}
	clr := Color(s.Color)
	if s.Glyph > 0 {
		sc, err := scatter(xys, clr, 5, glyphShape(s.Glyph))
		if err != nil {
			return false, err
		}
		p.Add(sc)
		addLegend(s.Label, sc)
		return true, nil
	}
	if len(s.YLow) > 0 {
		eb, err := errorBars(xys, s.YLow, s.YHigh, clr, pn.Y.Log)
		if err != nil {
			return false, fmt.Errorf("series %q: %w", s.Label, err)
		}
		p.Add(eb)
	}
	l, err := seriesLine(xys, s)
	if err != nil {
		return false, err
	}
	p.Add(l)
	if !s.Points {
		addLegend(s.Label, l)
		return true, nil
	}
	sc, err := scatter(xys, clr, 2.5, draw.CircleGlyph{})
	if err != nil {
		return false, err
	}
	p.Add(sc)
	addLegend(s.Label, legendPair{l, sc})
	return true, nil
}

// scatter marks the points with glyphs of a radius in points.
func scatter(xys plotter.XYs, clr color.Color, radius float64, shape draw.GlyphDrawer) (*plotter.Scatter, error) {
	sc, err := plotter.NewScatter(xys)
	if err != nil {
		return nil, err
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: clr, Radius: vg.Points(radius), Shape: shape}
	return sc, nil
}

// check refuses a series the panel cannot draw: unequal lengths, a
// non-finite value, or a value ≤ 0 on a log axis.
func (pn *Panel) check(s Series) error {
	if len(s.X) != len(s.Y) {
		return fmt.Errorf("series %q: %d x values, %d y values", s.Label, len(s.X), len(s.Y))
	}
	if len(s.X) == 0 {
		return nil
	}
	if err := finite(s.Label+" x", s.X); err != nil {
		return err
	}
	if err := finite(s.Label+" y", s.Y); err != nil {
		return err
	}
	if pn.X.Log {
		if err := positive(s.Label+" x", s.X); err != nil {
			return err
		}
	}
	if pn.Y.Log {
		return positive(s.Label+" y", s.Y)
	}
	return nil
}

// seriesLine is the series' line in its colour and dash pattern.
func seriesLine(xys plotter.XYs, s Series) (*plotter.Line, error) {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, fmt.Errorf("series %q: %w", s.Label, err)
	}
	l.LineStyle.Color = Color(s.Color)
	l.LineStyle.Width = vg.Points(1.6)
	dash := mod(s.Color/10, len(dashes))
	if s.Dashed {
		dash = mod(dash+1, len(dashes))
	}
	l.LineStyle.Dashes = dashes[dash]
	return l, nil
}

// addBars draws grouped bars, or on a log y axis (where a bar has no
// base) a dot per value: p50-like light sets as circles, others as
// triangles, side by side within each group.
func (pn *Panel) addBars(p *plot.Plot, addLegend func(string, plot.Thumbnailer)) error {
	groups, n := len(pn.Bars.Groups), len(pn.Bars.Sets)
	width := barWidth(groups, n)
	for i, s := range pn.Bars.Sets {
		if len(s.Values) != groups {
			return fmt.Errorf("bar set %q: %d values for %d groups", s.Label, len(s.Values), groups)
		}
		if err := finite(s.Label, s.Values); err != nil {
			return err
		}
		clr := Color(s.Color)
		if s.Light {
			clr = lightColor(s.Color)
		}
		if pn.Bars.dots(pn.Y.Log) {
			if err := pn.addDots(p, s, i, clr, addLegend); err != nil {
				return err
			}
			continue
		}
		b, err := plotter.NewBarChart(plotter.Values(s.Values), width)
		if err != nil {
			return err
		}
		b.Color = clr
		b.LineStyle.Width = 0
		b.Offset = vg.Length(float64(i)-float64(n-1)/2) * width
		p.Add(b)
		addLegend(s.Label, b)
	}
	p.NominalX(pn.Bars.Groups...)
	p.X.Min, p.X.Max = -0.5, float64(groups)-0.5
	p.X.Tick.Label.Font = font.From(sans, 10)
	if !pn.Y.Log {
		p.Y.Min = 0
	}
	return nil
}

// addDots draws bar set i as dots (with its error bars), side by side with
// the other sets within each group.
func (pn *Panel) addDots(p *plot.Plot, s BarSet, i int, clr color.Color, addLegend func(string, plot.Thumbnailer)) error {
	if pn.Y.Log {
		if err := positive(s.Label, s.Values); err != nil {
			return err
		}
	}
	n := len(pn.Bars.Sets)
	xys := make(plotter.XYs, len(s.Values))
	for g, v := range s.Values {
		xys[g] = plotter.XY{X: float64(g) + (float64(i)-float64(n-1)/2)*0.8/float64(n), Y: v}
	}
	if len(s.Low) > 0 {
		eb, err := errorBars(xys, s.Low, s.High, clr, pn.Y.Log)
		if err != nil {
			return fmt.Errorf("bar set %q: %w", s.Label, err)
		}
		p.Add(eb)
	}
	var shape draw.GlyphDrawer = draw.PyramidGlyph{}
	if s.Light {
		shape = draw.CircleGlyph{}
	}
	sc, err := scatter(xys, clr, 5, shape)
	if err != nil {
		return err
	}
	p.Add(sc)
	addLegend(s.Label, sc)
	return nil
}

// legendPair shows a line and its point glyph in one legend entry.
type legendPair struct {
	l  *plotter.Line
	sc *plotter.Scatter
}

func (lp legendPair) Thumbnail(c *draw.Canvas) { lp.l.Thumbnail(c); lp.sc.Thumbnail(c) }

func glyphShape(i int) draw.GlyphDrawer {
	switch i {
	case 2:
		return draw.SquareGlyph{}
	case 3:
		return draw.TriangleGlyph{}
	default:
		return draw.RingGlyph{}
	}
}

func barWidth(groups, sets int) vg.Length {
	// Bars of one group fill about 80% of the room a group gets in a
	// 700 px wide panel; the exact room is only known when drawing.
	w := vg.Length(700*72/DPI) * 0.8 / vg.Length(groups*sets+1)
	return min(max(w, vg.Points(4)), vg.Points(40))
}

func gridLines() *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 225}
	g.Horizontal.Color = color.Gray{Y: 225}
	g.Vertical.Width = vg.Points(0.5)
	g.Horizontal.Width = vg.Points(0.5)
	return g
}

func finite(name string, vs []float64) error {
	for i, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s: point %d is %v; plots take finite numbers only", name, i, v)
		}
	}
	return nil
}

func positive(name string, vs []float64) error {
	for i, v := range vs {
		if v <= 0 {
			return fmt.Errorf("%s: point %d is %v; a log axis takes positive numbers only", name, i, v)
		}
	}
	return nil
}

// setRange applies the requested bounds, pads a degenerate range and
// chooses the scale and ticks.
func setRange(a *plot.Axis, ax Axis) error {
	if ax.Min != nil {
		a.Min = math.Min(a.Min, *ax.Min)
	}
	if ax.Max != nil {
		a.Max = math.Max(a.Max, *ax.Max)
	}
	if math.IsInf(a.Min, 0) || math.IsInf(a.Max, 0) {
		return errors.New("no data range")
	}
	if ax.Log {
		if a.Min <= 0 {
			return fmt.Errorf("log axis from %v: needs positive values", a.Min)
		}
		if a.Max/a.Min < 1.5 {
			a.Min, a.Max = a.Min/1.5, a.Max*1.5
		}
		a.Scale = plot.LogScale{}
		a.Tick.Marker = logTicks{}
	} else if a.Max == a.Min {
		d := math.Max(math.Abs(a.Min)*0.1, 1)
		a.Min, a.Max = a.Min-d, a.Max+d
		if ax.Min != nil && *ax.Min == 0 && a.Min < 0 {
			a.Min = 0
		}
	}
	if _, auto := a.Tick.Marker.(plot.DefaultTicks); auto && !ax.Log {
		a.Tick.Marker = linTicks{} // but keep a bar chart's group names
	}
	if len(ax.Ticks) > 0 {
		a.Tick.Marker = declutter(ax.Ticks, a.Scale, a.Min, a.Max)
	}
	return nil
}

// declutter keeps every tick mark but drops a label that would sit within
// 7% of the axis of the previous label, where the two would overlap.
func declutter(ts []Tick, scale plot.Normalizer, lo, hi float64) plot.ConstantTicks {
	sorted := slices.Clone(ts)
	slices.SortFunc(sorted, func(a, b Tick) int { return cmp.Compare(a.Value, b.Value) })
	out := make(plot.ConstantTicks, 0, len(sorted))
	last := math.Inf(-1)
	for _, t := range sorted {
		if t.Value < lo || t.Value > hi {
			continue
		}
		pos := scale.Normalize(lo, hi, t.Value)
		label := t.Label
		if pos-last < 0.07 {
			label = ""
		} else if label != "" {
			last = pos
		}
		out = append(out, plot.Tick{Value: t.Value, Label: label})
	}
	return out
}

// logTicks labels the powers of ten as plot.LogTicks does and, when the
// axis spans few decades, also 2× and 5× so that it is never bare.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.LogTicks{Prec: -1}.Ticks(lo, hi)
	decades := math.Log10(hi / lo)
	for i := range ticks {
		t := &ticks[i]
		if t.Label != "" {
			t.Label = tickLabel(t.Value)
			continue
		}
		m := t.Value / math.Pow10(int(math.Floor(math.Log10(t.Value)+1e-9)))
		m = math.Round(m)
		if (decades < 3 && (m == 2 || m == 5)) || (decades < 1.2 && (m == 3 || m == 4 || m == 6 || m == 8)) {
			t.Label = tickLabel(t.Value)
		}
	}
	return ticks
}

func tickLabel(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if len(s) > 7 {
		s = strconv.FormatFloat(v, 'g', 3, 64)
	}
	return s
}

// linTicks puts 4 to 8 labelled ticks at round steps (1, 2, 2.5 or 5
// times a power of ten), with an unlabelled tick between each pair.
type linTicks struct{}

func (linTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: tickLabel(lo)}}
	}
	raw := (hi - lo) / 5
	pow := math.Pow10(int(math.Floor(math.Log10(raw))))
	step := pow * 10
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*pow >= raw {
			step = m * pow
			break
		}
	}
	decimals := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	if m := step / math.Pow10(int(math.Floor(math.Log10(step)+1e-9))); math.Abs(m-2.5) < 1e-9 {
		decimals++
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step-1e-9) * step; v <= hi+step*1e-9; v += step {
		v = math.Round(v/step) * step
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v+0, 'f', decimals, 64)})
		if mid := v + step/2; mid <= hi {
			ticks = append(ticks, plot.Tick{Value: mid})
		}
	}
	if first := math.Ceil(lo/step-1e-9)*step - step/2; first >= lo {
		ticks = append(ticks, plot.Tick{Value: first})
	}
	return ticks
}

// rule is a Marker drawn across the whole data area.
type rule struct {
	Marker
	vertical bool
}

func (r *rule) style() draw.LineStyle {
	return draw.LineStyle{Color: Color(r.Color), Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
}

// DataRange keeps the marker inside the axis range on its own axis only.
func (r *rule) DataRange() (xmin, xmax, ymin, ymax float64) {
	inf := math.Inf(1)
	if r.vertical {
		return r.At, r.At, inf, -inf
	}
	return inf, -inf, r.At, r.At
}

func (r *rule) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := text.Style{Color: Color(r.Color), Font: font.From(sansBold, 10), Handler: plot.DefaultTextHandler}
	if r.vertical {
		x := trX(r.At)
		c.StrokeLine2(r.style(), x, c.Min.Y, x, c.Max.Y)
		if r.Tag != "" {
			sty.XAlign, sty.YAlign = draw.XLeft, draw.YTop
			c.FillText(sty, vg.Point{X: x + vg.Points(2), Y: c.Max.Y - vg.Points(2)}, r.Tag)
		}
		return
	}
	y := trY(r.At)
	c.StrokeLine2(r.style(), c.Min.X, y, c.Max.X, y)
	if r.Tag != "" {
		sty.XAlign, sty.YAlign = draw.XRight, draw.YBottom
		c.FillText(sty, vg.Point{X: c.Max.X - vg.Points(2), Y: y + vg.Points(2)}, r.Tag)
	}
}

func (r *rule) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(r.style(), c.Min.X, y, c.Max.X, y)
}

// Truncate shortens a legend or tick label to n runes.
func Truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
