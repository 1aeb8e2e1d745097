package localmasters_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"lockbench/internal/bound"
	"lockbench/internal/redistest"
	"lockbench/redislock/engine"
	"lockbench/redislock/localmasters"
)

func info(t *testing.T, addr, section string) map[string]string {
	t.Helper()
	return engine.ParseInfo(do(t, addr, "INFO", section))
}

// pids are every process' pid, recorded while they run (Pid is 0 after).
func pids(r *localmasters.Replicated) map[string]int {
	out := map[string]int{}
	for _, m := range append(append([]*localmasters.Master{r.Master()}, r.Replicas()...), r.Sentinels()...) {
		if pid := m.Pid(); pid > 0 {
			out[m.Name()+" "+m.Addr()] = pid
		}
	}
	return out
}

func stopAndCheckGone(t *testing.T, r *localmasters.Replicated, before map[string]int) {
	t.Helper()
	if err := r.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := r.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	for name, pid := range before {
		if !gone(pid) {
			t.Errorf("%s: pid %d still exists after Stop", name, pid)
		}
	}
}

func TestReplicatedStartsInSyncAndStops(t *testing.T) {
	t.Parallel()
	r := redistest.StartReplicated(t, localmasters.ReplicatedOptions{Replicas: 2, Sentinels: 3, MinReplicasToWrite: 1})
	if got := info(t, r.MasterAddr(), "replication"); got["min_slaves_good_slaves"] != "2" {
		t.Errorf("master %s: min_slaves_good_slaves %q, want 2 (min-replicas-to-write set)", r.MasterAddr(), got["min_slaves_good_slaves"])
	}
	if got := info(t, r.MasterAddr(), "replication"); got["role"] != "master" || got["connected_slaves"] != "2" {
		t.Errorf("master %s: role %q connected_slaves %q", r.MasterAddr(), got["role"], got["connected_slaves"])
	}
	do(t, r.MasterAddr(), "SET", "repl:k", "v")
	do(t, r.MasterAddr(), "WAIT", "2", "1000")
	for _, m := range r.Replicas() {
		got := info(t, m.Addr(), "replication")
		if got["role"] != "slave" || got["master_link_status"] != "up" || got["master_port"] != strings.Split(r.MasterAddr(), ":")[1] {
			t.Errorf("%s %s: %v", m.Name(), m.Addr(), got)
		}
		if v := do(t, m.Addr(), "GET", "repl:k"); v != "v" {
			t.Errorf("%s: GET repl:k = %q after WAIT 2", m.Name(), v)
		}
	}
	for _, s := range r.Sentinels() {
		if got := do(t, s.Addr(), "SENTINEL", "CKQUORUM", r.MasterSet()); !strings.HasPrefix(got, "OK 3 usable") {
			t.Errorf("%s %s: CKQUORUM: %q", s.Name(), s.Addr(), got)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		addr, err := localmasters.MasterAddrByName(ctx, s.Addr(), r.MasterSet())
		cancel()
		if err != nil || addr != r.MasterAddr() {
			t.Errorf("%s: master at %q (%v), want %s", s.Name(), addr, err, r.MasterAddr())
		}
	}
	before := pids(r)
	if len(before) != 6 {
		t.Fatalf("pids of 1+2+3 processes: %v", before)
	}
	stopAndCheckGone(t, r, before)
}

func TestReplicatedFailover(t *testing.T) {
	t.Parallel()
	const downAfter = 500 * time.Millisecond
	r := redistest.StartReplicated(t, localmasters.ReplicatedOptions{Replicas: 2, Sentinels: 3,
		DownAfter: downAfter, FailoverTimeout: 2 * time.Second})
	do(t, r.MasterAddr(), "SET", "fo:k", "v")
	do(t, r.MasterAddr(), "WAIT", "2", "1000")
	before := pids(r)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	k, err := r.KillMaster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if k.Addr != r.MasterAddr() || !gone(k.Pid) || k.Reaped.Before(k.At) {
		t.Fatalf("kill %+v: want the master %s gone", k, r.MasterAddr())
	}
	sw, err := r.WaitSwitch(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	window := sw.At.Sub(k.At)
	t.Logf("kill -9 of %s at down-after %v: +switch-master to %s after %v (first from %s)", k.Addr, downAfter, sw.To, window, sw.Sentinel)
	// Sentinel's own steps: down-after, one ping period, a desync of up
	// to 1 s, the election, the promotion seen in INFO (1 s apart).
	// An upper bound on those steps' sum with room for load; a failover
	// that never came ends WaitSwitch at 30 s.
	if limit := downAfter + 8*time.Second; !bound.Max(t, "sentinel.failover_window", window, limit) {
		t.Errorf("failover took %v, want below %v", window, limit)
	}
	if sw.From != k.Addr || !slices.Contains(r.ReplicaAddrs(), sw.To) {
		t.Errorf("switch %+v: want from %s to a replica of %v", sw, k.Addr, r.ReplicaAddrs())
	}
	if cur, err := r.CurrentMaster(ctx); err != nil || cur != sw.To {
		t.Errorf("CurrentMaster = %q, %v; want %s", cur, err, sw.To)
	}
	if got := info(t, sw.To, "replication"); got["role"] != "master" {
		t.Errorf("promoted %s: role %q", sw.To, got["role"])
	}
	if v := do(t, sw.To, "GET", "fo:k"); v != "v" {
		t.Errorf("promoted %s lost fo:k: %q", sw.To, v)
	}
	if n := len(r.Switches()); n != 1 {
		t.Errorf("Switches() has %d entries, want 1: %v", n, r.Switches())
	}
	stopAndCheckGone(t, r, before)
}

func TestReplicaPrioritySteersPromotion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		prio []int
		want int
	}{{[]int{10, 50}, 0}, {[]int{50, 10}, 1}} {
		t.Run(fmt.Sprintf("priority-%d-%d", tc.prio[0], tc.prio[1]), func(t *testing.T) {
			t.Parallel()
			r := redistest.StartReplicated(t, localmasters.ReplicatedOptions{Replicas: 2, Sentinels: 1,
				DownAfter: 500 * time.Millisecond, FailoverTimeout: 2 * time.Second, ReplicaPriority: tc.prio})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := r.KillMaster(ctx); err != nil {
				t.Fatal(err)
			}
			sw, err := r.WaitSwitch(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			if want := r.Replicas()[tc.want].Addr(); sw.To != want {
				t.Errorf("priorities %v: promoted %s, want replica %d (%s)", tc.prio, sw.To, tc.want, want)
			}
		})
	}
}

func TestReplicatedOptionsRejected(t *testing.T) {
	cases := map[string]localmasters.ReplicatedOptions{
		"replicas":              {Replicas: 0, Sentinels: 1},
		"sentinels":             {Replicas: 1, Sentinels: 0},
		"master set":            {Replicas: 1, Sentinels: 1, MasterSet: "a b"},
		"replica priority":      {Replicas: 1, Sentinels: 1, ReplicaPriority: []int{1, 2}},
		"priority of replica":   {Replicas: 1, Sentinels: 1, ReplicaPriority: []int{-1}},
		"min-replicas-to-write": {Replicas: 1, Sentinels: 1, MinReplicasToWrite: 2},
		"no embedded fallback":  {Replicas: 1, Sentinels: 1, RedisServer: "/nonexistent/redis-server"},
	}
	for want, opt := range cases {
		_, err := localmasters.StartReplicated(context.Background(), opt)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: got %v, want an error naming %q", opt, err, want)
		}
	}
}
