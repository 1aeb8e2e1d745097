package faults

import (
	"strings"
	"testing"

	"lockbench/results"
)

// Every fault kind a scenario may name has its one entry, and every entry
// is a kind a scenario may name: a kind added to results without its
// entry here would fail only when a cell applied it.
func TestEveryKindHasItsEntry(t *testing.T) {
	for _, k := range results.FaultKinds {
		if e, ok := kinds[k]; !ok || e.apply == nil {
			t.Errorf("fault kind %s has no entry (or no apply) in faults' kinds", k)
		}
	}
	if len(kinds) != len(results.FaultKinds) {
		t.Errorf("%d entries for %d fault kinds", len(kinds), len(results.FaultKinds))
	}
}

// A kind's needs are checked before the cell starts: a kill_backend on a
// server that is no database, a clock jump without a fake clock, a
// partition without the proxied network are refused by Check, each naming
// the fault and what it needs.
func TestCheckAsksEachKindForWhatItNeeds(t *testing.T) {
	tg := Targets{Masters: []Master{nil}, Clients: []Client{nil}}
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Kind: KillBackend}, "faults[0]: kill_backend: server 0 is not a database server"},
		{Spec{Kind: ClockJump, By: 1}, "faults[0]: clock_jump: master 0 does not run under a fake clock"},
		{Spec{Kind: Partition}, "faults[0]: partition needs the proxied network"},
		{Spec{Kind: Reset, Link: results.LinkMembers}, "faults[0]: reset needs the proxied network"},
		{Spec{Kind: Failover}, "faults[0]: failover needs a replicated set"},
		{Spec{Kind: "flood"}, `faults[0]: kind "flood" is not known`},
	} {
		err := tg.Check([]Spec{c.spec})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.spec.Kind, err, c.want)
		}
	}
	if err := tg.Check([]Spec{{Kind: Pause}, {Kind: Crash}}); err != nil {
		t.Errorf("pause and crash need nothing beyond their targets: %v", err)
	}
}
