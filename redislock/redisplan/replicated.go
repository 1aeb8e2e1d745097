package redisplan

import (
	"time"

	"lockbench/plan"
	"lockbench/redislock/engine"
)

// Replicated says the cell runs on a replicated set (a master with
// replicas behind Sentinel).
func Replicated(s plan.Settings) bool { return s.TopologyOf() == string(engine.Replicated) }

// ExternalSentinels says the replicated set is someone else's: its
// Sentinels were given, nothing is started here.
func ExternalSentinels(s plan.Settings) bool { return Replicated(s) && len(s.SentinelAddrs) > 0 }

// GivenServers: masters given, or an external set's Sentinels
// (plan.GivenServers).
func (topology) GivenServers(s plan.Settings) bool { return len(s.Masters) > 0 || ExternalSentinels(s) }

// RoleTargets: a replicated set's faults name its replicas and Sentinels
// by index, a cluster's its replicas (plan.RoleTargets).
func (r topology) RoleTargets() bool { return r.t == engine.Replicated || r.t == engine.Cluster }

// ExtraStart: a replicated set's replicas sync and its Sentinels find
// each other, about 3 s more than masters alone (plan.SlowStart).
func (r topology) ExtraStart(plan.Settings) time.Duration {
	if r.t == engine.Replicated || r.t == engine.Cluster { // a cluster's nodes meet and its replicas sync too
		return 3 * time.Second
	}
	return 0
}
