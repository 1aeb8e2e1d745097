package results

import (
	"fmt"
	"math"
	"slices"
)

// CIConfidence is the level the median's interval aims for.
const CIConfidence = 0.95

// NewSpread summarizes the samples of one figure.
func NewSpread(samples []float64) Spread {
	xs := SortedFinite(samples)
	n := len(xs)
	if n == 0 {
		return Spread{}
	}
	sp := Spread{N: n, Median: median(xs), Min: xs[0], Max: xs[n-1], CILow: xs[0], CIHigh: xs[n-1]}
	if n == 1 {
		return sp
	}
	lo, hi, level := medianCIRanks(n, CIConfidence)
	sp.CILow, sp.CIHigh, sp.CILevel = xs[lo], xs[hi], level
	if sp.Median != 0 {
		sp.RelSpread = math.Max(sp.CIHigh-sp.Median, sp.Median-sp.CILow) / math.Abs(sp.Median)
	}
	return sp
}

// medianCIRanks picks 0-based order statistics (lo, hi) = (k, n−1−k) with
// the largest k whose interval still covers the median with probability
// ≥ conf: coverage is 1 − 2·P(Binomial(n, ½) < k+1). When even the full
// range falls short, the range is returned with the level it reaches.
func medianCIRanks(n int, conf float64) (lo, hi int, level float64) {
	lo, level = 0, 1-2*binomialHalfCDF(n, 0)
	for k := 1; k < n/2; k++ {
		l := 1 - 2*binomialHalfCDF(n, k)
		if l < conf {
			break
		}
		lo, level = k, l
	}
	return lo, n - 1 - lo, level
}

// binomialHalfCDF is P(Binomial(n, ½) ≤ k) = Σ_{i≤k} C(n,i) / 2ⁿ, summed
// term by term (exact while C(n,i) fits a float64's mantissa; results
// must not pull in a statistics library for this one sum). Terms are
// scaled down as they grow, so no n overflows.
func binomialHalfCDF(n, k int) float64 {
	term, sum, scale := 1.0, 1.0, 0
	for i := 1; i <= k && i <= n; i++ {
		term = term * float64(n-i+1) / float64(i)
		sum += term
		if term > 0x1p500 {
			term, sum, scale = math.Ldexp(term, -500), math.Ldexp(sum, -500), scale+500
		}
	}
	return math.Ldexp(sum, scale-n)
}

// SortedFinite is samples without NaN and ±Inf, sorted.
func SortedFinite(samples []float64) []float64 {
	xs := make([]float64, 0, len(samples))
	for _, v := range samples {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			xs = append(xs, v)
		}
	}
	slices.Sort(xs)
	return xs
}

// median of sorted values; the mean of the middle two for an even count.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// Median of unsorted samples (NaN and Inf left out).
func Median(samples []float64) float64 { return median(SortedFinite(samples)) }

// SpreadText is a spread's relative size, "3.1%", or "—" with one sample.
func SpreadText(sp Spread) string {
	if sp.N < 2 {
		return "—"
	}
	return fmt.Sprintf("%.1f%%", sp.RelSpread*100)
}

// CIText says what the ± of a repeated cell is: a 95% interval of the
// median, or with fewer than 6 repeats the range and the level it reaches.
func CIText(r *Repeats) string {
	for _, f := range Figures {
		sp := r.Spread[f.Name]
		if sp.N < 2 {
			continue
		}
		if sp.CILow == sp.Min && sp.CIHigh == sp.Max && sp.CILevel < CIConfidence {
			return fmt.Sprintf("range of the repeats (a %.1f%% interval of the median: 6+ repeats reach 95%%)", sp.CILevel*100)
		}
		return fmt.Sprintf("%.0f%% confidence interval of the median", sp.CILevel*100)
	}
	return "range of the repeats"
}
