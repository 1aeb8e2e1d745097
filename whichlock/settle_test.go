package whichlock

import (
	"testing"

	"lockbench/plan"
	"lockbench/results"
)

// runOf is one run of a fault cell with n judged events, broken ones
// breaking exclusion.
func runOf(n, broken int) results.Run {
	var r results.Run
	r.Safety.ResourceChecked, r.Safety.Verdict = true, "met"
	for i := range n {
		e := results.FaultEvent{Judged: true, Exercised: 1}
		if i < broken {
			e.Violations, e.DataLost = 1, 1
		}
		r.Safety.FaultEvents = append(r.Safety.FaultEvents, e)
	}
	return r
}

// A fault cell is settled once one event broke or 0 of n bounds its rate
// at the max rate; the quiet and price cells never are (they run their
// repeats); extras go to the unsettled, the needs' faults first.
func TestSettlerSettlesFaultCellsOnly(t *testing.T) {
	s := Settler{MaxRate: 0.2, Named: []string{"crash"}}
	crash, pause := plan.Cell{Name: "etcd.crash"}, plan.Cell{Name: "etcd.pause-holder"}
	five := []results.Run{runOf(5, 0)}
	if s.Settled(crash, five) {
		t.Errorf("0 of 5 events settled at 20%%")
	}
	if !s.Settled(crash, append(five, runOf(5, 0), runOf(5, 0))) {
		t.Errorf("0 of 15 events not settled at 20%%")
	}
	if !s.Settled(crash, []results.Run{runOf(5, 1)}) {
		t.Errorf("a broken event did not settle the cell")
	}
	if p, ok := s.Extra(crash, five); !ok || p != 0 {
		t.Errorf("crash extra %d %v; want priority 0 (a need names it)", p, ok)
	}
	if p, ok := s.Extra(pause, five); !ok || p != 1 {
		t.Errorf("pause extra %d %v; want priority 1", p, ok)
	}
	for _, name := range []string{"etcd.none", "etcd.price-4", "etcd.common"} {
		c := plan.Cell{Name: name}
		if _, ok := s.Extra(c, five); ok || s.Settled(c, five) {
			t.Errorf("%s: settled or extra", name)
		}
	}
	nx := runOf(0, 0)
	nx.Safety.Verdict = results.NotExercised
	if _, ok := s.Extra(crash, []results.Run{nx}); ok {
		t.Errorf("a cell that judged nothing takes extras")
	}
}
