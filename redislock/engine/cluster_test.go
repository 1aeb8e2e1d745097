package engine_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"lockbench/internal/redistest"
	"lockbench/redislock/engine"
	"lockbench/redislock/localmasters"
)

// clusterEngine is an engine on cluster c (seeded with its masters).
func clusterEngine(t *testing.T, c *localmasters.Cluster, wait int) *engine.Engine {
	t.Helper()
	cfg := engine.DefaultConfig()
	cfg.Topology, cfg.Masters, cfg.WaitReplicas = engine.Cluster, c.MasterAddrs(), wait
	cfg.Timeout = time.Second // a loaded machine's replies, not what is tested
	e, err := engine.New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("engine on the cluster: %v", err)
	}
	t.Cleanup(e.Close)
	return e
}

// readReplica reads key on a replica (READONLY first, on one connection).
func readReplica(t *testing.T, addr, key string) string {
	t.Helper()
	cl, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, ForceSingleClient: true, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res := cl.DoMulti(ctx, cl.B().Readonly().Build(), cl.B().Get().Key(key).Build())
	v, err := res[1].ToString()
	if err != nil && !rueidis.IsRedisNil(err) {
		t.Fatalf("replica %s: GET %s: %v", addr, key, err)
	}
	return v
}

// TestEngineRoutesByClusterSlot: on a 3-shard cluster the engine's SET
// lands on the master of its key's slot, with no MOVED answered (each
// command names its key, so the client routes it); with WAIT 1 the
// replica of that shard has the token once the acquire returns; keys are
// counted and cleaned up on every shard. Keys are fixed names, so which
// shard each lands on is fixed too (all three are hit).
func TestEngineRoutesByClusterSlot(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, localmasters.ClusterOptions{Masters: 3, ReplicasPerMaster: 1})
	for _, wait := range []int{0, 1} {
		e := clusterEngine(t, c, wait)
		prefix := "route" + strconv.Itoa(wait) + ":"
		hit := map[int]bool{}
		var locks []*engine.Lock
		for i := range 30 {
			key := prefix + strconv.Itoa(i)
			l, res := e.Acquire(context.Background(), key)
			if l == nil {
				t.Fatalf("wait %d: acquire %s: %+v", wait, key, res)
			}
			locks = append(locks, l)
			sh := redistest.ShardOf(t, c, key)
			hit[sh] = true
			if got := get(t, c.MasterAddrs()[sh], key); got != l.Token {
				t.Errorf("wait %d: %s on shard %d's master: %q, want the token %q", wait, key, sh, got, l.Token)
			}
			if wait > 0 {
				if got := readReplica(t, c.ShardReplicas(sh)[0].Addr(), key); got != l.Token {
					t.Errorf("WAIT 1: %s on shard %d's replica: %q, want the token %q", key, sh, got, l.Token)
				}
			}
		}
		if len(hit) != 3 {
			t.Errorf("wait %d: keys landed on shards %v, want all 3", wait, hit)
		}
		if w := e.WaitCounts(); wait > 0 && (w.Sent == 0 || w.Short != 0) {
			t.Errorf("WAIT 1: %+v, want WAITs sent and none short", w)
		}
		if n, err := e.CountKeys(context.Background(), 0, prefix); err != nil || n != 30 {
			t.Errorf("wait %d: CountKeys = %d, %v; want 30 over the shards", wait, n, err)
		}
		for _, l := range locks[:10] {
			if r := e.Release(context.Background(), l); !r.OK {
				t.Errorf("wait %d: release %s: %+v", wait, l.Key, r)
			}
		}
		if n, err := e.Cleanup(context.Background(), prefix, e.TokenPrefix()); err != nil || n != 20 {
			t.Errorf("wait %d: Cleanup = %d, %v; want the 20 still held", wait, n, err)
		}
	}
	for _, a := range c.MasterAddrs() {
		if s, _ := redistest.Do(a, "INFO", "errorstats"); strings.Contains(s, "errorstat_MOVED") {
			t.Errorf("master %s answered MOVED (a command sent to a node not serving its slot): %s", a, s)
		}
	}
}
