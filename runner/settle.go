package runner

import (
	"context"
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
	case co != nil && len(co.Runs) >= r:
		return false // it ran repeat r in a tier it has since left
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

// rounds runs every cell's first run in order, then, with a settler, the
// cells tier by tier (the settler's priority: the cells the needs name
// before the others), each tier's rounds in turn up to the last: so that
// a budget that cannot settle everything settles first what was asked.
// A cell's tier is asked again before each round, so a cell that needs
// no more of this tier's time (a common-rate cell with the samples a p99
// need is judged on) takes its further repeats with a later tier. It
// stops at an interrupt, a failure, or when a tier has nothing left.
func (st *scenarioRun) rounds(ctx context.Context) {
	all := make([]int, len(st.cells))
	for i := range all {
		all[i] = i
	}
	if !st.round(ctx, 1, all) || st.stopped(ctx) {
		return
	}
	for p := 0; p <= st.lastTier(all); p++ {
		for r := 2; r <= st.lastRound(); r++ {
			idx := st.tier(all, p)
			ran := st.round(ctx, r, idx)
			if st.stopped(ctx) {
				return
			}
			if !ran && !st.ahead(idx, r) {
				break
			}
		}
	}
}

// priority is the cell at position i's tier now (0 without a settler).
func (st *scenarioRun) priority(i int) int {
	if co := st.byPos[i]; st.opt.Settle != nil && co != nil {
		p, _ := st.opt.Settle.Extra(st.cells[i], co.Runs)
		return p
	}
	return 0
}

// lastTier is the highest tier of the cells idx now.
func (st *scenarioRun) lastTier(idx []int) int {
	last := 0
	for _, i := range idx {
		last = max(last, st.priority(i))
	}
	return last
}

// tier are the cells of idx whose tier is p now, or one before it (a
// cell whose tier fell to one already run), in the cells' order.
func (st *scenarioRun) tier(idx []int, p int) []int {
	var out []int
	for _, i := range idx {
		if st.priority(i) <= p {
			out = append(out, i)
		}
	}
	return out
}

// ahead says a cell of idx ran repeat r already (in a tier it left): a
// round in which nothing ran may still be followed by its next.
func (st *scenarioRun) ahead(idx []int, r int) bool {
	for _, i := range idx {
		if co := st.byPos[i]; co != nil && len(co.Runs) >= r {
			return true
		}
	}
	return false
}

// round runs round r of the cells idx that want it and fit the budget;
// false when none did (settled cells stay settled, and the budget only
// shrinks).
func (st *scenarioRun) round(ctx context.Context, r int, idx []int) bool {
	ran := false
	for _, i := range idx {
		c := st.cells[i]
		if st.stopped(ctx) {
			return ran
		}
		if !st.wants(i, c, r) || !st.affords(c) {
			continue
		}
		ran = true
		res, err := st.measure(ctx, i, c, r)
		if err != nil {
			st.out.Err, st.out.FailedCell = err, c.Label
			return ran
		}
		if res.Run.Interrupted {
			st.out.Interrupted = true
			return ran
		}
	}
	return ran
}

// stopped says the run ends here: interrupted, or a cell failed.
func (st *scenarioRun) stopped(ctx context.Context) bool {
	return ctx.Err() != nil || st.out.Err != nil || st.out.Interrupted
}
