package redislock

import (
	"context"
	"fmt"
	"time"

	"lockbench/faults"
	"lockbench/plan"
	"lockbench/redislock/engine"
	"lockbench/redislock/localmasters"
	"lockbench/redislock/redisplan"
)

// isCluster says the cell locks on a Redis Cluster.
func isCluster(s plan.Settings) bool { return s.TopologyOf() == string(engine.Cluster) }

// startCluster starts the cell's local cluster (its shape from the
// settings; a fault cell's as any other: its faults kill nodes, restart
// them, or fail a shard over).
func (r *RedisServers) startCluster(ctx context.Context, c plan.Cell) error {
	masters, replicas := redisplan.ClusterShape(c.Settings)
	cl, err := localmasters.StartCluster(ctx, localmasters.ClusterOptions{Masters: masters, ReplicasPerMaster: replicas, Log: r.log})
	if err != nil {
		return err
	}
	r.Cluster, r.cluster, r.version = cl, true, cl.Version()
	r.addrs, r.display = cl.MasterAddrs(), cl.MasterAddrs()
	for _, m := range cl.Masters() {
		r.servers = append(r.servers, m) // crash master_index i: the node started as shard i's master
	}
	return nil
}

// clusterTargets: the nodes started as masters (crash, pause by
// master_index), as replicas (replica_index; replication_lag stops them
// and cuts their links on the masters: a cluster replica replicates over
// the client port, so only CLIENT KILL can cut its link alone), and the
// cluster's own failover of a shard; the nodes' addresses.
func (r *RedisServers) clusterTargets(t *faults.Targets) []string {
	c := r.Cluster
	t.Replicas = processes(c.Replicas())
	t.Replication, t.Failover = c, clusterFailover{c}
	return c.Addrs()
}

// clusterFailover is a cluster's failover as faults see it: the master of
// the shard holding the most keys killed, the cluster promoting its
// replica (seen when the replica's INFO says role:master).
type clusterFailover struct{ *localmasters.Cluster }

// Failover kills the master of the shard that holds the most keys now
// (the locks it takes down), and says which.
func (f clusterFailover) Failover(ctx context.Context) (target, detail string, heldKeys int, err error) {
	shard, keys := 0, -1
	for i := range f.Masters() {
		addr, err := f.ShardMaster(ctx, i)
		if err != nil {
			return "", "", 0, err
		}
		if n := f.Process(addr).HeldKeys(ctx); n > keys {
			shard, keys = i, n
		}
	}
	k, err := f.KillShardMaster(ctx, shard)
	if err != nil {
		return "", "", 0, err
	}
	lo, hi := f.Shard(shard)
	return fmt.Sprintf("%s (%s)", k.Name, k.Addr), fmt.Sprintf("kill -9 pid %d of shard %d's master (slots %d-%d) holding %d keys; the cluster is to promote its replica after the node timeout (%v)",
		k.Pid, shard, lo, hi, keys, f.NodeTimeout()), keys, nil
}

func (f clusterFailover) PrimaryKills() []faults.PrimaryKill {
	var out []faults.PrimaryKill
	for _, k := range f.Kills() {
		out = append(out, faults.PrimaryKill{At: k.At, Reaped: k.Reaped})
	}
	return out
}

func (f clusterFailover) Promotions() []faults.Promotion {
	var out []faults.Promotion
	for _, p := range f.Cluster.Promotions() {
		out = append(out, faults.Promotion{At: p.At, From: p.From, To: p.To,
			Detail: fmt.Sprintf("%s said role:master for shard %d (INFO replication, polled every %v)", p.ToName, p.Shard, 10*time.Millisecond)})
	}
	return out
}

func addrsOfNodes(ms []*localmasters.Master) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Addr()
	}
	return out
}
