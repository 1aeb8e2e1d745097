package runner

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lockbench/plan"
	"lockbench/results"
)

// runsSettler settles a cell after a number of runs given per cell
// position (0: never), and wants extras of the unsettled at priority by
// position, the second cell first.
type runsSettler struct{ after map[string]int }

func (s runsSettler) Settled(c plan.Cell, runs []results.Run) bool {
	n := s.after[c.ID]
	return n > 0 && len(runs) >= n
}

func (s runsSettler) Extra(c plan.Cell, runs []results.Run) (int, bool) {
	if s.Settled(c, runs) {
		return 0, false
	}
	if c.Index == 1 {
		return 0, true
	}
	return 1, true
}

// A settled cell takes no further repeat; with a budget, the unsettled
// cells take more than the scenario's repeats, the settler's first
// (priority 0) through all its rounds before the other's second: a budget
// that cannot settle everything settles what was asked first; a budget
// too small for any cell starts none.
func TestSettledCellsStopAndBudgetBuysMore(t *testing.T) {
	sc, cells := benchScenario(t, "2")
	s := runsSettler{after: map[string]int{cells[0].ID: 1, cells[1].ID: 4}}
	o := &order{}
	out, err := Run(context.Background(), sc, cells, Options{Scenario: sc.Name, Dir: filepath.Join(t.TempDir(), "out"), Progress: o, Settle: s})
	if err != nil || out.Err != nil {
		t.Fatalf("run: %v, %v", err, out.Err)
	}
	// Without a budget: the scenario's 2 repeats at most; the first cell settled after 1.
	want := []string{cells[0].ID + "#1", cells[1].ID + "#1", cells[1].ID + "#2"}
	if got := strings.Join(o.starts, " "); got != strings.Join(want, " ") {
		t.Errorf("without a budget: order %v, want %v", o.starts, want)
	}

	s.after[cells[0].ID] = 3 // now both need more than the 2 asked for
	o = &order{}
	out, err = Run(context.Background(), sc, cells, Options{Scenario: sc.Name, Dir: filepath.Join(t.TempDir(), "out"), Progress: o, Settle: s, Budget: time.Hour})
	if err != nil || out.Err != nil {
		t.Fatalf("run: %v, %v", err, out.Err)
	}
	want = []string{cells[0].ID + "#1", cells[1].ID + "#1", cells[1].ID + "#2", cells[1].ID + "#3",
		cells[1].ID + "#4", cells[0].ID + "#2", cells[0].ID + "#3"}
	if got := strings.Join(o.starts, " "); got != strings.Join(want, " ") {
		t.Errorf("with a budget: order %v, want %v", o.starts, want)
	}
	for _, co := range out.Cells {
		if n := len(co.Runs); co.Combined.Repeats == nil || co.Combined.Repeats.Count != n {
			t.Errorf("cell %s: %d runs, combined %+v", co.Cell.ID, n, co.Combined.Repeats)
		}
	}

	o = &order{}
	out, err = Run(context.Background(), sc, cells, Options{Scenario: sc.Name, Dir: filepath.Join(t.TempDir(), "out"), Progress: o, Settle: s, Budget: time.Millisecond})
	if err != nil || out.Err != nil || len(o.starts) != 0 {
		t.Errorf("a budget of 1 ms started %v (%v, %v); want none", o.starts, err, out.Err)
	}
}

// leavingSettler keeps the first cell in tier 0 until it has two runs,
// then in tier 2 (more repeats, no longer first: a common-rate cell with
// its p99 need's samples); the second cell is tier 1 until four runs
// settle it.
type leavingSettler struct{ first, second string }

func (s leavingSettler) Settled(c plan.Cell, runs []results.Run) bool {
	return c.ID == s.second && len(runs) >= 4
}

func (s leavingSettler) Extra(c plan.Cell, runs []results.Run) (int, bool) {
	switch {
	case c.ID == s.second:
		return 1, !s.Settled(c, runs)
	case len(runs) >= 2:
		return 2, false
	}
	return 0, false
}

// A cell's tier is asked before each round: one that left tier 0 after
// its second run takes its third after tier 1's, not before.
func TestCellLeavesItsTier(t *testing.T) {
	sc, cells := benchScenario(t, "3")
	s := leavingSettler{first: cells[0].ID, second: cells[1].ID}
	o := &order{}
	out, err := Run(context.Background(), sc, cells, Options{Scenario: sc.Name, Dir: filepath.Join(t.TempDir(), "out"), Progress: o, Settle: s, Budget: time.Hour})
	if err != nil || out.Err != nil {
		t.Fatalf("run: %v, %v", err, out.Err)
	}
	a, b := cells[0].ID, cells[1].ID
	want := []string{a + "#1", b + "#1", a + "#2", b + "#2", b + "#3", b + "#4", a + "#3"}
	if got := strings.Join(o.starts, " "); got != strings.Join(want, " ") {
		t.Errorf("order %v, want %v", o.starts, want)
	}
}

// fallingSettler puts the first cell in tier 1 after its first run and
// in tier 0 after its second: a tier that falls to one already run.
type fallingSettler struct{ first string }

func (fallingSettler) Settled(plan.Cell, []results.Run) bool { return false }

func (s fallingSettler) Extra(c plan.Cell, runs []results.Run) (int, bool) {
	if c.ID == s.first && len(runs) == 1 {
		return 1, false
	}
	return 0, false
}

// A cell whose tier fell to one already run still takes its repeats.
func TestCellWhoseTierFellKeepsItsRepeats(t *testing.T) {
	sc, cells := benchScenario(t, "3")
	o := &order{}
	out, err := Run(context.Background(), sc, cells, Options{Scenario: sc.Name, Dir: filepath.Join(t.TempDir(), "out"), Progress: o, Settle: fallingSettler{first: cells[0].ID}, Budget: time.Hour})
	if err != nil || out.Err != nil {
		t.Fatalf("run: %v, %v", err, out.Err)
	}
	if n := strings.Count(strings.Join(o.starts, " "), cells[0].ID+"#"); n != 3 {
		t.Errorf("order %v: %d runs of %s, want its 3 repeats", o.starts, n, cells[0].ID)
	}
}
