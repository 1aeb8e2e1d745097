package report

import (
	"math"
	"testing"
)

func TestMannWhitneyKnownValues(t *testing.T) {
	// 3 vs 3 completely separated: the smallest p there is, 2/20.
	u := MannWhitney([]float64{1, 2, 3}, []float64{4, 5, 6})
	if math.Abs(u.P-0.1) > 1e-12 || math.Abs(u.MinP-0.1) > 1e-12 || u.U != 0 {
		t.Errorf("3 vs 3 separated: %+v, want U=0 p=0.1 minP=0.1", u)
	}
	// 5 vs 5 separated: 2/252.
	u = MannWhitney([]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10})
	if math.Abs(u.P-2.0/252) > 1e-12 {
		t.Errorf("5 vs 5 separated: p=%v, want %v", u.P, 2.0/252)
	}
	// Identical samples: no evidence at all.
	u = MannWhitney([]float64{5, 5, 5, 5}, []float64{5, 5, 5, 5})
	if u.P != 1 {
		t.Errorf("all tied: p=%v, want 1", u.P)
	}
	// R's wilcox.test on these gives W = 58; with ties the exact p is
	// checked against an enumeration of every split.
	x := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	y := []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}
	u = MannWhitney(x, y)
	if u.U != 58 {
		t.Errorf("U=%v, want 58", u.U)
	}
	if want := bruteForceP(x, y); math.Abs(u.P-want) > 1e-9 {
		t.Errorf("exact p=%v, brute force %v", u.P, want)
	}
	// The normal approximation agrees with the exact count on a larger case.
	var a, b []float64
	for i := range 30 {
		a = append(a, float64(i)+0.5)
		b = append(b, float64(i)*1.1)
	}
	ex := MannWhitney(a[:20], b[:20])
	ap := normalUP(ex.U, 20, 20, append(append([]float64{}, a[:20]...), b[:20]...))
	if math.Abs(ex.P-ap) > 0.02 {
		t.Errorf("exact %v vs normal %v", ex.P, ap)
	}
}

// bruteForceP enumerates every split of the pooled samples.
func bruteForceP(x, y []float64) float64 {
	all := append(append([]float64{}, x...), y...)
	ranks := midRanks(all)
	n, n1 := len(all), len(x)
	total := 0
	for _, r := range ranks {
		total += r
	}
	mean := float64(n1*total) / float64(n)
	r1 := 0
	for i := range x {
		r1 += ranks[i]
	}
	d := math.Abs(float64(r1) - mean)
	var hit, all2 float64
	for mask := 0; mask < 1<<n; mask++ {
		if popcount(mask) != n1 {
			continue
		}
		s := 0
		for i := range n {
			if mask&(1<<i) != 0 {
				s += ranks[i]
			}
		}
		all2++
		if math.Abs(float64(s)-mean) >= d-1e-9 {
			hit++
		}
	}
	return hit / all2
}

func popcount(x int) int {
	c := 0
	for ; x > 0; x &= x - 1 {
		c++
	}
	return c
}
