package results

import (
	"math"
	"testing"
)

func TestSpreadIntervalOfTheMedian(t *testing.T) {
	cases := []struct {
		n              int
		lo, hi         int // 0-based order statistics of the interval
		levelAtLeast   float64
		levelBelow95OK bool
	}{
		{2, 0, 1, 0.5, true},
		{3, 0, 2, 0.75, true},
		{5, 0, 4, 0.9375, true},
		{6, 0, 5, 0.95, false},
		{10, 1, 8, 0.95, false},
		{20, 5, 14, 0.95, false},
	}
	for _, c := range cases {
		xs := make([]float64, c.n)
		for i := range xs {
			xs[i] = float64(c.n - i) // reversed: NewSpread must sort
		}
		sp := NewSpread(xs)
		if sp.CILow != float64(c.lo+1) || sp.CIHigh != float64(c.hi+1) {
			t.Errorf("n=%d: interval [%v, %v], want order statistics %d..%d", c.n, sp.CILow, sp.CIHigh, c.lo+1, c.hi+1)
		}
		if sp.CILevel < c.levelAtLeast-1e-9 || (!c.levelBelow95OK && sp.CILevel < 0.95) {
			t.Errorf("n=%d: level %v, want ≥ %v", c.n, sp.CILevel, c.levelAtLeast)
		}
		if want := Median(xs); sp.Median != want || sp.Min != 1 || sp.Max != float64(c.n) {
			t.Errorf("n=%d: median/min/max %v/%v/%v", c.n, sp.Median, sp.Min, sp.Max)
		}
	}
	if sp := NewSpread([]float64{7}); sp.N != 1 || sp.Median != 7 || sp.CILevel != 0 || sp.RelSpread != 0 {
		t.Errorf("one sample: %+v", sp)
	}
	if sp := NewSpread([]float64{90, 100, 110}); math.Abs(sp.RelSpread-0.1) > 1e-12 {
		t.Errorf("rel spread of 90,100,110 = %v, want 0.1", sp.RelSpread)
	}
}

// The interval's level is summed from binomial terms: exact for the
// repeat counts a sweep allows, and finite however many samples.
func TestBinomialHalfCDF(t *testing.T) {
	for _, c := range []struct {
		n, k int
		want float64
	}{{3, 0, 1.0 / 8}, {5, 0, 1.0 / 32}, {10, 1, 11.0 / 1024}, {20, 5, 21700.0 / 1048576}, {4, 4, 1}} {
		if got := binomialHalfCDF(c.n, c.k); got != c.want {
			t.Errorf("P(Bin(%d, ½) ≤ %d) = %v, want %v", c.n, c.k, got, c.want)
		}
	}
	if got := binomialHalfCDF(3000, 1499); math.IsNaN(got) || math.Abs(got-0.5) > 0.01 {
		t.Errorf("P(Bin(3000, ½) ≤ 1499) = %v, want about ½", got)
	}
}
