package report

import (
	"fmt"
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
	// Lightest: the lightest step's acquire p99 (µs) and workers, to say
	// how far a design that met the SLO at no step was from it.
	LightestP99     float64 `json:"lightest_p99_us,omitempty"`
	LightestWorkers int     `json:"lightest_workers,omitempty"`
	cell            string  // the step's name
}

// HotKey is time to lock on one hot key beside the FIFO ideal: a waiter
// in a first-in-first-out queue waits for each other contender's turn
// once, (workers − 1) × the key's measured period.
type HotKey struct {
	TimeToLockP99 float64 `json:"time_to_lock_p99_us"`
	FIFOIdeal     float64 `json:"fifo_ideal_us"`
	Ratio         float64 `json:"ratio"`
	Strategy      string  `json:"wait_strategy,omitempty"`
	Result        string  `json:"result,omitempty"`
}

// priceFromCells fills the row's price from its benchmark cells.
func (r *MatrixRow) priceFromCells(pc *PriceCells, find func(string) (CellSummary, *cell, bool)) {
	r.Capacity = capacityOf(pc.Ladder[r.Design], pc.SLO, find)
	if c, l, ok := find(pc.Common[r.Design]); ok && c.Acquired > 0 {
		r.Priced = true
		r.AcquireP50, r.AcquireP99, r.P50, r.P99, r.PriceResult = c.Acquire.P50, c.Acquire.P99, c.Acquire.P50, c.Acquire.P99, l.Info.File
	}
	// The servers' CPU per lock under load (the capacity's step): at a low
	// rate their idle work would be most of it.
	if cp := r.Capacity; cp != nil && cp.Result != "" {
		_, l, _ := find(cp.cell)
		if sv := l.Run.Servers; sv != nil {
			r.ServerCPUPerLock = results.FiniteOr0(sv.TopologyMicrosCycle())
		}
	}
	if c, l, ok := find(pc.Hot[r.Design]); ok && c.Contention != nil && c.Acquired > 1 && c.MeasuredSeconds > 0 {
		period := c.MeasuredSeconds * 1e6 / float64(c.Acquired)
		h := &HotKey{TimeToLockP99: c.Contention.TimeToLock.P99, FIFOIdeal: float64(max(c.Workers-1, 1)) * period, Strategy: c.WaitStrategy, Result: l.Info.File}
		h.Ratio = h.TimeToLockP99 / h.FIFOIdeal
		r.Hot = h
	}
}

// capacityOf is the best step within the SLO, and what stopped the next.
func capacityOf(names []string, slo time.Duration, find func(string) (CellSummary, *cell, bool)) *DesignCapacity {
	if len(names) == 0 {
		return nil
	}
	cp := &DesignCapacity{}
	var knee *CellSummary
	var next *CellSummary
	for _, n := range names {
		c, l, ok := find(n)
		if !ok || c.Acquired == 0 {
			continue
		}
		if cp.Steps++; cp.Steps == 1 {
			cp.LightestP99, cp.LightestWorkers = c.Acquire.P99, c.Workers
		}
		within := c.Acquire.P99 <= float64(slo.Microseconds()) && c.SuccessRatio >= 0.99
		switch {
		case within && (knee == nil || c.CyclesPerSec > knee.CyclesPerSec):
			knee, next = &c, nil
			cp.CyclesPerSec, cp.Min, cp.Max = c.CyclesPerSec, c.CyclesPerSec, c.CyclesPerSec
			if sp, ok := spreadOf(c, "cycles_per_sec"); ok {
				cp.Min, cp.Max = sp.Min, sp.Max
			}
			cp.Workers, cp.Result, cp.cell = fmt.Sprint(c.Workers), l.Info.File, n
		case !within && knee != nil && next == nil:
			next = &c
		}
	}
	if knee == nil {
		return cp
	}
	lim := knee.Limit
	if next != nil {
		lim = next.Limit
	}
	if lim != nil {
		cp.Limiter = lim.By
	}
	cp.LowerBound = next == nil || cp.Limiter == results.LimitGenerator || cp.Limiter == results.LimitMachine
	return cp
}

func spreadOf(c CellSummary, figure string) (results.Spread, bool) {
	if c.Repeats == nil {
		return results.Spread{}, false
	}
	sp, ok := c.Repeats.Spread[figure]
	return sp, ok && sp.N > 1
}

// CapacityText is "≥ 48210 (45100–50300) at 64 workers, server", "none
// within the SLO", or "—" when nothing was measured.
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
	if cp.Limiter != "" {
		t += ", " + cp.Limiter
	}
	return t
}

// HotText is "1.2 s (3.4× FIFO)", "—" when not measured.
func (r MatrixRow) HotText() string {
	if r.Hot == nil {
		return "—"
	}
	return fmt.Sprintf("%s (%.1f× FIFO)", results.FormatMicros(r.Hot.TimeToLockP99), r.Hot.Ratio)
}
