package report

import (
	"lockbench/results"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// synthCell is a cell of n repeats whose throughput is cps times
// log-normal noise (sd ≈ noise) and whose p99 moves inversely.
func synthCompareCell(rng *rand.Rand, workers string, n int, cps, noise float64) CompareCell {
	runs := make([]results.Run, n)
	for i := range runs {
		v := cps * math.Exp(rng.NormFloat64()*noise)
		runs[i] = results.Run{
			Config:          &results.CellConfig{Settings: results.Settings{Workers: atoi(workers), Mode: "multiplexed", Local: 5}},
			Throughput:      results.Throughput{CyclesPerSec: v, AcquiresPerSec: v},
			AcquireLatency:  results.Latency{P50: 1e6 / v, P99: 5e6 / v, P999: 9e6 / v, Count: int64(v)},
			ReleaseLatency:  results.Latency{P50: 1e6 / v, P99: 4e6 / v, Count: int64(v)},
			Outcomes:        results.Outcomes{Tally: results.Tally{Acquired: int64(v)}},
			MeasuredSeconds: 1,
		}
	}
	r := results.CombineRepeats(runs)
	return CompareCell{Label: "workers=" + workers, Settings: identity(r.Config, nil), Run: r}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func rowOf(t *testing.T, c *Comparison, figure string) CompareRow {
	t.Helper()
	for _, r := range c.Rows {
		if r.Figure == figure {
			return r
		}
	}
	t.Fatalf("no %s row in %+v", figure, c.Rows)
	return CompareRow{}
}

func TestCompareDetectsAKnownShift(t *testing.T) {
	detected := 0
	const trials = 200
	for seed := range uint64(trials) {
		rng := rand.New(rand.NewPCG(seed, 1))
		old := []CompareCell{synthCompareCell(rng, "16", 5, 10000, 0.03)}
		cur := []CompareCell{synthCompareCell(rng, "16", 5, 9000, 0.03)} // −10%
		c, err := Compare(old, cur, nil, DefaultAlpha)
		if err != nil {
			t.Fatal(err)
		}
		r := rowOf(t, c, "cycles_per_sec")
		if r.Significant() {
			detected++
			if r.Delta > -3 || r.Delta < -17 {
				t.Errorf("seed %d: delta %.1f%%, want about −10%%", seed, r.Delta)
			}
		}
		if detected == 1 && r.Significant() { // the first seed that shows it
			chk := c.CheckFailOn([]FailOn{mustFailOn(t, "cycles_per_sec<-5%"), mustFailOn(t, "acquire_p99>5%"), mustFailOn(t, "cycles_per_sec>5%")})
			if len(chk.Broken) != 2 || !strings.Contains(chk.Broken[0], "cycles_per_sec<-5%") || !strings.Contains(chk.Broken[1], "acquire_p99>5%") {
				t.Errorf("fail-on broken: %v", chk.Broken)
			}
		}
	}
	// A 10% shift under 3% noise with 5+5 repeats: found nearly always.
	if detected < trials*95/100 {
		t.Errorf("shift detected in %d of %d seeds, want ≥ 95%%", detected, trials)
	}
}

func TestCompareFalsePositiveRate(t *testing.T) {
	const trials = 4000
	var fp int
	for seed := range uint64(trials) {
		rng := rand.New(rand.NewPCG(seed, 2))
		old := []CompareCell{synthCompareCell(rng, "16", 5, 10000, 0.05)}
		cur := []CompareCell{synthCompareCell(rng, "16", 5, 10000, 0.05)}
		c, _ := Compare(old, cur, nil, DefaultAlpha)
		r := rowOf(t, c, "cycles_per_sec")
		if r.Verdict == "too few repeats" {
			t.Fatal("5 vs 5 repeats can reach 0.05")
		}
		if r.Significant() {
			fp++
		}
	}
	rate := float64(fp) / trials
	// The exact test holds its level: the rate is at most alpha (plus
	// sampling error); 5+5 can reach p = 8/252 ≈ 0.032 but not 0.05 itself.
	if limit := DefaultAlpha + 3*math.Sqrt(DefaultAlpha*(1-DefaultAlpha)/trials); rate > limit {
		t.Errorf("false-positive rate %.4f over %d seeds, above %.4f", rate, trials, limit)
	}
	if rate < 0.015 {
		t.Errorf("false-positive rate %.4f: the test never fires, it cannot detect anything", rate)
	}
	t.Logf("false-positive rate at alpha %.2f: %.4f (%d of %d)", DefaultAlpha, rate, fp, trials)
}

func TestCompareTooFewRepeatsAndMatching(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	// 3 vs 3 can never be significant at 0.05, however large the shift.
	c, err := Compare([]CompareCell{synthCompareCell(rng, "1", 3, 1000, 0.01)}, []CompareCell{synthCompareCell(rng, "64", 3, 50000, 0.01)}, []string{"workers"}, DefaultAlpha)
	if err != nil {
		t.Fatal(err)
	}
	r := rowOf(t, c, "cycles_per_sec")
	if r.Verdict != "too few repeats" || r.Changed != "workers 1 → 64" {
		t.Errorf("3 vs 3: %+v", r)
	}
	if chk := c.CheckFailOn([]FailOn{mustFailOn(t, "cycles_per_sec>1%")}); len(chk.Unjudged) != 1 || len(chk.Broken) != 0 {
		t.Errorf("an unjudgeable guard must say so: %+v", chk)
	}
	// Without --ignore the cells do not match, and the closest is named.
	c, _ = Compare([]CompareCell{synthCompareCell(rng, "1", 3, 1000, 0.01)}, []CompareCell{synthCompareCell(rng, "64", 3, 1000, 0.01)}, nil, DefaultAlpha)
	if c.Matched != 0 || len(c.NewOnly) != 1 || !strings.Contains(c.NewOnly[0], "differs in workers") {
		t.Errorf("unmatched: %+v", c)
	}
	if _, err := Compare(nil, nil, []string{"nope"}, DefaultAlpha); err == nil || !strings.Contains(err.Error(), "--ignore") {
		t.Errorf("unknown --ignore: %v", err)
	}
	for _, bad := range []string{"cycles_per_sec<-5", "speed<5%", "cycles_per_sec=5%", "cycles_per_sec<x%"} {
		if _, err := ParseFailOn(bad); err == nil || !strings.Contains(err.Error(), "--fail-on") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	// Every output format writes every row.
	for _, f := range CompareFormats {
		var b strings.Builder
		if err := WriteComparison(&b, c, f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func mustFailOn(t *testing.T, s string) FailOn {
	t.Helper()
	f, err := ParseFailOn(s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
