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
// them, fail a shard over, or cut a shard's master from the bus).
func (r *RedisServers) startCluster(ctx context.Context, c plan.Cell) error {
	masters, replicas := redisplan.ClusterShape(c.Settings)
	cl, err := localmasters.StartCluster(ctx, localmasters.ClusterOptions{Masters: masters, ReplicasPerMaster: replicas, Log: r.log,
		CuttableBus: c.NeedsMemberLinks()}) // its bus through gates only when a fault cuts it
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
// the client port, so only CLIENT KILL can cut its link alone), the
// cluster's own failover of a shard, and its bus as member links when
// started cuttable (partition with link: members); the nodes' addresses.
func (r *RedisServers) clusterTargets(t *faults.Targets) []string {
	c := r.Cluster
	t.Replicas = processes(c.Replicas())
	t.Replication, t.Failover = c, clusterFailover{c}
	if c.Cuttable() {
		t.Links = clusterBus{c}
	}
	return c.Addrs()
}

// clusterBus is a cluster's bus as faults' member links: member i is
// shard i, and isolating it cuts the node serving its slots at that
// moment from every other node, its replicas' replication included, but
// not from clients: it grants until its node timeout while the others
// promote its replica.
type clusterBus struct{ c *localmasters.Cluster }

// busTimeout bounds a cut's or heal's commands (ACL, CLIENT KILL,
// CLUSTER NODES on a few nodes).
const busTimeout = 5 * time.Second

func (b clusterBus) Isolate(shards []int) error {
	ctx, cancel := context.WithTimeout(context.Background(), busTimeout)
	defer cancel()
	for _, i := range shards {
		if i < 0 || i >= len(b.c.Masters()) {
			return fmt.Errorf("redislock: cluster shard %d does not exist (0..%d)", i, len(b.c.Masters())-1)
		}
		if _, err := b.c.CutFromBus(ctx, i); err != nil {
			return err
		}
	}
	return nil
}

func (b clusterBus) Rejoin(shards []int) error {
	if len(shards) == 0 {
		return nil // HealBus would heal them all
	}
	ctx, cancel := context.WithTimeout(context.Background(), busTimeout)
	defer cancel()
	return b.c.HealBus(ctx, shards...)
}

// Proof: another node flags the cut master failing (it grants until then,
// and its replica is promoted after).
func (b clusterBus) Proof(ctx context.Context, shard int) (string, bool) {
	return b.c.BusCutProof(ctx, shard)
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
