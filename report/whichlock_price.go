package report

import (
	"fmt"
	"sort"
	"time"

	"lockbench/results"
)

// The names of a design's price cells after its own: design.price-W (the
// capacity sweep at W workers), design.common (one rate every design
// serves) and design.hot (one hot key).
const (
	CommonCell = "common"
	HotCell    = "hot"
)

// DefaultSLO is the acquire p99 a capacity is quoted at without --p99.
const DefaultSLO = 10 * time.Millisecond

// CapacitySLO is the acquire p99 a capacity is quoted at for a --p99 of
// p99 (0: none given).
func CapacitySLO(p99 time.Duration) time.Duration {
	if p99 > 0 {
		return p99
	}
	return DefaultSLO
}

// judgeBy puts needs in place of the plan's, and quotes the capacities at
// their --p99 as choose would have: report --need/--p99 on a finished run
// gives the page choose gives with the same flags.
func (p *WhichLockPlan) judgeBy(needs Needs) {
	p.Needs = needs
	if p.PriceCells != nil {
		pc := *p.PriceCells
		pc.SLO = CapacitySLO(needs.P99)
		p.PriceCells = &pc
	}
}

// PriceCells are which benchmark cells price each design, and their work.
type PriceCells struct {
	Ladder map[string][]string `json:"ladder"` // design → its capacity sweep's cells, lightest first
	Common map[string]string   `json:"common"`
	Hot    map[string]string   `json:"hot"`
	SLO    time.Duration       `json:"slo_p99"`
	// The settings each kind of cell lays over a design's.
	LadderWork string `json:"ladder_work"`
	CommonWork string `json:"common_work"`
	HotWork    string `json:"hot_work"`
}

// DesignCapacity is a design's highest lock rate within the SLO.
type DesignCapacity struct {
	// CyclesPerSec is the median of the best step within the SLO (0: no
	// step met it), Min..Max its repeats' range.
	CyclesPerSec float64 `json:"cycles_per_sec"`
	Min          float64 `json:"min"`
	Max          float64 `json:"max"`
	Workers      string  `json:"workers,omitempty"` // the step's
	// LowerBound: no heavier step broke the SLO, or the generator or the
	// shared machine limited it: the servers may serve more.
	LowerBound bool   `json:"lower_bound"`
	Limiter    string `json:"limiter,omitempty"` // what stopped it (results.Limit's verdict)
	Result     string `json:"result,omitempty"`
	Steps      int    `json:"steps"`
	// Note says in words what the knee is and what limited it (the
	// capacity planner's).
	Note string `json:"note,omitempty"`
	// Lightest: the lightest step's acquire p99 (µs) and workers, to say
	// how far a design that met the SLO at no step was from it.
	LightestP99     float64 `json:"lightest_p99_us,omitempty"`
	LightestWorkers int     `json:"lightest_workers,omitempty"`
	// Broke: the first heavier step that broke the SLO (its workers,
	// cycles/s and acquire p99 in µs): the knee lies between the two
	// steps. Nil: every heavier step met it (the SLO not reached).
	Broke *BrokenStep `json:"broke_at,omitempty"`
	// Overlaps are the designs whose capacity span overlaps this one's:
	// no order is claimed between them (none: the spans are apart).
	Overlaps []string `json:"overlaps,omitempty"`
	cell     string   // the step's name
}

// HotKey is time to lock on one hot key beside the FIFO ideal: a waiter
// in a first-in-first-out queue waits for each other contender's turn
// once, (workers − 1) × the key's measured period.
type HotKey struct {
	TimeToLockP99 float64 `json:"time_to_lock_p99_us"`
	FIFOIdeal     float64 `json:"fifo_ideal_us"`
	Ratio         float64 `json:"ratio"`
	Strategy      string  `json:"wait_strategy,omitempty"`
	// GaveUp callers waited out wait_time, and Idle workers won nothing
	// in the window (each waited through it): neither wait is in the
	// measured p99. When they are over 1% of the waits, the p99 is at
	// least the shortest of them (LowerBound; Ratio then too).
	GaveUp     int64  `json:"gave_up,omitempty"`
	Idle       int    `json:"idle_workers,omitempty"`
	LowerBound bool   `json:"lower_bound,omitempty"`
	Result     string `json:"result,omitempty"`
}

// hotKeyOf is a hot key cell's time to lock beside the FIFO ideal, nil
// when it won too little to have a period.
func hotKeyOf(c CellSummary, l *cell) *HotKey {
	if c.Contention == nil || c.Acquired < 2 || c.MeasuredSeconds <= 0 {
		return nil
	}
	period := c.MeasuredSeconds * 1e6 / float64(c.Acquired)
	h := &HotKey{TimeToLockP99: c.Contention.TimeToLock.P99, FIFOIdeal: float64(max(c.Workers-1, 1)) * period,
		Strategy: waitOf(c, l), GaveUp: c.Contention.GaveUp, Result: l.Info.File}
	floor := c.MeasuredSeconds * 1e6 // an idle worker's wait spans the window
	if c.Fairness != nil {
		h.Idle = c.Fairness.Idle
	}
	if h.Idle == 0 {
		floor = 0
	}
	if w := c.Contention.GaveUpWait; h.GaveUp > 0 && w != nil && (floor == 0 || w.P50 < floor) {
		floor = w.P50 // they all end at wait_time
	}
	if unseen := h.GaveUp + int64(h.Idle); unseen*100 > c.Acquired+unseen && floor > h.TimeToLockP99 {
		h.TimeToLockP99, h.LowerBound = floor, true
	}
	// A worker that won nothing waited the whole window, a wait no p99 of
	// the winners holds: the figure is a lower bound, however few they are.
	h.LowerBound = h.LowerBound || h.Idle > 0
	h.Ratio = h.TimeToLockP99 / h.FIFOIdeal
	return h
}

// priceFromCells fills the row's price from its benchmark cells.
func (r *MatrixRow) priceFromCells(pc *PriceCells, find func(string) (CellSummary, *cell, bool)) {
	r.commonRate = true
	r.Capacity = capacityOf(pc.Ladder[r.Design], pc.SLO, find)
	if c, l, ok := find(pc.Common[r.Design]); ok && c.Acquired > 0 {
		r.Priced = true
		r.AcquireP50, r.AcquireP99, r.P50, r.P99, r.PriceResult = c.Acquire.P50, c.Acquire.P99, c.Acquire.P50, c.Acquire.P99, l.Info.File
		r.LatencySamples = c.Acquire.Count
		if ci, ok := p99CIOf(l.Totals[results.MetricAcquire]); ok {
			r.P99CI = &ci
		}
		if sp, ok := spreadOf(c, "acquire_p50"); ok {
			r.P50Range = [2]float64{sp.Min, sp.Max}
		}
		if sp, ok := spreadOf(c, "acquire_p99"); ok {
			r.P99Range = [2]float64{sp.Min, sp.Max}
		}
		if c.Load == "open" && c.CyclesPerSec < commonServed*c.Rate {
			r.CommonServed = c.CyclesPerSec // a queue grew: its latency is an overload's
		}
	}
	// The servers' CPU per lock under load (the capacity's step): at a low
	// rate their idle work would be most of it.
	if cp := r.Capacity; cp != nil && cp.Result != "" {
		_, l, _ := find(cp.cell)
		if sv := l.Run.Servers; sv != nil {
			r.ServerCPUPerLock = results.FiniteOr0(sv.TopologyMicrosCycle())
		}
	}
	if c, l, ok := find(pc.Hot[r.Design]); ok {
		r.Hot = hotKeyOf(c, l)
	}
}

// waitOf is how a cell's callers waited: its wait_strategy, or its
// topology's words for a client that waits its own way (plan.Labels).
func waitOf(c CellSummary, l *cell) string {
	if w := labelsOf(l).Wait; w != "" {
		return w
	}
	return c.WaitStrategy
}

// commonServed is the share of the common rate a design must serve for
// its latency there to be a served load's.
const commonServed = 0.95

// capacitySuccess is the share of acquires a capacity step must win.
const capacitySuccess = 0.99

// capacityOf is a design's capacity from its sweep's steps, as the
// report's capacity planner finds a knee (planCapacity): the best step
// within the SLO, limited by what stopped the first heavier step, a lower
// bound when none broke the SLO or the generator or the machine did.
func capacityOf(names []string, slo time.Duration, find func(string) (CellSummary, *cell, bool)) *DesignCapacity {
	if len(names) == 0 {
		return nil
	}
	cp := &DesignCapacity{}
	sl := SLO{AcquireP99Micros: float64(slo.Microseconds()), MinSuccess: capacitySuccess}
	var steps []CellSummary
	files := map[string]string{}
	for _, n := range names {
		c, l, ok := find(n)
		if !ok || c.Acquired == 0 {
			continue
		}
		// The choose run's SLO, not the report's: a step is judged here.
		c.MeetsSLO = c.Acquire.P99 <= sl.AcquireP99Micros && c.SuccessRatio >= sl.MinSuccess
		steps, files[c.Label] = append(steps, c), l.Info.File
	}
	if cp.Steps = len(steps); cp.Steps == 0 {
		return cp
	}
	sort.SliceStable(steps, func(i, j int) bool { return loadOf(steps[i]) < loadOf(steps[j]) })
	cp.LightestP99, cp.LightestWorkers = steps[0].Acquire.P99, steps[0].Workers
	knee := kneeStep(steps)
	if knee == nil {
		return cp
	}
	plan := planCapacity(knee.Label, steps, sl, 0)
	cp.CyclesPerSec, cp.Min, cp.Max = knee.CyclesPerSec, knee.CyclesPerSec, knee.CyclesPerSec
	if sp, ok := spreadOf(*knee, "cycles_per_sec"); ok {
		cp.Min, cp.Max = sp.Min, sp.Max
	}
	cp.Workers, cp.Result, cp.cell, cp.Note = fmt.Sprint(knee.Workers), files[knee.Label], knee.Label, plan.Note
	if plan.Limit != nil {
		cp.Limiter = plan.Limit.By
	}
	cp.LowerBound = plan.LowerBound
	if b := firstBroken(steps, loadOf(*knee)); b != nil {
		cp.Broke = &BrokenStep{Workers: b.Workers, CyclesPerSec: b.CyclesPerSec, P99: b.Acquire.P99}
	} else if cp.Limiter == results.LimitLatency {
		// The legend's "latency" is a wait that broke the SLO: no step
		// did, so the SLO was not reached (a lower bound).
		cp.Limiter, cp.LowerBound = results.LimitNone, true
	}
	return cp
}

// BrokenStep is the step past a design's knee that broke its SLO.
type BrokenStep struct {
	Workers      int     `json:"workers"`
	CyclesPerSec float64 `json:"cycles_per_sec"`
	P99          float64 `json:"acquire_p99_us"`
}

func spreadOf(c CellSummary, figure string) (results.Spread, bool) {
	if c.Repeats == nil {
		return results.Spread{}, false
	}
	sp, ok := c.Repeats.Spread[figure]
	return sp, ok && sp.N > 1
}

// CapacityText is "≥ 48210 (45100–50300), machine", "none within the
// SLO", or "—" when nothing was measured.
func (r MatrixRow) CapacityText() string {
	cp := r.Capacity
	switch {
	case cp == nil || cp.Steps == 0:
		return "—"
	case cp.CyclesPerSec == 0:
		return fmt.Sprintf("none within the SLO (p99 %s at %d worker(s))", results.FormatMicros(cp.LightestP99), cp.LightestWorkers)
	}
	t := fmt.Sprintf("%.0f", cp.CyclesPerSec)
	if cp.LowerBound {
		t = "≥ " + t
	}
	if cp.Min != cp.Max {
		t += fmt.Sprintf(" (%.0f–%.0f)", cp.Min, cp.Max)
	}
	switch cp.Limiter {
	case "":
	case results.LimitNone: // every step served what it was offered
		t += ", SLO not reached"
	default:
		t += ", " + cp.Limiter
	}
	switch b := cp.Broke; {
	case b == nil:
	case b.CyclesPerSec > cp.CyclesPerSec: // the knee lies between the two steps
		t += fmt.Sprintf("; the knee lies between it and %.0f at %d workers, which broke the SLO (p99 %s)", b.CyclesPerSec, b.Workers, results.FormatMicros(b.P99))
	default:
		t += fmt.Sprintf("; %d workers broke the SLO (p99 %s at %.0f/s)", b.Workers, results.FormatMicros(b.P99), b.CyclesPerSec)
	}
	return t
}

// span is the range design's capacity may lie in: its knee's repeats'
// range, up to the step that broke the SLO when the knee lies between the
// two; ok false when no step met the SLO.
func (cp *DesignCapacity) span() (lo, hi float64, ok bool) {
	if cp == nil || cp.CyclesPerSec <= 0 {
		return 0, 0, false
	}
	lo, hi = cp.Min, cp.Max
	if b := cp.Broke; b != nil && b.CyclesPerSec > hi {
		hi = b.CyclesPerSec
	}
	return lo, hi, true
}

// markOverlaps names, on each row's capacity, the other designs whose
// span overlaps its own: the page says ≈ between them rather than an
// order the noise could reverse (benchstat's rule). A lower bound's span
// is its measured range: the ≥ says it may be more.
func markOverlaps(rows []MatrixRow) {
	for i := range rows {
		lo, hi, ok := rows[i].Capacity.span()
		if !ok {
			continue
		}
		for j := range rows {
			if lo2, hi2, ok2 := rows[j].Capacity.span(); i != j && ok2 && lo <= hi2 && lo2 <= hi {
				rows[i].Capacity.Overlaps = append(rows[i].Capacity.Overlaps, rows[j].Design)
			}
		}
	}
}

// HotText is "1.2 s (3.4× FIFO, retry)", "≥ 2 s (≥ 10.3× FIFO, retry, 7
// worker(s) won nothing)" when waits the p99 lacks bound it, "—" when not
// measured.
func (r MatrixRow) HotText() string {
	if r.Hot == nil {
		return "—"
	}
	h, ge := r.Hot, ""
	if h.LowerBound {
		ge = "≥ "
	}
	t := fmt.Sprintf("%s%s (%s%.1f× FIFO", ge, results.FormatMicros(h.TimeToLockP99), ge, h.Ratio)
	if h.Strategy != "" {
		t += ", " + h.Strategy
	}
	if h.GaveUp > 0 {
		t += fmt.Sprintf(", %d gave up", h.GaveUp)
	}
	if h.Idle > 0 {
		t += fmt.Sprintf(", %d worker(s) won nothing", h.Idle)
	}
	return t + ")"
}
