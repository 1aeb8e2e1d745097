package engine_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"lockbench/internal/bound"
	"lockbench/internal/redistest"
	"lockbench/redislock/engine"
	"lockbench/redislock/localmasters"
)

func TestTopologyValidation(t *testing.T) {
	redlock := engine.DefaultConfig()
	redlock.Masters = []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}
	repl := engine.DefaultConfig()
	repl.Topology, repl.SentinelAddrs, repl.MasterSet = engine.Replicated, []string{"127.0.0.1:4", "127.0.0.1:5"}, "lockbench"
	single := redlock
	single.Topology, single.Masters = engine.Single, []string{"127.0.0.1:1"}
	cluster := redlock
	cluster.Topology, cluster.WaitReplicas = engine.Cluster, 1
	for name, c := range map[string]engine.Config{"redlock": redlock, "replicated": repl, "single": single, "cluster": cluster} {
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	cases := []struct {
		field  string
		base   engine.Config
		mutate func(*engine.Config)
	}{
		{"topology", redlock, func(c *engine.Config) { c.Topology = "sharded" }},
		{"wait-strategy", redlock, func(c *engine.Config) { c.Topology, c.Strategy = engine.Cluster, engine.StrategyNotify }},
		{"masters", single, func(c *engine.Config) { c.Masters = []string{"127.0.0.1:1", "127.0.0.1:2"} }},
		{"masters", repl, func(c *engine.Config) { c.Masters = []string{"127.0.0.1:1"} }},
		{"sentinel-addrs", repl, func(c *engine.Config) { c.SentinelAddrs = nil }},
		{"sentinel-addrs", repl, func(c *engine.Config) { c.SentinelAddrs = []string{"127.0.0.1:4", "127.0.0.1:4"} }},
		{"sentinel-addrs", redlock, func(c *engine.Config) { c.SentinelAddrs = []string{"127.0.0.1:4"} }},
		{"master-set", repl, func(c *engine.Config) { c.MasterSet = "" }},
		{"master-set", single, func(c *engine.Config) { c.MasterSet = "lockbench" }},
		{"wait-replicas", repl, func(c *engine.Config) { c.WaitReplicas = -1 }},
		{"wait-replicas", redlock, func(c *engine.Config) { c.WaitReplicas = 1 }},
		{"wait-replicas", single, func(c *engine.Config) { c.WaitReplicas = 1 }},
		{"wait-timeout", repl, func(c *engine.Config) { c.WaitReplicas, c.WaitTimeout = 1, -time.Millisecond }},
	}
	for _, tc := range cases {
		c := tc.base
		tc.mutate(&c)
		err := c.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tc.field+":") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line naming %q", tc.field, err, tc.field)
		}
	}
	if tp, err := engine.ParseTopology(""); tp != engine.Redlock || err != nil {
		t.Errorf(`ParseTopology("") = %q, %v; want redlock`, tp, err)
	}
}

func TestSingleTopologyIsRedlockOfOne(t *testing.T) {
	set := redistest.StartMasters(t, 1, localmasters.PersistNone)
	e := newEngine(t, set, func(c *engine.Config) { c.Topology = engine.Single })
	if e.Topology() != engine.Single {
		t.Fatalf("Topology() = %q", e.Topology())
	}
	lock, res := e.Acquire(context.Background(), "single:k")
	if lock == nil || res.Successes != 1 || res.PerMaster[0] != engine.OK {
		t.Fatalf("acquire: %+v", res)
	}
	cfg := engine.DefaultConfig()
	if want := lock.Start.Add(cfg.TTL - engine.Drift(cfg.TTL, cfg.DriftFactor)); !lock.ValidUntil.Equal(want) {
		t.Errorf("ValidUntil %v, want t1 + TTL − drift = %v", lock.ValidUntil, want)
	}
	if l2, r2 := e.Acquire(context.Background(), "single:k"); l2 != nil || r2.PerMaster[0] != engine.Taken {
		t.Errorf("second acquire of a held key: %+v", r2)
	}
	if rel := e.Release(context.Background(), lock); !rel.OK {
		t.Errorf("release: %+v", rel)
	}
	if v := get(t, set.Addrs()[0], "single:k"); v != "" {
		t.Errorf("key still %q after release", v)
	}
}

func newReplicatedEngine(t *testing.T, r *localmasters.Replicated, mutate func(*engine.Config)) *engine.Engine {
	t.Helper()
	cfg := engine.DefaultConfig()
	cfg.Topology, cfg.SentinelAddrs, cfg.MasterSet = engine.Replicated, r.SentinelAddrs(), r.MasterSet()
	// These tests judge outcomes and medians, not timeouts: a loaded
	// 2-core machine may stall a reply past the default 50ms.
	cfg.Timeout = time.Second
	if mutate != nil {
		mutate(&cfg)
	}
	e, err := engine.New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("replicated engine: %v", err)
	}
	t.Cleanup(e.Close)
	return e
}

func TestReplicatedAcquireReleaseThroughSentinel(t *testing.T) {
	t.Parallel()
	r := redistest.StartReplicated(t, localmasters.ReplicatedOptions{Replicas: 1, Sentinels: 2})
	e := newReplicatedEngine(t, r, nil)
	if a := e.Addrs(); len(a) != 1 || !strings.Contains(a[0], r.MasterSet()) || !strings.Contains(a[0], r.SentinelAddrs()[1]) {
		t.Errorf("Addrs() = %q: want the master set and the Sentinels", a)
	}
	lock, res := e.Acquire(context.Background(), "repl:k")
	if lock == nil || res.PerMaster[0] != engine.OK {
		t.Fatalf("acquire: %+v", res)
	}
	if v := get(t, r.MasterAddr(), "repl:k"); v != lock.Token {
		t.Errorf("master holds %q, want the token %q", v, lock.Token)
	}
	if rel := e.Release(context.Background(), lock); !rel.OK {
		t.Fatalf("release: %+v", rel)
	}
	if v := get(t, r.MasterAddr(), "repl:k"); v != "" {
		t.Errorf("key still %q after release", v)
	}
	if w := e.WaitCounts(); w.Sent != 0 {
		t.Errorf("WaitCounts %+v without wait-replicas", w)
	}

	cfg := engine.DefaultConfig()
	cfg.Topology, cfg.SentinelAddrs, cfg.MasterSet = engine.Replicated, r.SentinelAddrs(), "nope"
	if _, err := engine.New(context.Background(), cfg); err == nil || !strings.HasPrefix(err.Error(), "master-set: sentinel") || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown master set: %v", err)
	}
	cfg.MasterSet, cfg.SentinelAddrs = r.MasterSet(), []string{r.SentinelAddrs()[0], r.MasterAddr()}
	if _, err := engine.New(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), r.MasterAddr()) {
		t.Errorf("a master given as Sentinel: %v", err)
	}
}

func TestReplicatedUnreachableSentinel(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	cfg := engine.DefaultConfig()
	cfg.Topology, cfg.SentinelAddrs, cfg.MasterSet = engine.Replicated, []string{addr}, "lockbench"
	_, err = engine.New(context.Background(), cfg)
	if err == nil || !strings.HasPrefix(err.Error(), "sentinel-addrs: "+addr+" is unreachable") {
		t.Errorf("got %v, want one error naming the Sentinel %s", err, addr)
	}
}

func p50(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func TestReplicatedWaitCost(t *testing.T) {
	t.Parallel()
	r := redistest.StartReplicated(t, localmasters.ReplicatedOptions{Replicas: 1, Sentinels: 1})
	plain := newReplicatedEngine(t, r, nil)
	waited := newReplicatedEngine(t, r, func(c *engine.Config) { c.WaitReplicas, c.WaitTimeout = 1, time.Second })
	const n = 400
	var times [2][]time.Duration
	for i := range 2 * n { // interleaved, so both see the same machine
		e := []*engine.Engine{plain, waited}[i%2]
		lock, res := e.TryAcquire(context.Background(), fmt.Sprintf("cost:%d", i))
		if lock == nil {
			t.Fatalf("acquire %d (wait %v): %+v", i, i%2, res)
		}
		times[i%2] = append(times[i%2], res.Elapsed)
		e.Release(context.Background(), lock)
	}
	a, b := p50(times[0]), p50(times[1])
	w := waited.WaitCounts()
	t.Logf("acquire p50: WAIT 0 %v, WAIT 1 %v (ratio %.2f); WAITs %+v", a, b, float64(b)/float64(a), w)
	// Interleaved pairs in one process: a load moves both p50s alike.
	if !bound.Min(t, "wait_cost.wait1_p50", b, a) || b == a {
		t.Errorf("acquire p50 with WAIT 1 (%v) is not above WAIT 0 (%v): WAIT's round trip is missing", b, a)
	}
	if w.Sent != n || w.Acks != n || w.Short != 0 {
		t.Errorf("WaitCounts %+v: want %d WAITs, each acknowledged by 1 replica", w, n)
	}
	if c := waited.Commands(); c[engine.CmdWaits] != n || c.Total() != c[engine.CmdSets]+c[engine.CmdReleases]+n {
		t.Errorf("Commands %+v: want the %d WAITs counted as commands", c, n)
	}
	if c := plain.Commands(); c[engine.CmdWaits] != 0 {
		t.Errorf("Commands %+v without wait-replicas", c)
	}
}

func TestReplicatedFewAcks(t *testing.T) {
	t.Parallel()
	r := redistest.StartReplicated(t, localmasters.ReplicatedOptions{Replicas: 2, Sentinels: 1, DownAfter: 30 * time.Second})
	// Both replicas up, WAIT 2 must be met: given 1 s, since a loaded
	// machine (these tests run in parallel, under -race) can stall an ack
	// past 50 ms. The paused replica's case keeps 50 ms: it must cost the
	// whole WAIT timeout, which only a lower bound checks.
	up := newReplicatedEngine(t, r, func(c *engine.Config) { c.WaitReplicas, c.WaitTimeout = 2, time.Second })
	lock, res := up.TryAcquire(context.Background(), "few:up")
	if lock == nil {
		t.Fatalf("both replicas up: %+v", res)
	}
	up.Release(context.Background(), lock)
	if w := up.WaitCounts(); w.Sent != 1 || w.Short != 0 || w.Acks != 2 {
		t.Errorf("WaitCounts %+v with both replicas up: want 1 WAIT, 2 acks", w)
	}
	e := newReplicatedEngine(t, r, func(c *engine.Config) { c.WaitReplicas, c.WaitTimeout = 2, 50*time.Millisecond })

	paused := r.Replicas()[1]
	if err := paused.Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = paused.Resume() })
	lock, res = e.TryAcquire(context.Background(), "few:k")
	if lock != nil || res.PerMaster[0] != engine.FewAcks {
		t.Fatalf("one of 2 replicas paused, WAIT 2: acquired=%v outcome %v, want %v", lock != nil, res.PerMaster[0], engine.FewAcks)
	}
	if res.Elapsed < 50*time.Millisecond {
		t.Errorf("FewAcks after %v, before WAIT's 50ms timeout", res.Elapsed)
	}
	if v := get(t, r.MasterAddr(), "few:k"); v != "" {
		t.Errorf("the failed acquire's key is still %q on the master: not released", v)
	}
	if w := e.WaitCounts(); w.Sent != 1 || w.Short != 1 || w.Acks != 1 {
		t.Errorf("WaitCounts %+v with a replica paused: want 1 WAIT, short, 1 ack", w)
	}
	if engine.FewAcks.String() != "few_acks" {
		t.Errorf("FewAcks.String() = %q", engine.FewAcks.String())
	}
}

func TestReplicatedFollowsFailover(t *testing.T) {
	t.Parallel()
	const downAfter = 500 * time.Millisecond
	r := redistest.StartReplicated(t, localmasters.ReplicatedOptions{Replicas: 2, Sentinels: 3,
		DownAfter: downAfter, FailoverTimeout: 2 * time.Second})
	e := newReplicatedEngine(t, r, nil)
	if lock, res := e.TryAcquire(context.Background(), "fo:before"); lock == nil {
		t.Fatalf("before the kill: %+v", res)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	k, err := r.KillMaster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	failed := map[string]int{}
	var lock *engine.Lock
	for i := 0; lock == nil; i++ {
		if ctx.Err() != nil {
			t.Fatalf("no acquire within 30s of the kill; failures by outcome %v", failed)
		}
		var res engine.Result
		lock, res = e.TryAcquire(ctx, fmt.Sprintf("fo:%d", i))
		if lock == nil {
			failed[res.PerMaster[0].String()]++
			time.Sleep(10 * time.Millisecond)
		}
	}
	window := time.Since(k.At)
	sw, err := r.WaitSwitch(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kill -9 of %s: +switch-master to %s after %v, first acquire after %v; failed attempts by outcome %v",
		k.Addr, sw.To, sw.At.Sub(k.At), window, failed)
	// Bounded from the switch Sentinel made, measured here (was the kill
	// plus down-after plus a flat 10 s): the engine follows within 5 s of
	// it: rueidis hears the +switch-master at once, and 5 s is five of the
	// acquires' 1 s per-master timeouts on a loaded machine.
	if since := window - sw.At.Sub(k.At); !bound.Max(t, "failover.acquire_after_switch", since, 5*time.Second) {
		t.Errorf("acquires resumed %v after the kill, %v after the switch; want within 5 s of the switch", window, since)
	}
	if v := get(t, sw.To, lock.Key); v != lock.Token {
		t.Errorf("new master %s holds %q for %s, want the token", sw.To, v, lock.Key)
	}
	if rel := e.Release(context.Background(), lock); !rel.OK {
		t.Errorf("release on the new master (its script cache is empty): %+v", rel)
	}
}
