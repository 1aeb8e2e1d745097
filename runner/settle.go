package runner

import (
	"context"
	"slices"
	"time"

	"lockbench/plan"
	"lockbench/results"
)

// A Settler says, from a cell's runs so far, whether it needs another:
// Settled when its verdict is settled (no further repeat), and its
// priority for the repeats a budget buys past the scenario's (lower
// first; Extra false: none for this cell, as for a benchmark cell).
type Settler interface {
	Settled(c plan.Cell, runs []results.Run) bool
	Extra(c plan.Cell, runs []results.Run) (priority int, ok bool)
}

// wants says whether repeat r of the cell at position i should run: every
// cell runs its first; a settled cell no more; past the scenario's
// repeats only a cell the settler wants more of.
func (st *scenarioRun) wants(i int, c plan.Cell, r int) bool {
	s, co := st.opt.Settle, st.byPos[i]
	switch {
	case r == 1 || s == nil:
		return r <= st.sc.Repeat
	case co == nil:
		return false // its first repeat never ran (past the budget)
	case s.Settled(c, co.Runs):
		return false
	case r <= st.sc.Repeat:
		return true
	}
	_, ok := s.Extra(c, co.Runs)
	return ok
}

// affords says whether the budget leaves time for cell c (always, with
// no budget).
func (st *scenarioRun) affords(c plan.Cell) bool {
	if st.opt.Budget <= 0 {
		return true
	}
	return time.Since(st.started)+plan.EstimatedDuration([]plan.Cell{c}) <= st.opt.Budget
}

// lastRound is the last round a run may reach: the scenario's repeats,
// or with a budget and a settler, as many as the budget affords.
func (st *scenarioRun) lastRound() int {
	if st.opt.Budget > 0 && st.opt.Settle != nil {
		return plan.MaxRepeat
	}
	return st.sc.Repeat
}

// order is round r's cells: in their order, and past the scenario's
// repeats the settler's priority first (the cells the needs name).
func (st *scenarioRun) order(r int) []int {
	idx := make([]int, len(st.cells))
	for i := range idx {
		idx[i] = i
	}
	if r <= st.sc.Repeat || st.opt.Settle == nil {
		return idx
	}
	prio := func(i int) int {
		if co := st.byPos[i]; co != nil {
			p, _ := st.opt.Settle.Extra(st.cells[i], co.Runs)
			return p
		}
		return 0
	}
	slices.SortStableFunc(idx, func(a, b int) int { return prio(a) - prio(b) })
	return idx
}

// rounds runs the rounds until the last, an interrupt, a failure, or a
// round with nothing left to run.
func (st *scenarioRun) rounds(ctx context.Context) {
	for r := 1; r <= st.lastRound(); r++ {
		ran := false
		for _, i := range st.order(r) {
			c := st.cells[i]
			if ctx.Err() != nil {
				return
			}
			if !st.wants(i, c, r) || !st.affords(c) {
				continue
			}
			ran = true
			res, err := st.measure(ctx, i, c, r)
			if err != nil {
				st.out.Err, st.out.FailedCell = err, c.Label
				return
			}
			if res.Run.Interrupted {
				st.out.Interrupted = true
				return
			}
		}
		if !ran { // settled cells stay settled, and the budget only shrinks
			return
		}
	}
}
