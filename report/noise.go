package report

import (
	"fmt"
	"lockbench/results"
	"math"
	"strings"
)

// Difference is what changing one setting did between two cells that
// share every other setting, judged against the noise of their repeats.
type Difference struct {
	Axis     string          `json:"axis"`
	Value    string          `json:"value"`
	Baseline string          `json:"baseline"`
	Context  string          `json:"context,omitempty"` // the settings both cells share
	Figures  []FigureVerdict `json:"figures"`
	Text     string          `json:"text"`
}

// FigureVerdict is one figure of a Difference.
type FigureVerdict struct {
	Figure   string  `json:"figure"`
	DeltaPct float64 `json:"delta_pct"`
	// NoisePct is the larger relative spread of the two cells' repeats:
	// a change smaller than this is within the noise.
	NoisePct float64 `json:"noise_pct"`
	P        float64 `json:"p"`
	Verdict  string  `json:"verdict"` // significant, within noise, beyond spread (too few repeats)
	Text     string  `json:"text"`
}

// differenceFigures are the figures the verdict quotes.
var differenceFigures = []string{"cycles_per_sec", "acquire_p99"}

// differences compares, for every swept setting other than load, each
// value with the first one in cells that share all other settings. Only
// repeated cells have a noise to judge against; without repeats, none.
func differences(cells []*cell) []Difference {
	repeated := false
	for _, c := range cells {
		repeated = repeated || c.Run.Repeats != nil
	}
	if !repeated {
		return nil
	}
	var out []Difference
	for _, axis := range allAxes(cells) {
		if loadSkip[axis] || distinct(cells, axis) < 2 {
			continue
		}
		for _, g := range groupBy(cells, map[string]bool{axis: true}) {
			base := g.Cells[0]
			for _, c := range g.Cells[1:] {
				if c.Axes[axis] == base.Axes[axis] {
					continue
				}
				out = append(out, difference(axis, base, c, g.Key))
			}
		}
	}
	return out
}

func difference(axis string, base, c *cell, context string) Difference {
	d := Difference{Axis: axis, Value: c.Axes[axis], Baseline: base.Axes[axis], Context: context}
	var parts []string
	for _, name := range differenceFigures {
		f, _ := results.FigureByName(name)
		xs, ys := results.Samples(base.Run, f), results.Samples(c.Run, f)
		if len(xs) == 0 || len(ys) == 0 {
			continue
		}
		r := judge(c.Info.Label, "", f, xs, ys, DefaultAlpha)
		fv := FigureVerdict{Figure: name, DeltaPct: results.FiniteOr0(r.Delta), P: r.P,
			NoisePct: 100 * math.Max(r.Old.RelSpread, r.New.RelSpread)}
		fv.Verdict, fv.Text = noiseVerdict(f, r, fv.NoisePct)
		d.Figures = append(d.Figures, fv)
		parts = append(parts, fv.Text)
	}
	d.Text = fmt.Sprintf("%s vs %s", d.Value, d.Baseline)
	if axis != "persistence" && axis != "mode" {
		d.Text = fmt.Sprintf("%s=%s vs %s", axis, d.Value, d.Baseline)
	}
	if context != "" {
		d.Text += " (" + context + ")"
	}
	d.Text += ": " + strings.Join(parts, "; ")
	return d
}

// noiseVerdict words one figure's change: significant, within the noise,
// or beyond the spread but with too few repeats to test.
func noiseVerdict(f results.Figure, r CompareRow, _ float64) (verdict, text string) {
	change := fmt.Sprintf("%s %s", signedPct(r.Delta), f.Text)
	n := fmt.Sprintf("%d+%d repeats", r.Old.N, r.New.N)
	spread := spreadRange(r)
	switch {
	case r.Verdict == "significant":
		return "significant", fmt.Sprintf("%s, beyond the noise (p=%.3f, %s)", change, r.P, n)
	case r.Verdict == "~":
		return "within noise", fmt.Sprintf("%s, within noise (p=%.2f; spread %s)", change, r.P, spread)
	case withinSpread(r):
		return "within noise", fmt.Sprintf("%s, within noise (spread %s; %s are too few to test)", change, spread, n)
	}
	return "beyond spread", fmt.Sprintf("%s, beyond the spread of the repeats (%s), but %s are too few to test", change, spread, n)
}

// spreadRange is the wider of the two cells' intervals around its median,
// "−12%…+31%": spreads of noisy figures are lopsided, so both sides are
// shown; a change is weighed against the wider side, as a ratio.
func spreadRange(r CompareRow) string {
	sp := r.Old
	if logSpread(r.New) > logSpread(r.Old) {
		sp = r.New
	}
	if sp.Median == 0 || sp.N < 2 {
		return "unknown"
	}
	lo, hi := (sp.CILow/sp.Median-1)*100, (sp.CIHigh/sp.Median-1)*100
	return strings.Replace(fmt.Sprintf("%.0f%%…+%.0f%%", lo, hi), "-", "−", 1)
}

// withinSpread: the change of the medians is no larger than either
// cell's spread, compared as ratios (a fall to a tenth is as far as a
// rise to ten times; percentages would cap falls at −100%).
func withinSpread(r CompareRow) bool {
	if r.Old.Median <= 0 || r.New.Median <= 0 {
		return true // no ratio to judge
	}
	change := math.Abs(math.Log(r.New.Median / r.Old.Median))
	return change <= math.Max(logSpread(r.Old), logSpread(r.New))
}

// logSpread is the larger side of a spread's interval as a log ratio.
func logSpread(sp results.Spread) float64 {
	if sp.CILow <= 0 || sp.Median <= 0 {
		return math.Inf(1)
	}
	return math.Max(math.Log(sp.CIHigh/sp.Median), math.Log(sp.Median/sp.CILow))
}

// signedPct writes a change with a real minus sign: −3%, +12%.
func signedPct(v float64) string {
	if math.IsNaN(v) {
		return "±?%"
	}
	s := fmt.Sprintf("%+.0f%%", v)
	if math.Abs(v) < 10 {
		s = fmt.Sprintf("%+.1f%%", v)
	}
	return strings.Replace(s, "-", "−", 1)
}
