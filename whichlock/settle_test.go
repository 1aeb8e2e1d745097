package whichlock

import (
	"strings"
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
	if p, ok := (Settler{MaxRate: 0.2, Named: []string{"leader-kill"}}).Extra(plan.Cell{Name: "single.crash"}, five); !ok || p != 0 {
		t.Errorf("single × crash, which stands for its leader kill: extra %d %v; want priority 0", p, ok)
	}
	// The common-rate cell's repeats pool a p99 need's samples: they come
	// with the other unsettled fault cells' (tier 1), the rest after;
	// first (tier 0) when a p99 need is asked, until they pool its 10,000.
	common := func(acquires int64) []results.Run {
		var r results.Run
		r.AcquireLatency.Count = acquires
		return []results.Run{r}
	}
	p99 := Settler{MaxRate: 0.2, Named: []string{"crash"}, P99: true}
	for _, c := range []struct {
		s    Settler
		name string
		runs []results.Run
		tier int
	}{
		{s, "etcd.none", five, 2}, {s, "etcd.price-4", five, 2},
		{s, "etcd.common", common(5200), 1}, {s, "etcd.common", common(10400), 2},
		{p99, "etcd.common", common(5200), 0}, {p99, "etcd.common", append(common(5200), common(4799)...), 0},
		{p99, "etcd.common", append(common(5200), common(5200)...), 2}, {p99, "etcd.price-4", five, 2},
	} {
		cell := plan.Cell{Name: c.name}
		extra := c.s.P99 && c.tier == 0 // past the asked repeats only for a p99 need's samples
		if p, ok := c.s.Extra(cell, c.runs); ok != extra || c.s.Settled(cell, c.runs) || p != c.tier {
			t.Errorf("%s (p99 need %v, %d runs): settled, extra %v or tier %d; want tier %d, extra %v", c.name, c.s.P99, len(c.runs), ok, p, c.tier, extra)
		}
	}
	nx := runOf(0, 0)
	nx.Safety.Verdict = results.NotExercised
	if p, ok := s.Extra(crash, []results.Run{nx}); ok || p != 0 {
		t.Errorf("a named cell that judged nothing: extra %d %v; want no extras, but its asked repeats first (tier 0)", p, ok)
	}
}

// A failover's promotion outlasts most 6 s holds: its cells hold 10 s
// where the lock renews itself; a consensus leader's kill keeps 6 s, and a
// lock of fixed TTL stays below its TTL.
func TestFailoverCellsHoldAcrossThePromotion(t *testing.T) {
	for _, c := range []struct{ design, fault, want string }{
		{"replicated-wait1", "leader-kill", "long_hold: 10s"},
		{"replicated-wait1", "lag-failover", "long_hold: 10s"},
		{"etcd", "leader-kill", "long_hold: 6s"},
		{"single-fixed-ttl", "crash", "long_hold: 1.5s"},
	} {
		d, _ := plan.DesignNamed(c.design)
		f, _ := plan.MatrixFaultNamed(c.fault)
		cell, _, _, _ := matrixCell(d, f, FullDuration, 1)
		if !strings.Contains(cell, c.want) {
			t.Errorf("%s × %s: want %q in\n%s", c.design, c.fault, c.want, cell)
		}
	}
}
