package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/gonum/stat/distuv"

	"lockbench/results"
)

// histOf is a latency histogram of n acquires, the k-th (1-based) taking
// at(k) µs.
func histOf(n int, at func(k int) int64) *hdrhistogram.Histogram {
	h := results.NewHistogram()
	for k := 1; k <= n; k++ {
		if err := h.RecordValue(at(k)); err != nil {
			panic(err)
		}
	}
	return h
}

// The p99's 95% interval stands on the ranks Binomial(n, 0.99) gives: for
// 10,000 samples the 9,880th and 9,920th (computed apart, by summing the
// binomial's terms exactly in Python: P(B ≤ 9879) = 2.21%, P(9880 ≤ B ≤
// 9919) = 95.58%); 1,200 samples (three 2 s repeats at 200/s) give 1,181
// and 1,195; 300 have no rank above the p99 to bound it. Each pair is the
// narrowest of its kind: one rank further in loses the 95%.
func TestQuantileRanks(t *testing.T) {
	for _, c := range []struct {
		n, r, s int
		ok      bool
	}{{10000, 9880, 9920, true}, {1200, 1181, 1195, true}, {100000, 98938, 99062, true}, {300, 293, 301, false}} {
		r, s, ok := QuantileRanks(c.n, 0.99)
		if r != c.r || s != c.s || ok != c.ok {
			t.Errorf("n = %d: ranks %d, %d (ok %v); want %d, %d (ok %v)", c.n, r, s, ok, c.r, c.s, c.ok)
		}
		b := distuv.Binomial{N: float64(c.n), P: 0.99}
		if lo := b.CDF(float64(r - 1)); lo > 0.025 || b.CDF(float64(r)) <= 0.025 {
			t.Errorf("n = %d: rank %d leaves %.4f below it; want the highest rank leaving at most 2.5%%", c.n, r, lo)
		}
		if hi := b.CDF(float64(s - 1)); hi < 0.975 || b.CDF(float64(s-2)) >= 0.975 {
			t.Errorf("n = %d: rank %d covers %.4f; want the lowest rank covering 97.5%%", c.n, s, hi)
		}
	}
}

// The interval is read off the pooled histogram at those ranks: 10,000
// acquires, 9,800 at 100 µs and then 1,005 to 2,000 µs in steps of 5 (all
// below 2,048, where the histogram keeps every µs), put the 9,880th at
// 1,400 µs, the 9,900th (the p99) at 1,500 and the 9,920th at 1,600.
func TestP99IntervalFromTheHistogram(t *testing.T) {
	h := histOf(10000, func(k int) int64 {
		if k <= 9800 {
			return 100
		}
		return 1000 + int64(k-9800)*5
	})
	ci, ok := p99CIOf(h)
	if !ok || ci.P99 != 1500 || ci.Low != 1400 || ci.High != 1600 || ci.N != 10000 || ci.LowRank != 9880 || ci.HighRank != 9920 {
		t.Fatalf("p99 interval %+v (ok %v); want 1500 µs in 1400–1600 on ranks 9880–9920", ci, ok)
	}
	if got := ci.Text(); got != "1.5 ms (95% CI 1.4 ms–1.6 ms)" {
		t.Errorf("the interval reads %q", got)
	}
	if _, ok := p99CIOf(histOf(300, func(k int) int64 { return int64(k) })); ok {
		t.Error("300 samples bound a p99 from above; no rank lies above it")
	}
	if _, ok := p99CIOf(nil); ok {
		t.Error("no histogram gave an interval")
	}
}

// A --p99 need is met when the pooled p99's interval lies within the
// bound, failed when it lies wholly over it, and not settled when it
// straddles it, when the common-rate cell's logs are missing, or on fewer
// than MinP99Samples acquires, whatever the interval says.
func TestP99NeedOnTheInterval(t *testing.T) {
	row := func(samples int64, ci *P99CI) MatrixRow {
		return MatrixRow{Design: "d", Priced: true, commonRate: true, AcquireP99: 1500, LatencySamples: samples, P99CI: ci}
	}
	ci := &P99CI{P99: 1500, Low: 1400, High: 1600, N: 10000, LowRank: 9880, HighRank: 9920}
	for _, c := range []struct {
		name  string
		row   MatrixRow
		bound time.Duration
		want  string // "" met; else a part of the one reason
	}{
		{"within", row(10000, ci), 2 * time.Millisecond, ""},
		{"at its upper end", row(10000, ci), 1600 * time.Microsecond, ""},
		{"over", row(10000, ci), time.Millisecond, "acquire p99 1.5 ms (95% CI 1.4 ms–1.6 ms) on 10000 acquires at the common rate, over 1ms"},
		{"straddles", row(10000, ci), 1500 * time.Microsecond, "acquire p99 not settled: p99 1.5 ms (95% CI 1.4 ms–1.6 ms) on 10000 acquires straddles 1.5ms"},
		{"too few", row(9999, ci), 2 * time.Millisecond, "not settled: 1.5 ms on 9999 acquires at the common rate, fewer than the 10000"},
		{"no logs", row(10000, nil), 2 * time.Millisecond, "not settled: the common-rate cell's interval logs were not found"},
	} {
		got := Needs{P99: c.bound}.judge(c.row, nil)
		switch {
		case c.want == "" && len(got) != 0:
			t.Errorf("%s: %v; want the need met", c.name, got)
		case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want)):
			t.Errorf("%s: %v; want one reason with %q", c.name, got, c.want)
		}
	}
}

// The matrix carries the interval from the common-rate cell's pooled
// histogram: on the page beside the repeats' median p99 and in the JSON
// in µs.
func TestP99IntervalInTheMatrix(t *testing.T) {
	pc := &PriceCells{SLO: 5 * time.Millisecond, Common: map[string]string{"d": "d.common"}}
	m := pricedMatrix(pc, []string{"d"}, []priced{{name: "d.common", p50: 100, p99: 1450, offered: 200, cps: 200,
		hist: histOf(10000, func(k int) int64 {
			if k <= 9800 {
				return 100
			}
			return 1000 + int64(k-9800)*5
		})}})
	r := m.Rows[0]
	if got := r.P99Text(); got != "1.45 ms; pooled 1.5 ms (95% CI 1.4 ms–1.6 ms)" {
		t.Errorf("the p99 column reads %q", got)
	}
	var js strings.Builder
	if err := m.writeJSON(&js); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"acquire_p99_ci": {
        "pooled_p99_us": 1500,
        "low_us": 1400,
        "high_us": 1600,
        "samples": 10000,`) {
		t.Errorf("the matrix JSON lacks the interval in µs:\n%s", js.String())
	}
}

// From a results directory: the committed run with one common-rate cell's
// interval log written as a sweep writes it (its repeats' intervals one
// after another) and its count set to match, so that report reads the
// pooled histogram off the file, not a figure in the cell's JSON.
func TestP99IntervalFromTheCellsLog(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(committedWhichLock)); err != nil {
		t.Fatal(err)
	}
	const stem = "cells/135-redlock-5-seq.common"
	var intervals []*hdrhistogram.Histogram
	for r := range 2 { // two repeats of 5,000: 98% at 500 µs, then 1,005–1,500 µs
		h := histOf(5000, func(k int) int64 {
			if k <= 4900 {
				return 500
			}
			return 1000 + int64(k-4900)*5
		})
		h.SetStartTimeMs(int64(r) * 1000)
		h.SetEndTimeMs(int64(r)*1000 + 1000)
		intervals = append(intervals, h)
	}
	f, err := os.Create(filepath.Join(dir, stem+".acquire.hlog"))
	if err != nil {
		t.Fatal(err)
	}
	if err := results.WriteIntervalLog(f, results.MetricAcquire, intervals); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b, err := os.ReadFile(filepath.Join(dir, stem+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"count": 15600`) {
		t.Fatalf("%s.json: no count 15600 (the committed run's three repeats of 5,200) to set to the log's 10000", stem)
	}
	b = []byte(strings.Replace(string(b), `"count": 15600`, `"count": 10000`, 1))
	if err := os.WriteFile(filepath.Join(dir, stem+".json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	needs := Needs{P99: time.Millisecond}
	s, err := Build([]string{dir}, Options{OutDir: dir, Formats: []string{"json"}, Needs: &needs})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.WhichLock.Rows {
		if r.Design != "redlock-5-seq" {
			continue
		}
		// Pooled, 9,800 at 500 µs and 1,005–1,500 µs twice over: the
		// 9,880th is 1,200, the 9,900th 1,250, the 9,920th 1,300.
		if ci := r.P99CI; ci == nil || ci.N != 10000 || ci.P99 != 1250 || ci.Low != 1200 || ci.High != 1300 {
			t.Fatalf("redlock-5-seq's pooled p99: %+v; want 1250 µs in 1200–1300 on 10000", ci)
		}
		if len(r.Reasons) != 1 || !strings.Contains(r.Reasons[0], "acquire p99 1.25 ms (95% CI 1.2 ms–1.3 ms) on 10000 acquires at the common rate, over 1ms") {
			t.Errorf("a 1 ms need on redlock-5-seq: %v", r.Reasons)
		}
		return
	}
	t.Fatal("no redlock-5-seq row")
}
