package redisplan

import (
	"fmt"

	"lockbench/plan"
	"lockbench/results"
)

// A cluster's bounds and defaults: 3 masters (the fewest whose majority
// can judge one failed), a replica each.
const (
	maxClusterReplicas     = 3
	defaultClusterMasters  = 3
	defaultClusterReplicas = 1
	maxClusterMasters      = 15
)

// clusterMasters are the cluster's local masters: local:, or 3.
func clusterMasters(s plan.Settings) int { return s.LocalMembers(defaultClusterMasters) }

// clusterReplicas are each master's replicas: replicas:, or 1.
func clusterReplicas(s plan.Settings) int {
	if !s.IsGiven("replicas") {
		return defaultClusterReplicas
	}
	return s.Replicas
}

// ClusterShape is a cluster cell's local masters and replicas per
// master, as it runs.
func ClusterShape(s plan.Settings) (masters, replicas int) {
	return clusterMasters(s), clusterReplicas(s)
}

// checkCluster: a local cluster in bounds (or external nodes given as
// seeds); WAIT within the replicas; what a cluster cannot take (a proxy
// in front of nodes whose addresses the cluster hands out itself,
// persistence, redsync, embedded servers).
func checkCluster(s plan.Settings) error {
	m, r := clusterMasters(s), clusterReplicas(s)
	switch {
	case len(s.Masters) == 0 && (m < 3 || m > maxClusterMasters):
		return fmt.Errorf("local: %d is not accepted with topology cluster; use 3..%d masters (a majority of masters judges one failed)", m, maxClusterMasters)
	case r < 0 || r > maxClusterReplicas:
		return fmt.Errorf("replicas: %d is not accepted with topology cluster; use 0..%d replicas per master", r, maxClusterReplicas)
	case s.WaitReplicas < 0 || s.WaitReplicas > r && len(s.Masters) == 0:
		return fmt.Errorf("wait-replicas: %d is not accepted; use 0 (no WAIT)..%d (the replicas per master)", s.WaitReplicas, r)
	case s.WaitTimeout < 0:
		return fmt.Errorf("wait-timeout: %v is not accepted; use 0 (the per-master timeout) or a positive duration", s.WaitTimeout)
	case s.NetLatency > 0:
		return fmt.Errorf("net-latency: not with topology cluster; the cluster hands out its nodes' own addresses (CLUSTER SLOTS, MOVED), which a proxy cannot stand in for")
	case s.Driver == "redsync":
		return fmt.Errorf("driver: redsync does not take topology cluster (it locks on independent masters); use driver lockbench or rueidislock")
	case s.Persistence != "" && s.Persistence != "none":
		return fmt.Errorf("persistence: %q is not accepted with topology cluster yet; its local nodes run without persistence (use none)", s.Persistence)
	case s.Embedded == "always":
		return fmt.Errorf("embedded: always is not accepted with topology cluster; a cluster runs real redis-server nodes")
	}
	return nil
}

// checkClusterFault: a cluster takes crash (a master by index as started:
// master_index, or replica_index), pause, replication_lag (its replicas
// stopped, their links cut) and failover (a shard's master killed, its
// replica promoted by the cluster) and partition with link: members (a
// shard's master cut from the cluster bus but not from clients); no proxy
// stands between its clients and nodes, and its nodes run no fake clock.
func checkClusterFault(where string, f plan.Fault) error {
	switch {
	case f.Kind == results.FaultCrash, f.Kind == results.FaultPause, f.Kind == results.FaultFailover, f.Kind == results.FaultReplicationLag:
		return nil
	case f.Kind == results.FaultPartition && f.MemberLinks():
		return nil // shard master_index's master cut from the cluster bus, not from clients
	case f.Kind == results.FaultPartition, f.Kind == results.FaultLatency, f.Kind == results.FaultReset:
		return fmt.Errorf("%s.kind: %s is not available with topology cluster: its clients reach the nodes the cluster names (CLUSTER SLOTS, MOVED), with no proxy between; use crash, pause, replication_lag, failover, or partition with link: members (a shard's master cut from the cluster bus)", where, f.Kind)
	}
	return fmt.Errorf("%s.kind: %s is not available with topology cluster; use crash, pause, replication_lag, failover or partition with link: members", where, f.Kind)
}

// recordCluster: the replicas per master, WAIT's timeout when there is a
// WAIT, nothing of a replicated set's.
func recordCluster(s plan.Settings, out *results.Settings) {
	wait := s.WaitReplicas
	plan.NotReplicated(out)
	out.Replicas, out.WaitReplicas = clusterReplicas(s), wait
	if wait > 0 {
		out.WaitTimeout = s.WaitTimeout
		if s.WaitTimeout == 0 {
			out.WaitTimeout = s.Timeout // the engine's: WAIT 0 would block for ever
		}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
