package report

import (
	"lockbench/results"
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

func TestCombineRepeats(t *testing.T) {
	mk := func(cps, p99 float64, acq int64, cpu float64) results.Run {
		return results.Run{
			Throughput:     results.Throughput{CyclesPerSec: cps, AcquiresPerSec: cps},
			AcquireLatency: results.Latency{P50: p99 / 10, P99: p99, Max: p99 * 3, Mean: p99 / 5, Count: acq},
			ReleaseLatency: results.Latency{P50: 1, P99: 2, Count: acq},
			Outcomes: results.Outcomes{Acquired: acq, PerMaster: map[string]results.MasterOutcomes{
				"127.0.0.1:1": {OK: acq}, "127.0.0.1:2": {OK: acq}}},
			Client:          results.Client{CPUSeconds: cpu, Cores: 2, CPUShare: 0.3},
			MeasuredSeconds: 1,
		}
	}
	second := mk(300, 900, 300, 2)
	second.Outcomes.PerMaster = map[string]results.MasterOutcomes{"127.0.0.1:7": {OK: 300}, "127.0.0.1:8": {OK: 300}} // restarted masters
	c := CombineRepeats([]results.Run{mk(100, 500, 100, 1), second, mk(200, 700, 200, 1)})
	if c.Repeats == nil || c.Repeats.Count != 3 || len(c.Repeats.Runs) != 3 {
		t.Fatalf("repeats block: %+v", c.Repeats)
	}
	if c.Throughput.CyclesPerSec != 200 || c.AcquireLatency.P99 != 700 {
		t.Errorf("headline is not the median: %v cycles/s, p99 %v", c.Throughput.CyclesPerSec, c.AcquireLatency.P99)
	}
	if c.Outcomes.Acquired != 600 || c.AcquireLatency.Count != 600 || c.AcquireLatency.Max != 2700 {
		t.Errorf("counts/max do not add: %+v", c.AcquireLatency)
	}
	if len(c.Outcomes.PerMaster) != 2 || c.Outcomes.PerMaster["127.0.0.1:1"].OK != 600 {
		t.Errorf("per master by position: %+v", c.Outcomes.PerMaster)
	}
	if c.Client.Cores != 2 || c.Client.CPUSeconds != 4 || c.MeasuredSeconds != 3 {
		t.Errorf("client %+v, measured %v", c.Client, c.MeasuredSeconds)
	}
	sp := c.Repeats.Spread["cycles_per_sec"]
	if sp.Min != 100 || sp.Max != 300 || sp.Median != 200 || sp.N != 3 {
		t.Errorf("spread %+v", sp)
	}
	if got := Samples(c, Figures[0]); len(got) != 3 || got[1] != 300 {
		t.Errorf("samples %v", got)
	}
	if one := CombineRepeats([]results.Run{mk(1, 1, 1, 1)}); one.Repeats != nil {
		t.Error("one repeat got a repeats block")
	}
}
