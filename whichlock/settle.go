package whichlock

import (
	"slices"

	"lockbench/plan"
	"lockbench/report"
	"lockbench/results"
	"lockbench/runner"
)

// Settler is choose's runner.Settler: a matrix fault cell needs no more
// runs once its verdict is settled at the run's max rate (one broken event
// settles it broken; clean needs 0 of n with the bound at or below the
// max rate); with a budget, the unsettled cells the needs name get its
// time before the others. The quiet cells and the price cells run their
// repeats as asked.
type Settler struct {
	MaxRate float64
	// Named are the faults the needs name.
	Named []string
	// P99 says a --p99 need is asked: the common-rate cells, whose pooled
	// acquires it is judged on, are among the cells the needs name until
	// they pool report.MinP99Samples.
	P99 bool
}

var _ runner.Settler = Settler{}

// Settled says c's runs settle its verdict (never for a cell outside the
// matrix's fault cells).
func (s Settler) Settled(c plan.Cell, runs []results.Run) bool {
	if _, _, ok := designFault(c); !ok {
		return false
	}
	settled, _ := report.Settles(repeatRuns(runs), s.MaxRate)
	return settled
}

// Extra says whether c may take a repeat past the asked ones (an
// unsettled fault cell that judged something), and its tier for the
// repeats after the first: the unsettled fault cells the needs name, and
// the common-rate cells while a p99 need is asked and they pool fewer
// acquires than it is judged on (0); the other unsettled fault cells and
// the common-rate cells still short of those acquires (1); the rest (2).
func (s Settler) Extra(c plan.Cell, runs []results.Run) (int, bool) {
	d, f, ok := designFault(c)
	if !ok {
		if _, kind, _ := report.SplitCellName(c.Name); kind == report.CommonCell {
			return s.commonTier(runs)
		}
		return 2, false
	}
	settled, judged := report.Settles(repeatRuns(runs), s.MaxRate)
	tier := 1
	if s.names(d, f) {
		tier = 0 // its asked repeats come first even when its first run judged nothing
	}
	switch {
	case settled:
		return 2, false
	case !judged:
		return tier, false
	}
	return tier, true
}

// commonTier is a common-rate cell's tier: 0 while the p99 need it
// decides lacks samples (and it may run past the asked repeats for them),
// 1 while it would lack them, 2 once it has them (more repeats narrow the
// interval, but no longer decide).
func (s Settler) commonTier(runs []results.Run) (int, bool) {
	var n int64
	for _, r := range runs {
		n += r.AcquireLatency.Count
	}
	switch {
	case n >= report.MinP99Samples:
		return 2, false
	case s.P99:
		return 0, true
	}
	return 1, false
}

// names says the needs name fault f for design d: by its name, or a fault
// whose need f's cell stands for on d (one server's leader kill is its
// crash).
func (s Settler) names(d, f string) bool {
	return slices.ContainsFunc(s.Named, func(n string) bool { return n == f || plan.MatrixJudgedOnNamed(d, n) == f })
}

// designFault are the design and the matrix fault a cell puts it under
// (ok false: the quiet cell, a price cell or a cell outside the matrix).
func designFault(c plan.Cell) (d, f string, ok bool) {
	d, f, ok = report.SplitCellName(c.Name)
	if !ok || f == "none" {
		return "", "", false
	}
	_, ok = plan.MatrixFaultNamed(f)
	return d, f, ok
}

// repeatRuns are each run's own figures.
func repeatRuns(runs []results.Run) []results.RepeatRun {
	out := make([]results.RepeatRun, 0, len(runs))
	for _, r := range runs {
		out = append(out, r.RepeatRuns()...)
	}
	return out
}
