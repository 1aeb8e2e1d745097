package report

import (
	"lockbench/results"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/combin"
	"gonum.org/v1/gonum/stat/distuv"
)

// UTest is the outcome of a two-sided Mann–Whitney U test.
type UTest struct {
	U float64 `json:"u"`
	P float64 `json:"p"`
	// MinP is the smallest p-value these sample sizes can give at all:
	// with 3 vs 3 repeats it is 0.1, so no difference can be significant
	// at 0.05 however large.
	MinP  float64 `json:"min_p"`
	Exact bool    `json:"exact"`
}

// exactLimit: up to this many samples in all, the U distribution is
// counted exactly (ties included); beyond it the normal approximation
// with a tie correction is close enough.
const exactLimit = 50

// MannWhitney tests whether x and y come from one distribution. It works
// on ranks, so outliers and skew (latency figures) do not mislead it.
func MannWhitney(x, y []float64) UTest {
	x, y = results.SortedFinite(x), results.SortedFinite(y)
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return UTest{P: 1, MinP: 1}
	}
	all := append(slices.Clone(x), y...)
	ranks := midRanks(all) // doubled, so ties stay integers
	var r1 int
	for i := range x {
		r1 += ranks[i]
	}
	u := float64(r1)/2 - float64(n1*(n1+1))/2
	t := UTest{U: u, MinP: math.Min(1, 2/combin.GeneralizedBinomial(float64(n1+n2), float64(n1)))}
	if n1+n2 <= exactLimit {
		t.P, t.Exact = exactRankSumP(ranks, n1, r1), true
		return t
	}
	t.P = normalUP(u, n1, n2, all)
	return t
}

// midRanks ranks values (1-based) giving ties their average rank, doubled.
func midRanks(v []float64) []int {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case v[a] < v[b]:
			return -1
		case v[a] > v[b]:
			return 1
		}
		return 0
	})
	out := make([]int, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			out[idx[k]] = i + 1 + j + 1 // (rank_i + rank_j) = 2 × mid-rank
		}
		i = j + 1
	}
	return out
}

// exactRankSumP is the two-sided permutation p-value of the first group's
// (doubled) rank sum r1: the share of all ways to pick n1 of the ranks
// whose sum lies at least as far from the mean as r1 does.
func exactRankSumP(ranks []int, n1, r1 int) float64 {
	maxSum := 0
	for _, r := range ranks {
		maxSum += r
	}
	// ways[k][s]: subsets of size k with doubled rank sum s.
	ways := make([][]float64, n1+1)
	for k := range ways {
		ways[k] = make([]float64, maxSum+1)
	}
	ways[0][0] = 1
	for _, r := range ranks {
		for k := n1; k >= 1; k-- {
			for s := maxSum; s >= r; s-- {
				ways[k][s] += ways[k-1][s-r]
			}
		}
	}
	mean := float64(n1) * float64(maxSum) / float64(len(ranks))
	dist := math.Abs(float64(r1) - mean)
	var tail, all float64
	for s, w := range ways[n1] {
		all += w
		if math.Abs(float64(s)-mean) >= dist-1e-9 {
			tail += w
		}
	}
	return math.Min(1, tail/all)
}

// normalUP is the two-sided p-value of U from its normal approximation,
// with the variance corrected for ties and a continuity correction.
func normalUP(u float64, n1, n2 int, all []float64) float64 {
	n := float64(n1 + n2)
	sorted := results.SortedFinite(all)
	var ties float64
	for i := 0; i < len(sorted); {
		j := i
		for j < len(sorted) && sorted[j] == sorted[i] {
			j++
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	mu := float64(n1*n2) / 2
	sigma := math.Sqrt(float64(n1*n2) / 12 * ((n + 1) - ties/(n*(n-1))))
	if sigma == 0 {
		return 1
	}
	z := (math.Abs(u-mu) - 0.5) / sigma
	if z < 0 {
		z = 0
	}
	return math.Min(1, 2*distuv.UnitNormal.Survival(z))
}

// meanOf is the plain mean, 0 for none.
func meanOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return stat.Mean(v, nil)
}
