package report

import (
	"cmp"
	"encoding/json"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"lockbench/results"
)

// priced is one benchmark cell of a design's price, as the report loads it.
type priced struct {
	name             string
	workers          int
	cps, p50, p99    float64
	limit            string
	spreadLo, spread float64 // the repeats' cycles/s range (0: one run)
	ttl99            float64 // hot key: time to lock p99 (µs)
	acquired         int64
	strategy, driver string
	idle             int     // workers that won nothing in the window
	cpu              float64 // servers' CPU µs per lock
	offered          float64 // an open loop's rate (0: closed loop)
	samples          int64   // acquires the latency figures stand on (0: 10000)
	// hist is the acquires' pooled histogram, as the cell's interval
	// logs add up (nil: no logs).
	hist *hdrhistogram.Histogram
}

// pricedMatrix builds a matrix of designs with no fault cell, priced by
// the cells given (named as choose names them), under pc.
func pricedMatrix(pc *PriceCells, designs []string, ps []priced) *WhichLock {
	var cells []CellSummary
	var loaded []*cell
	for _, p := range ps {
		c := CellSummary{Index: len(cells), Label: p.name, Workers: p.workers, CyclesPerSec: p.cps, SuccessRatio: 1,
			Acquire: results.Latency{P50: p.p50, P99: p.p99, Count: cmp.Or(p.samples, 10000)}, Tally: results.Tally{Acquired: max(p.acquired, 100)},
			MeasuredSeconds: 2, WaitStrategy: p.strategy, Driver: p.driver}
		if p.offered > 0 {
			c.Load, c.Rate = "open", p.offered
		}
		if p.limit != "" {
			c.Limit = &results.Limit{By: p.limit, Evidence: "synthetic"}
		}
		if p.spread > 0 {
			c.Repeats = &results.Repeats{Count: 3, Spread: map[string]results.Spread{"cycles_per_sec": {Median: p.cps, Min: p.spreadLo, Max: p.spread, N: 3}}}
		}
		if p.ttl99 > 0 {
			c.Contention = &results.Contention{TimeToLock: results.Latency{P99: p.ttl99}}
			c.Fairness = &results.Fairness{Workers: p.workers, Idle: p.idle}
		}
		l := &cell{Info: results.CellInfo{File: "cells/" + p.name + ".json"}, Totals: map[string]*hdrhistogram.Histogram{}}
		if p.driver != "" { // a client of Redis' single master: its topology names how it waits
			l.Run.Config = &results.CellConfig{Settings: results.Settings{Topology: "single", Driver: p.driver}}
			l.Set = settingsOf(l.Run.Config)
		}
		if p.hist != nil {
			l.Totals[results.MetricAcquire] = p.hist
		}
		if p.cpu > 0 {
			l.Run.Servers = &results.Servers{CPUMicrosCycle: p.cpu}
		}
		cells, loaded = append(cells, c), append(loaded, l)
	}
	return buildWhichLock(&WhichLockPlan{Designs: designs, PriceCells: pc}, results.Manifest{}, loaded, cells)
}

// A design's capacity is its sweep's knee as the capacity planner finds
// it: the best step within the SLO, limited by the first heavier step
// that broke it (served with CPU to spare: latency), with the knee's
// repeats' range; a lower bound when no step broke the SLO or the machine
// limited it; none when no step met it. Steps may come in any order.
func TestDesignCapacityIsTheKnee(t *testing.T) {
	pc := &PriceCells{SLO: 10 * time.Millisecond, Ladder: map[string][]string{
		"srv":  {"srv.price-16", "srv.price-1", "srv.price-4"}, // out of order
		"lat":  {"lat.price-1", "lat.price-4"},
		"mach": {"mach.price-1", "mach.price-4"},
		"none": {"none.price-1"},
		"open": {"open.price-1", "open.price-4"},
		"met":  {"met.price-1", "met.price-4"}, // every step met the SLO, its knee's limiter "latency"
		"gone": {"gone.price-1"},               // its cell was not measured
	}}
	m := pricedMatrix(pc, []string{"srv", "lat", "mach", "none", "open", "met", "gone"}, []priced{
		{name: "srv.price-1", workers: 1, cps: 1000, p99: 2000, limit: results.LimitLatency},
		{name: "srv.price-4", workers: 4, cps: 3500, p99: 6000, limit: results.LimitLatency, spreadLo: 3100, spread: 3900, cpu: 42},
		{name: "srv.price-16", workers: 16, cps: 5000, p99: 25000, limit: results.LimitServer},
		{name: "lat.price-1", workers: 1, cps: 800, p99: 4000, limit: results.LimitNone},
		{name: "lat.price-4", workers: 4, cps: 900, p99: 15000, limit: results.LimitNone},
		{name: "mach.price-1", workers: 1, cps: 900, p99: 9000, limit: results.LimitLatency},
		{name: "mach.price-4", workers: 4, cps: 2000, p99: 12000, limit: results.LimitMachine},
		{name: "none.price-1", workers: 1, cps: 90, p99: 12000, limit: results.LimitServer},
		{name: "open.price-1", workers: 1, cps: 900, p99: 500, limit: results.LimitNone},
		{name: "open.price-4", workers: 4, cps: 3000, p99: 900, limit: results.LimitNone},
		{name: "met.price-1", workers: 1, cps: 700, p99: 900, limit: results.LimitLatency},
		{name: "met.price-4", workers: 4, cps: 2500, p99: 9000, limit: results.LimitLatency},
	})
	want := map[string]struct {
		cps      float64
		lower    bool
		limiter  string
		text     string
		cpuWords string
	}{
		"srv":  {3500, false, results.LimitServer, "3500 (3100–3900), server; the knee lies between it and 5000 at 16 workers, which broke the SLO (p99 25 ms)", "42.0"},
		"lat":  {800, false, results.LimitLatency, "800, latency; the knee lies between it and 900 at 4 workers, which broke the SLO (p99 15 ms)", "—"},
		"mach": {900, true, results.LimitMachine, "≥ 900, machine; the knee lies between it and 2000 at 4 workers, which broke the SLO (p99 12 ms)", "—"},
		"none": {0, false, "", "none within the SLO (p99 12 ms at 1 worker(s))", "—"},
		"open": {3000, true, results.LimitNone, "≥ 3000, SLO not reached", "—"},
		"met":  {2500, true, results.LimitNone, "≥ 2500, SLO not reached", "—"},
		"gone": {0, false, "", "—", "—"},
	}
	for _, r := range m.Rows {
		w := want[r.Design]
		cp := r.Capacity
		if cp == nil {
			t.Fatalf("%s: no capacity", r.Design)
		}
		if cp.CyclesPerSec != w.cps || cp.LowerBound != w.lower || cp.Limiter != w.limiter {
			t.Errorf("%s: capacity %+v; want %.0f cycles/s, lower bound %v, limited by %q", r.Design, *cp, w.cps, w.lower, w.limiter)
		}
		if got := r.CapacityText(); got != w.text {
			t.Errorf("%s: capacity reads %q; want %q", r.Design, got, w.text)
		}
		if got := r.CPUText(); got != w.cpuWords {
			t.Errorf("%s: server CPU at capacity reads %q; want %q", r.Design, got, w.cpuWords)
		}
	}
	if cp := m.Rows[0].Capacity; cp.Workers != "4" || cp.Result != "cells/srv.price-4.json" || !strings.Contains(cp.Note, "at 16 workers") {
		t.Errorf("srv: the knee is not the 4-worker step, or the note does not name the step that broke the SLO: %+v", *cp)
	}
}

// Time to lock on a hot key is read against the FIFO ideal, (workers − 1)
// × the key's period (measured seconds / acquisitions): a queue near it,
// a retrying client far over it; a design whose hot cell was not measured
// reads —, as do its other unmeasured price figures.
func TestHotKeyAgainstTheFIFOIdeal(t *testing.T) {
	pc := &PriceCells{SLO: 10 * time.Millisecond, CommonWork: "load: open, rate: 200",
		Hot:    map[string]string{"q": "q.hot", "r": "r.hot", "gone": "gone.hot", "rd": "rd.hot"},
		Common: map[string]string{"q": "q.common", "r": "r.common", "gone": "gone.common"}}
	// 2 s / 800 acquisitions: a 2.5 ms period, 7 × 2.5 = 17.5 ms ideal.
	m := pricedMatrix(pc, []string{"q", "r", "gone", "rd"}, []priced{
		{name: "rd.hot", workers: 8, acquired: 800, ttl99: 90000, strategy: "retry", driver: "rueidislock"},
		{name: "q.hot", workers: 8, acquired: 800, ttl99: 21000, strategy: "queue"},
		{name: "r.hot", workers: 8, acquired: 800, ttl99: 175000, strategy: "retry"},
		{name: "q.common", p50: 400, p99: 3000},
		{name: "gone.none", cps: 19, p50: 300, p99: 700000, workers: 4}, // a quiet cell: its holds' pace, not a price
		{name: "r.common", p50: 150, p99: 900},
	})
	q, r, gone := m.Rows[0], m.Rows[1], m.Rows[2]
	if q.Hot == nil || r.Hot == nil {
		t.Fatalf("no hot key: %+v %+v", q.Hot, r.Hot)
	}
	if q.Hot.FIFOIdeal != 17500 || q.Hot.Ratio < 1.19 || q.Hot.Ratio > 1.21 || r.Hot.Ratio < 9.99 || r.Hot.Ratio > 10.01 {
		t.Errorf("FIFO ideal %v µs (want 17500), ratios %v and %v (want 1.2 and 10)", q.Hot.FIFOIdeal, q.Hot.Ratio, r.Hot.Ratio)
	}
	if got := m.Rows[3].TimeToLockText(); got != "90 ms (5.1× FIFO, notify, rueidislock's own)" {
		t.Errorf("rueidislock's hot key reads %q; want its own wait named, not the retry setting it ignores", got)
	}
	if got := q.TimeToLockText(); got != "21 ms (1.2× FIFO, queue)" {
		t.Errorf("queue's hot key reads %q", got)
	}
	if got := r.P99Text(); got != "900 µs" {
		t.Errorf("the common rate's p99 reads %q; want 900 µs", got)
	}
	for _, got := range []string{gone.CyclesText(), gone.P50Text(), gone.P99Text(), gone.TimeToLockText(), gone.CPUText()} {
		if got != "—" {
			t.Errorf("a design with no price cell measured reads %q; want —", got)
		}
	}
	var page, md strings.Builder
	if err := m.writeHTML(&page); err != nil {
		t.Fatal(err)
	}
	if err := m.writeMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `<a href="cells/r.hot.json">175 ms (10.0× FIFO, retry)</a>`) {
		t.Errorf("the page does not show the retrying design's hot key, linked to its cell:\n%s", page.String())
	}
	if !strings.Contains(md.String(), "| gone | — | — | — | — | — |") || !strings.Contains(md.String(), "acquire p99 at 200/s | hot key: time to lock p99 |") {
		t.Errorf("the markdown does not show the price columns, — where unmeasured:\n%s", md.String())
	}
	g, err := json.Marshal(gone)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"cycles_per_sec"`, `"acquire_p99_us"`, `"acquire_p50_us"`, `"price_result"`} {
		if strings.Contains(string(g), key) {
			t.Errorf("an unpriced design's JSON carries %s (its quiet cell's?): %s", key, g)
		}
	}
	b, err := json.Marshal(m.Rows[:2])
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"hot_key":`, `"fifo_ideal_us":17500`, `"wait_strategy":"queue"`, `"acquire_p99_us":900`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("the rows' JSON lacks %s: %s", key, b)
		}
	}
	if strings.Contains(string(b), `"time_to_lock_p99_us":0`) || strings.Contains(string(b), `"price_result":""`) {
		t.Errorf("the rows' JSON carries an unmeasured figure as a value: %s", b)
	}
}

// A --p99 need is judged on the acquire p99 at the common rate: a design
// whose pooled p99's interval lies over it fails with that figure named
// (and the rate it fell short of said), one under it does not, and one
// whose common-rate cell was not measured fails for want of it.
func TestP99NeedReadsTheCommonRate(t *testing.T) {
	pc := &PriceCells{SLO: 5 * time.Millisecond, Common: map[string]string{"fast": "fast.common", "slow": "slow.common", "gone": "gone.common"}}
	m := pricedMatrix(pc, []string{"fast", "slow", "gone"}, []priced{
		{name: "slow.common", p50: 3000, p99: 41000, offered: 200, cps: 130, hist: histOf(10000, func(int) int64 { return 41000 })},
		{name: "fast.common", p50: 100, p99: 900, offered: 200, cps: 199, hist: histOf(10000, func(k int) int64 { return int64(k / 10) })},
	})
	m.Needs = Needs{P99: 5 * time.Millisecond}
	for i := range m.Rows {
		m.Rows[i].Reasons = m.Needs.judge(m.Rows[i], nil)
	}
	fast, slow, gone := m.Rows[0], m.Rows[1], m.Rows[2]
	if len(fast.Reasons) != 0 {
		t.Errorf("900 µs at the common rate fails a 5 ms need: %v", fast.Reasons)
	}
	if len(slow.Reasons) != 1 || !strings.Contains(slow.Reasons[0], "acquire p99 41 ms (95% CI 41 ms–41 ms) on 10000 acquires at the common rate, over 5ms") {
		t.Errorf("41 ms at the common rate: %v; want one reason naming it", slow.Reasons)
	}
	if got, want := slow.P99Text()+" | "+fast.P99Text(), "41 ms (served only 130/s); pooled 41 ms (95% CI 41 ms–41 ms) | 900 µs; pooled 990 µs (95% CI 988 µs–992 µs)"; got != want {
		t.Errorf("the common rate's p99 reads %q; want %q (the rate not served said, 199 of 200/s served)", got, want)
	}
	if len(gone.Reasons) != 1 || !strings.Contains(gone.Reasons[0], "not measured") {
		t.Errorf("no common-rate cell: %v; want one reason saying so", gone.Reasons)
	}
	// On 1200 acquires (3 repeats of 2 s at 200/s) a p99 is not settled,
	// met or not: a few slow acquires would decide it.
	few := pricedMatrix(pc, []string{"fast"}, []priced{{name: "fast.common", p50: 100, p99: 900, offered: 200, cps: 199, samples: 1200}})
	if got := (Needs{P99: 5 * time.Millisecond}).judge(few.Rows[0], nil); len(got) != 1 || !strings.Contains(got[0], "not settled: 900 µs on 1200 acquires at the common rate, fewer than the 10000") {
		t.Errorf("a p99 on 1200 acquires: %v; want not settled", got)
	}
}

// report --need/--p99 quotes capacities at its --p99 as choose would have
// (the default SLO without one), from the same sweep: a looser p99 admits
// a heavier step.
func TestRejudgedCapacityTakesTheNewP99(t *testing.T) {
	steps := []priced{
		{name: "d.price-1", workers: 1, cps: 1000, p99: 4000, limit: results.LimitNone},
		{name: "d.price-4", workers: 4, cps: 3000, p99: 15000, limit: results.LimitServer},
	}
	capacityAt := func(needs Needs) float64 {
		p := &WhichLockPlan{PriceCells: &PriceCells{SLO: 5 * time.Millisecond, Ladder: map[string][]string{"d": {"d.price-1", "d.price-4"}}}}
		p.judgeBy(needs)
		m := pricedMatrix(p.PriceCells, []string{"d"}, steps)
		return m.Rows[0].Capacity.CyclesPerSec
	}
	if got := capacityAt(Needs{P99: 20 * time.Millisecond}); got != 3000 {
		t.Errorf("at --p99 20ms: %v cycles/s; want the 4-worker step's 3000", got)
	}
	if got := capacityAt(Needs{Fencing: true}); got != 1000 {
		t.Errorf("with no --p99 (the default 10 ms): %v cycles/s; want the 1-worker step's 1000", got)
	}
}

// A hot key's time to lock counts the waits its p99 lacks: when workers
// that won nothing in the window (each waited through it) are over 1% of
// the waits, the p99 is at least the window, marked ≥; one such worker
// among 800 acquisitions keeps the measured p99, still marked ≥ (its wait
// is in no p99) and said.
func TestHotKeyCountsTheWaitsItsP99Lacks(t *testing.T) {
	pc := &PriceCells{Hot: map[string]string{"hog": "hog.hot", "one": "one.hot"}}
	m := pricedMatrix(pc, []string{"hog", "one"}, []priced{
		// One worker re-takes the key as it releases it, 7 wait on: 100
		// acquisitions in 2 s, each at once.
		{name: "hog.hot", workers: 8, acquired: 100, ttl99: 611, idle: 7, strategy: "retry"},
		{name: "one.hot", workers: 8, acquired: 800, ttl99: 21000, idle: 1, strategy: "queue"},
	})
	hog, one := m.Rows[0].Hot, m.Rows[1].Hot
	// 2 s over 7 × (2 s / 100): 14.3× at least.
	if !hog.LowerBound || hog.TimeToLockP99 != 2e6 || hog.Ratio < 14.2 || hog.Ratio > 14.4 {
		t.Errorf("7 of 8 workers idle: %+v; want ≥ 2 s, ≥ 14.3× FIFO", *hog)
	}
	if got := m.Rows[0].TimeToLockText(); got != "≥ 2 s (≥ 14.3× FIFO, retry, 7 worker(s) won nothing)" {
		t.Errorf("the starved hot key reads %q", got)
	}
	if !one.LowerBound || one.TimeToLockP99 != 21000 || m.Rows[1].TimeToLockText() != "≥ 21 ms (≥ 1.2× FIFO, queue, 1 worker(s) won nothing)" {
		t.Errorf("1 idle worker among 800 acquisitions: %+v, %q; want the measured p99 as a lower bound", *one, m.Rows[1].TimeToLockText())
	}
}
