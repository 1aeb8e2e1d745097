package report

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
)

// Confidence is the level of every interval lockbench states on a rate
// of broken runs or events.
const Confidence = 0.95

// RateInterval is the exact (Clopper–Pearson) 95% interval of a rate seen
// k times in n: from Beta quantiles, two-sided; for k = 0 its upper end is
// the one-sided bound 1 − 0.05^(1/n) (0 of 14: ≤ 19%), for k = n its
// lower end 0.05^(1/n). n = 0 says nothing: [0, 1].
func RateInterval(k, n int) (lo, hi float64) {
	a := 1 - Confidence
	switch {
	case n <= 0:
		return 0, 1
	case k <= 0:
		return 0, 1 - math.Pow(a, 1/float64(n))
	case k >= n:
		return math.Pow(a, 1/float64(n)), 1
	}
	lo = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(a / 2)
	hi = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - a/2)
	return lo, hi
}

// RateText is k of n with its interval: "0 of 14: ≤ 19%", "3 of 3: ≥ 37%",
// "1 of 14: 0.2–34%".
func RateText(k, n int) string { return rateText(k, n, "") }

// rateText is RateText with n's unit named after it ("0 of 15 events:
// ≤ 18%"; "": none).
func rateText(k, n int, unit string) string {
	lo, hi := RateInterval(k, n)
	if unit != "" {
		unit = " " + plural(unit, n)
	}
	switch {
	case k <= 0:
		return fmt.Sprintf("%d of %d%s: ≤ %s", k, n, unit, pct(hi))
	case k >= n:
		return fmt.Sprintf("%d of %d%s: ≥ %s", k, n, unit, pct(lo))
	}
	return fmt.Sprintf("%d of %d%s: %s–%s", k, n, unit, pct(lo), pct(hi))
}

// pct is a rate as a short percentage: 2 significant digits below 10%.
func pct(x float64) string {
	if x*100 < 9.95 {
		return fmt.Sprintf("%.1f%%", x*100)
	}
	return fmt.Sprintf("%.0f%%", x*100)
}

// Settled says what k broken of n shows against maxRate: "broken" once it
// happened (one lost write proves a design can lose one), "clean" when
// none did and the interval's upper end is at or below maxRate, else
// "" (not settled: more runs or events would tell).
func Settled(k, n int, maxRate float64) string {
	switch _, hi := RateInterval(k, n); {
	case k > 0:
		return "broken"
	case n > 0 && hi <= maxRate:
		return "clean"
	}
	return ""
}

// RunsToSettle is the n at which 0 of n settles clean at maxRate.
func RunsToSettle(maxRate float64) int {
	if maxRate <= 0 || maxRate >= 1 {
		return 1
	}
	return int(math.Ceil(math.Log(1-Confidence) / math.Log(1-maxRate)))
}

// plural is a unit counted n times: "events", but "1 event".
func plural(unit string, n int) string {
	if n == 1 {
		return strings.TrimSuffix(unit, "s")
	}
	return unit
}
