package redisplan

import (
	"lockbench/plan"
	"lockbench/redislock/engine"
)

// absences are, per topology, the matrix faults that take no cell of its
// designs, and why (plan.Absent).
var absences = map[engine.Topology]map[string]plan.Absence{
	engine.Redlock: {
		"leader-kill":  {State: plan.NotApplicable, Why: "Redlock has no leader: its masters are independent (crash is its server fault)", JudgedOn: "crash"},
		"lag-failover": {State: plan.NotApplicable, Why: "no replication: Redlock's masters are independent (crash is its server fault)", JudgedOn: "crash"},
	},
	engine.Single: {
		"leader-kill":  {State: plan.NotApplicable, Why: "one master, no replica: no leader to lose over (crash is its server fault)", JudgedOn: "crash"},
		"lag-failover": {State: plan.NotApplicable, Why: "no replication: one master (crash is its server fault)", JudgedOn: "crash"},
	},
	engine.Replicated: {
		"partition-holder": {State: plan.NotSupported, Why: "its clients reach the master Sentinel names directly, with no proxy to cut (a client process in a network namespace of its own, ip netns, would allow it: not built yet)"},
		"clock-jump":       {State: plan.NotSupported, Why: "the fake clock runs Redlock's and one master's servers; a replicated set's master and replicas start without it"},
	},
	engine.Cluster: {
		"partition-holder": {State: plan.NotSupported, Why: "its clients reach the nodes the cluster names (CLUSTER SLOTS, MOVED) directly, with no proxy to cut (a client process in a network namespace of its own, ip netns, would allow it: not built yet)"},
		"clock-jump":       {State: plan.NotSupported, Why: "the fake clock runs Redlock's and one master's servers; a cluster's nodes start without it (a jump would also move their node-timeout clocks)"},
	},
}

// Absences: the matrix faults this topology's designs take no cell of.
func (r topology) Absences() map[string]plan.Absence { return absences[r.t] }
