package plots

import (
	"math"
	"strings"
	"testing"
)

func TestRenderRejectsBadData(t *testing.T) {
	fig := func(p *Panel) *Figure { return &Figure{Title: "t", Grid: [][]*Panel{{p}}} }
	cases := map[string]*Panel{
		"NaN":          {Series: []Series{{Label: "a", X: []float64{1, 2}, Y: []float64{1, math.NaN()}}}},
		"Inf":          {Series: []Series{{Label: "a", X: []float64{1, math.Inf(1)}, Y: []float64{1, 2}}}},
		"zero on log":  {Y: Axis{Log: true}, Series: []Series{{Label: "a", X: []float64{1, 2}, Y: []float64{0, 2}}}},
		"no data":      {Series: []Series{{Label: "a"}}},
		"uneven":       {Series: []Series{{Label: "a", X: []float64{1, 2}, Y: []float64{1}}}},
		"bars on logx": {X: Axis{Log: true}, Bars: &Bars{Groups: []string{"g"}, Sets: []BarSet{{Label: "s", Values: []float64{1}}}}},
	}
	for name, p := range cases {
		for _, format := range []string{"png", "svg"} {
			if _, err := Render(fig(p), format); err == nil {
				t.Errorf("%s (%s): no error", name, format)
			}
		}
	}
	if _, err := Render(&Figure{}, "png"); err == nil {
		t.Error("empty figure: no error")
	}
	ok := &Panel{Series: []Series{{Label: "a", X: []float64{1, 2, 3}, Y: []float64{1, 4, 9}}}}
	if _, err := Render(fig(ok), "pdf"); err == nil || !strings.Contains(err.Error(), "png or svg") {
		t.Errorf("pdf: %v", err)
	}
	for _, format := range []string{"png", "svg"} {
		b, err := Render(fig(ok), format)
		if err != nil || len(b) < 1024 {
			t.Errorf("%s: %d bytes, %v", format, len(b), err)
		}
	}
}

func TestTicks(t *testing.T) {
	var got []string
	for _, tk := range (linTicks{}).Ticks(0, 23.8) {
		if tk.Label != "" {
			got = append(got, tk.Label)
		}
	}
	if strings.Join(got, " ") != "0 5 10 15 20" {
		t.Errorf("linear ticks 0..23.8: %v", got)
	}
	got = nil
	for _, tk := range (logTicks{}).Ticks(0.9, 60) {
		if tk.Label != "" {
			got = append(got, tk.Label)
		}
	}
	if strings.Join(got, " ") != "1 2 5 10 20 50 100" {
		t.Errorf("log ticks 0.9..60: %v", got)
	}
}
