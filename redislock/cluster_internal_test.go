package redislock

import (
	"context"
	"strconv"
	"testing"
	"time"

	"lockbench/internal/redistest"
	"lockbench/redislock/engine"
	"lockbench/redislock/localmasters"
)

// clusterEngine is a lock client on cluster c: a 30 s TTL, so that a
// holder's validity outlasts the failover by far (the race is judged on
// it, not on timing), and a 1 s per-command timeout (a loaded machine's
// replies, not what is tested).
func clusterEngine(t *testing.T, c *localmasters.Cluster, wait int) *engine.Engine {
	t.Helper()
	cfg := engine.DefaultConfig()
	cfg.Topology, cfg.Masters, cfg.WaitReplicas = engine.Cluster, c.MasterAddrs(), wait
	cfg.TTL, cfg.Timeout, cfg.Retries = 30*time.Second, time.Second, 0
	e, err := engine.New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("engine on the cluster: %v", err)
	}
	t.Cleanup(e.Close)
	return e
}

// keyOnShard is a key whose slot is shard i's, asked of a live node.
func keyOnShard(t *testing.T, c *localmasters.Cluster, i int, prefix string) string {
	t.Helper()
	lo, hi := c.Shard(i)
	for n := range 1000 {
		key := prefix + strconv.Itoa(n)
		addr, err := c.ShardMaster(context.Background(), (i+1)%len(c.Masters()))
		if err != nil {
			t.Fatal(err)
		}
		s, err := redistest.Do(addr, "CLUSTER", "KEYSLOT", key)
		if err != nil {
			t.Fatal(err)
		}
		if slot, _ := strconv.Atoi(s); lo <= slot && slot <= hi {
			return key
		}
	}
	t.Fatalf("no key %s0..999 on shard %d", prefix, i)
	return ""
}

// acquireWithin tries key until granted or refused by a live master
// (Taken), for at most d (a failover answers errors and timeouts first).
func acquireWithin(e *engine.Engine, key string, d time.Duration) (*engine.Lock, engine.Result, time.Time) {
	end := time.Now().Add(d)
	for {
		lk, res := e.TryAcquire(context.Background(), key)
		if lk != nil || res.PerMaster[0] == engine.Taken || time.Now().After(end) {
			return lk, res, time.Now()
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestClusterPromotionRace arranges the replica-promotion race on one
// cluster, shard by shard, and shows what WAIT 1 changes:
//   - no WAIT, shard 0: the shard's replica is stopped (SIGSTOP) and its
//     link cut on the master while client A's SET is granted, so the
//     grant never reaches it (a stopped replica whose link stays up reads
//     it from its socket once resumed: tried, B was refused); the master
//     is killed (the failover fault), the replica resumed and promoted,
//     and client B is granted the same key while A's lock is still valid
//     (30 s TTL): two holders;
//   - WAIT 1, shard 1: A's grant is confirmed on the replica; after the
//     kill and the promotion B is refused the key (Taken), the promoted
//     node holding A's token;
//   - WAIT 1, shard 2, replica stopped: A's acquire fails (few acks: WAIT
//     saw no replica), so A never believes it holds an unreplicated grant.
//
// Bounded waits only (promotion ≤ 30 s, B's attempts ≤ 20 s); the verdicts
// are about which node has which token, not about how long it took.
func TestClusterPromotionRace(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, localmasters.ClusterOptions{Masters: 3, ReplicasPerMaster: 1})
	a, b, a1 := clusterEngine(t, c, 0), clusterEngine(t, c, 0), clusterEngine(t, c, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	f := clusterFailover{c}

	key := keyOnShard(t, c, 0, "race:")
	replica := c.ShardReplicas(0)[0]
	if err := replica.Pause(); err != nil {
		t.Fatal(err)
	}
	if err := c.CutReplicaLinks(ctx); err != nil { // else it reads the grant from its socket once resumed
		_ = replica.Resume()
		t.Fatal(err)
	}
	lockA, res := a.TryAcquire(ctx, key)
	if lockA == nil {
		_ = replica.Resume()
		t.Fatalf("A's acquire of %s with the replica stopped: %+v", key, res)
	}
	target, detail, held, err := f.Failover(ctx)
	if rerr := replica.Resume(); err != nil || rerr != nil {
		t.Fatalf("failover: %v; resume: %v", err, rerr)
	}
	t.Logf("failover: %s: %s", target, detail)
	if held != 1 {
		t.Errorf("the killed master held %d keys, want 1 (A's)", held)
	}
	p, err := c.WaitPromotion(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ps := f.Promotions(); len(ps) != 1 || ps[0].To != replica.Addr() || len(f.PrimaryKills()) != 1 {
		t.Errorf("failover log: promotions %+v, kills %d; want shard 0's replica %s promoted after 1 kill", ps, len(f.PrimaryKills()), replica.Addr())
	}
	lockB, res, grantedB := acquireWithin(b, key, 20*time.Second)
	switch {
	case lockB == nil:
		t.Errorf("no WAIT: B was not granted %s after the promotion (%+v); want granted: the promoted replica never had A's grant", key, res)
	case !grantedB.Before(lockA.ValidUntil):
		t.Errorf("no WAIT: B granted at %v, after A's validity ended (%v): no overlap arranged", grantedB, lockA.ValidUntil)
	default:
		t.Logf("no WAIT: A valid until %s, B granted %s after the kill (promotion %s after it): two holders for %s",
			lockA.ValidUntil.Format("15:04:05.000"), grantedB.Sub(c.Kills()[0].At).Round(time.Millisecond),
			p.At.Sub(c.Kills()[0].At).Round(time.Millisecond), lockA.ValidUntil.Sub(grantedB).Round(time.Second))
	}

	key1 := keyOnShard(t, c, 1, "race1:")
	lock1, res := a1.TryAcquire(ctx, key1)
	if lock1 == nil {
		t.Fatalf("WAIT 1: A's acquire of %s: %+v", key1, res)
	}
	if _, err := c.KillShardMaster(ctx, 1); err != nil {
		t.Fatal(err)
	}
	p1, err := c.WaitPromotion(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	lockB1, res, _ := acquireWithin(b, key1, 20*time.Second)
	if lockB1 != nil || res.PerMaster[0] != engine.Taken {
		t.Errorf("WAIT 1: B's acquire of %s after the promotion: granted %v, %+v; want refused (Taken): the replica had A's grant", key1, lockB1 != nil, res)
	}
	if got, _ := redistest.Do(p1.To, "GET", key1); got != lock1.Token {
		t.Errorf("WAIT 1: the promoted node %s holds %q for %s, want A's token %q", p1.To, got, key1, lock1.Token)
	}

	key2 := keyOnShard(t, c, 2, "race2:")
	replica2 := c.ShardReplicas(2)[0]
	if err := replica2.Pause(); err != nil {
		t.Fatal(err)
	}
	lock2, res := a1.TryAcquire(ctx, key2)
	if err := replica2.Resume(); err != nil {
		t.Fatal(err)
	}
	if lock2 != nil || res.PerMaster[0] != engine.FewAcks {
		t.Errorf("WAIT 1, replica stopped: acquire of %s granted %v, %v; want refused with few acks", key2, lock2 != nil, res.PerMaster)
	}
}
