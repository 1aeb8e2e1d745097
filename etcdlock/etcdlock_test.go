package etcdlock_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"lockbench/etcdlock"
	"lockbench/internal/redistest"
	"lockbench/redislock/engine"
)

// startCluster starts a local cluster of n members for the test.
func startCluster(t *testing.T, n int, noFsync bool) *etcdlock.Cluster {
	t.Helper()
	if _, ok := etcdlock.ServerPath(); !ok {
		redistest.RequireTool(t, errors.New("etcd not installed (apt-get install "+etcdlock.Package+")"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	c, err := etcdlock.StartLocal(ctx, etcdlock.Options{Members: n, NoFsync: noFsync, Log: t.Output()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	return c
}

func newLocker(t *testing.T, c *etcdlock.Cluster, strategy string, sessions int) *etcdlock.Locker {
	t.Helper()
	l, err := etcdlock.New(context.Background(), etcdlock.Config{Endpoints: c.Endpoints(), TTL: 5 * time.Second, Strategy: strategy,
		Retry:    engine.RetryPolicy{Strategy: engine.StrategyRetry, Min: time.Millisecond, Max: 3 * time.Millisecond, WaitTime: 5 * time.Second},
		Sessions: sessions})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Contenders on one key exclude each other, with both waits; tokens grow
// with each grant; no key is left once every lock is released.
func TestMutualExclusionAndFence(t *testing.T) {
	c := startCluster(t, 3, true)
	for _, strategy := range []string{etcdlock.StrategyQueue, engine.StrategyRetry} {
		t.Run(strategy, func(t *testing.T) {
			l := newLocker(t, c, strategy, 6)
			defer l.Close()
			key := "lockbench:test:" + strategy
			var inside, violations, cycles atomic.Int64
			var mu sync.Mutex
			var last int64
			var wg sync.WaitGroup
			for range 6 {
				wg.Go(func() {
					for range 10 {
						lock, res := l.Acquire(context.Background(), key)
						if lock == nil {
							t.Errorf("acquire failed: %+v", res)
							return
						}
						if inside.Add(1) > 1 {
							violations.Add(1)
						}
						mu.Lock()
						if lock.Fence <= last {
							t.Errorf("fence %d after %d: not increasing", lock.Fence, last)
						}
						last = lock.Fence
						mu.Unlock()
						time.Sleep(time.Millisecond)
						inside.Add(-1)
						if r := l.Release(context.Background(), lock); !r.OK {
							t.Errorf("release failed")
						}
						cycles.Add(1)
					}
				})
			}
			wg.Wait()
			if cycles.Load() != 60 || violations.Load() != 0 {
				t.Fatalf("cycles %d (want 60), violations %d (want 0)", cycles.Load(), violations.Load())
			}
			if n, err := l.CountKeys(context.Background(), key); err != nil || n != 0 {
				t.Fatalf("keys left under %s: %d (%v)", key, n, err)
			}
		})
	}
}

// A TTL the server would raise is refused with one line naming ttl; an
// unreachable endpoint is named.
func TestRefusals(t *testing.T) {
	c := startCluster(t, 1, true)
	_, err := etcdlock.New(context.Background(), etcdlock.Config{Endpoints: c.Endpoints(), TTL: time.Second, Sessions: 1})
	if err == nil || !strings.Contains(err.Error(), "ttl: 1s is not accepted") {
		t.Fatalf("ttl 1s: %v", err)
	}
	_, err = etcdlock.New(context.Background(), etcdlock.Config{Endpoints: []string{"http://127.0.0.1:1"}, TTL: 5 * time.Second, Sessions: 1})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("unreachable: %v", err)
	}
}

// Stop leaves no member process.
func TestStopByPid(t *testing.T) {
	c := startCluster(t, 3, true)
	pids := c.Pids()
	if len(pids) != 3 {
		t.Fatalf("pids %v", pids)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, p := range pids {
		if syscall.Kill(p, 0) == nil {
			t.Errorf("pid %d still running after Stop", p)
		}
	}
}
