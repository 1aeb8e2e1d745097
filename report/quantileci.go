package report

import (
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/gonum/stat/distuv"

	"lockbench/results"
)

// QuantileRanks are the ranks r < s (1-based, of n samples sorted) whose
// values bound quantile q with at least 95% confidence, whatever the
// distribution: the count B of samples at or below the true quantile is
// Binomial(n, q), and P(X(r) ≤ ξ ≤ X(s)) ≥ P(r ≤ B ≤ s−1). r is the
// highest rank with P(B ≤ r−1) ≤ 2.5%, s the lowest with P(B ≤ s−1) ≥
// 97.5%. ok is false when n is too small for either end to exist within
// the samples (the p99 of fewer than ~300 has no upper rank).
func QuantileRanks(n int, q float64) (r, s int, ok bool) {
	if n <= 0 {
		return 0, 0, false
	}
	tail := (1 - Confidence) / 2
	b := distuv.Binomial{N: float64(n), P: q}
	// The CDF rises with k: walk out from the quantile's own rank.
	mid := int(q * float64(n))
	r = min(mid+1, n)
	for r >= 1 && b.CDF(float64(r-1)) > tail {
		r--
	}
	s = max(mid, 1)
	for s <= n && b.CDF(float64(s-1)) < 1-tail {
		s++
	}
	return r, s, r >= 1 && s <= n
}

// P99CI is a pooled p99 with its 95% order-statistic interval (µs).
type P99CI struct {
	P99      float64 `json:"pooled_p99_us"`
	Low      float64 `json:"low_us"`
	High     float64 `json:"high_us"`
	N        int64   `json:"samples"`
	LowRank  int     `json:"low_rank"`
	HighRank int     `json:"high_rank"`
}

// p99CIOf is the p99 of h's samples with its interval; ok false when h
// is missing or holds too few samples to bound it. A histogram's bucket
// holds values equal to 3 significant digits: the lower end is read at
// its rank's bucket's lowest value and the upper end at its highest, so
// the interval is never narrower than the samples allow.
func p99CIOf(h *hdrhistogram.Histogram) (P99CI, bool) {
	if h == nil || h.TotalCount() == 0 {
		return P99CI{}, false
	}
	n := h.TotalCount()
	r, s, ok := QuantileRanks(int(n), 0.99)
	if !ok {
		return P99CI{N: n}, false
	}
	ci := P99CI{P99: float64(h.ValueAtQuantile(99)), N: n, LowRank: r, HighRank: s}
	ci.Low, ci.High = valueAtRank(h, int64(r), false), valueAtRank(h, int64(s), true)
	return ci, true
}

// valueAtRank is the k-th smallest value h holds (1-based): its bucket's
// highest equivalent value when upper, else its lowest.
func valueAtRank(h *hdrhistogram.Histogram, k int64, upper bool) float64 {
	var seen int64
	for _, b := range h.Distribution() {
		if seen += b.Count; b.Count > 0 && seen >= k {
			if upper {
				return float64(b.To)
			}
			return float64(b.From)
		}
	}
	return float64(h.Max())
}

// Text is "18 ms (95% CI 15–22 ms)".
func (c P99CI) Text() string {
	return fmt.Sprintf("%s (95%% CI %s–%s)", results.FormatMicros(c.P99), results.FormatMicros(c.Low), results.FormatMicros(c.High))
}
