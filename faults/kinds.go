package faults

import (
	"fmt"
	"time"
)

// kind is one fault kind's part of the scheduler: what it needs of the
// cell's targets (a capability the lock service's servers offer, checked
// before the cell starts), how it is put in place (apply registers its own
// undo with later) and how many actions make it whole. A new kind is a
// results.FaultKind, its fields' checks in plan, and one entry here.
type kind struct {
	needs   func(t Targets, i int, sp Spec) error // nil: targets by index only
	apply   func(s *Scheduler, i int, sp Spec, at time.Time)
	actions func(s *Scheduler, sp Spec) int // nil: one
}

var kinds = map[Kind]kind{
	Crash:          {apply: (*Scheduler).crash, actions: (*Scheduler).crashCount},
	Partition:      {needs: needsLinks, apply: (*Scheduler).partition},
	Latency:        {needs: needsLinks, apply: (*Scheduler).latency},
	Reset:          {needs: needsNet, apply: (*Scheduler).reset},
	Pause:          {apply: (*Scheduler).pause},
	ClockJump:      {needs: needsClocks, apply: (*Scheduler).clockJump, actions: clockActions},
	Failover:       {needs: needsFailoverer, apply: func(s *Scheduler, i int, _ Spec, at time.Time) { s.failover(i, at) }},
	ReplicationLag: {needs: needsReplication, apply: (*Scheduler).replicationLag},
	KillBackend:    {needs: needsBackendKillers, apply: (*Scheduler).killBackends},
}

// needsLinks: the links the fault acts on, the proxied network's between
// clients and servers, or a consensus cluster's between its members.
func needsLinks(t Targets, i int, s Spec) error {
	switch {
	case s.MemberLinks() && s.Kind == Latency && t.MemberDelay == nil:
		return fmt.Errorf("faults[%d]: latency with link: members needs a local consensus cluster's member links", i)
	case s.MemberLinks() && s.Kind != Latency && t.Links == nil:
		return fmt.Errorf("faults[%d]: %s with link: members needs a local consensus cluster's member links", i, s.Kind)
	case !s.MemberLinks():
		return needsNet(t, i, s)
	}
	return nil
}

// needs is a kind's need of one capability of the targets, named by what
// it is (e.g. "the proxied network").
func needs(has func(Targets) bool, what string) func(Targets, int, Spec) error {
	return func(t Targets, i int, s Spec) error {
		if !has(t) {
			return fmt.Errorf("faults[%d]: %s needs %s", i, s.Kind, what)
		}
		return nil
	}
}

// A reset drops the proxied network's connections (plan refuses link:
// members on it); failover and replication_lag act on a replicated set.
var (
	needsNet         = needs(func(t Targets) bool { return t.Net != nil }, "the proxied network")
	needsFailoverer  = needs(func(t Targets) bool { return t.Failover != nil }, "a replicated set")
	needsReplication = needs(func(t Targets) bool { return t.Replication != nil }, "a replicated set")
)

func needsClocks(t Targets, i int, s Spec) error {
	for _, m := range orAll(s.Masters, len(t.Masters)) {
		if t.Clocks[m] == nil {
			return fmt.Errorf("faults[%d]: clock_jump: master %d does not run under a fake clock", i, m)
		}
	}
	return nil
}

func clockActions(s *Scheduler, sp Spec) int { return len(orAll(sp.Masters, len(s.t.Masters))) } // one per master

func needsBackendKillers(t Targets, i int, s Spec) error {
	for _, m := range orAll(s.Masters, len(t.Masters)) {
		if _, ok := t.Masters[m].(BackendKiller); !ok {
			return fmt.Errorf("faults[%d]: kill_backend: server %d is not a database server (a service whose sessions are backends)", i, m)
		}
	}
	return nil
}
