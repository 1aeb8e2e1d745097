package report

import (
	"math"
	"testing"
)

// The figures the issue states, and the exact interval's known values.
func TestRateInterval(t *testing.T) {
	for _, c := range []struct {
		k, n   int
		lo, hi float64
		text   string
	}{
		{0, 14, 0, 0.1926, "0 of 14: ≤ 19%"},
		{0, 29, 0, 0.0982, "0 of 29: ≤ 9.8%"},
		{0, 3, 0, 0.6316, "0 of 3: ≤ 63%"},
		{3, 3, 0.3684, 1, "3 of 3: ≥ 37%"},
		// Clopper–Pearson 1 of 10: 0.0025–0.4450 (two-sided 95%).
		{1, 10, 0.00253, 0.4450, "1 of 10: 0.3%–45%"},
	} {
		lo, hi := RateInterval(c.k, c.n)
		if math.Abs(lo-c.lo) > 5e-4 || math.Abs(hi-c.hi) > 5e-4 {
			t.Errorf("%d of %d: [%.4f, %.4f], want [%.4f, %.4f]", c.k, c.n, lo, hi, c.lo, c.hi)
		}
		if got := RateText(c.k, c.n); got != c.text {
			t.Errorf("%d of %d: %q, want %q", c.k, c.n, got, c.text)
		}
	}
	if lo, hi := RateInterval(0, 0); lo != 0 || hi != 1 {
		t.Errorf("0 of 0: [%v, %v], want [0, 1]", lo, hi)
	}
	for _, c := range []struct {
		k, n int
		want string
	}{{0, 3, ""}, {0, 14, "clean"}, {0, 13, ""}, {1, 3, "broken"}, {0, 0, ""}} {
		if got := Settled(c.k, c.n, 0.2); got != c.want {
			t.Errorf("Settled(%d of %d, 20%%) = %q, want %q", c.k, c.n, got, c.want)
		}
	}
	if n := RunsToSettle(0.2); n != 14 {
		t.Errorf("runs to settle at 20%%: %d, want 14", n)
	}
	if n := RunsToSettle(0.1); n != 29 {
		t.Errorf("runs to settle at 10%%: %d, want 29", n)
	}
}
