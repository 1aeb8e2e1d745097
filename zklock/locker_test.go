package zklock_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"lockbench/internal/redistest"
	"lockbench/redislock/engine"
	"lockbench/zklock"
)

// startEnsemble starts n local servers fitted to sessions of ttl.
func startEnsemble(t *testing.T, n int, ttl time.Duration) *zklock.Cluster {
	t.Helper()
	if _, ok := zklock.ServerPath(); !ok {
		redistest.RequireTool(t, errors.New("zookeeper not installed (apt-get install "+zklock.Package+")"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := zklock.StartLocal(ctx, zklock.Options{Servers: n, ForceSync: true, TTL: ttl, MaxClientCnxns: 200, Log: t.Output()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	return c
}

func newZKLocker(t *testing.T, c *zklock.Cluster, ttl time.Duration, strategy string, sessions int) *zklock.Locker {
	t.Helper()
	l, err := zklock.New(context.Background(), zklock.Config{Servers: c.Servers(), TTL: ttl, Strategy: strategy,
		Retry:    engine.RetryPolicy{Strategy: engine.StrategyRetry, Min: time.Millisecond, Max: 3 * time.Millisecond, WaitTime: 5 * time.Second},
		Sessions: sessions})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestLockerExcludesAndCleansUp: contenders on one key never overlap, in
// the queue and by retries; fencing tokens grow with each grant; Close
// leaves no znode under lockbench's root.
func TestLockerExcludesAndCleansUp(t *testing.T) {
	c := startEnsemble(t, 1, 2*time.Second)
	for _, strategy := range []string{zklock.StrategyQueue, engine.StrategyRetry} {
		t.Run(strategy, func(t *testing.T) {
			l := newZKLocker(t, c, 2*time.Second, strategy, 6)
			if got := l.GrantedTTL(); got != 2*time.Second {
				t.Fatalf("granted session timeout %v, want 2s", got)
			}
			var inside, overlaps, cycles atomic.Int64
			var mu sync.Mutex
			var last int64
			var wg sync.WaitGroup
			for range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 15 {
						lk, res := l.Acquire(context.Background(), "t:"+strategy+":hot")
						if !res.Acquired {
							t.Errorf("not acquired: %+v", res)
							return
						}
						if inside.Add(1) > 1 {
							overlaps.Add(1)
						}
						mu.Lock()
						if lk.Fence <= last {
							t.Errorf("fence %d after %d: not increasing", lk.Fence, last)
						}
						last = lk.Fence
						mu.Unlock()
						time.Sleep(200 * time.Microsecond)
						inside.Add(-1)
						if r := l.Release(context.Background(), lk); !r.OK {
							t.Errorf("release failed")
						}
						cycles.Add(1)
					}
				}()
			}
			wg.Wait()
			if overlaps.Load() != 0 || cycles.Load() != 90 {
				t.Fatalf("overlaps %d, cycles %d (want 0, 90)", overlaps.Load(), cycles.Load())
			}
			l.Close()
			conn := dial(t, c)
			if ok, _, err := conn.Exists(zklock.Root); err != nil || ok {
				kids, _, _ := conn.Children(zklock.Root)
				t.Fatalf("after Close %s exists=%v (%v), children %v", zklock.Root, ok, err, kids)
			}
		})
	}
}

// TestLockerRefusesClampedTTL: a session timeout the servers would clamp
// is refused with one line naming ttl and what they grant.
func TestLockerRefusesClampedTTL(t *testing.T) {
	c := startEnsemble(t, 1, 2*time.Second)
	_, err := zklock.New(context.Background(), zklock.Config{Servers: c.Servers(), TTL: 10 * time.Minute, Strategy: zklock.StrategyQueue, Sessions: 1})
	if err == nil || !strings.HasPrefix(err.Error(), "ttl: ") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v; want one line starting ttl:", err)
	}
}

// TestLockerTakenAndGaveUp: a try-once caller finds the key taken; a
// queued one gives up after its wait time and leaves no znode behind.
func TestLockerTakenAndGaveUp(t *testing.T) {
	c := startEnsemble(t, 1, 2*time.Second)
	holder := newZKLocker(t, c, 2*time.Second, zklock.StrategyQueue, 1)
	defer holder.Close()
	lk, res := holder.Acquire(context.Background(), "t:held")
	if !res.Acquired {
		t.Fatal("holder did not acquire")
	}
	q, err := zklock.New(context.Background(), zklock.Config{Servers: c.Servers(), TTL: 2 * time.Second, Strategy: zklock.StrategyQueue,
		Retry: engine.RetryPolicy{WaitTime: 300 * time.Millisecond}, Sessions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if _, res := q.Acquire(context.Background(), "t:held"); res.Acquired || !res.Taken || res.Err != nil {
		t.Fatalf("queued past its wait: %+v, want taken", res)
	}
	try, err := zklock.New(context.Background(), zklock.Config{Servers: c.Servers(), TTL: 2 * time.Second, Strategy: engine.StrategyRetry,
		Retry: engine.RetryPolicy{Strategy: engine.StrategyRetry, Retries: 2, Min: time.Millisecond, Max: 2 * time.Millisecond}, Sessions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer try.Close()
	if _, res := try.Acquire(context.Background(), "t:held"); res.Acquired || !res.Taken || res.Attempts != 3 {
		t.Fatalf("try-once on a held key: %+v, want taken after 3 attempts", res)
	}
	kids, _, err := dial(t, c).Children(zklock.Root + "/t:held")
	if err != nil || len(kids) != 1 {
		t.Fatalf("znodes in the key's queue: %v (%v); want only the holder's", kids, err)
	}
	holder.Release(context.Background(), lk)
}

func dial(t *testing.T, c *zklock.Cluster) *zk.Conn {
	t.Helper()
	conn, _, err := zk.Connect(c.Servers(), 2*time.Second, zk.WithLogInfo(false), zk.WithLogger(nopLog{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	return conn
}

type nopLog struct{}

func (nopLog) Printf(string, ...any) {}

// One locker's Close leaves another's locks alone: it deletes only the
// containers it made that are empty, never a live holder's znode.
func TestCloseLeavesOthersLocks(t *testing.T) {
	c := startEnsemble(t, 1, 2*time.Second)
	y := newZKLocker(t, c, 2*time.Second, zklock.StrategyQueue, 1)
	lk, res := y.Acquire(context.Background(), "t:shared")
	if !res.Acquired {
		t.Fatal("y did not acquire")
	}
	y.Release(context.Background(), lk)
	x := newZKLocker(t, c, 2*time.Second, zklock.StrategyQueue, 1)
	defer x.Close()
	held, res := x.Acquire(context.Background(), "t:shared")
	if !res.Acquired {
		t.Fatal("x did not acquire")
	}
	y.Close()
	if ok, _, err := dial(t, c).Exists(held.Token); err != nil || !ok {
		t.Fatalf("x's holder znode after y's Close: exists %v (%v); want it left", ok, err)
	}
	z, err := zklock.New(context.Background(), zklock.Config{Servers: c.Servers(), TTL: 2 * time.Second, Strategy: engine.StrategyRetry,
		Retry: engine.RetryPolicy{Strategy: engine.StrategyRetry, Retries: 1, Min: time.Millisecond, Max: 2 * time.Millisecond}, Sessions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	if _, res := z.Acquire(context.Background(), "t:shared"); res.Acquired {
		t.Fatal("z acquired a key x holds after y closed")
	}
	x.Release(context.Background(), held)
}

// TestLockerNamesConnectionLimit: a server that refuses connections past
// its maxClientCnxns closes them at once and the client retries in
// silence; the locker names the limit in one line, after the sessions it
// got.
func TestLockerNamesConnectionLimit(t *testing.T) {
	if _, ok := zklock.ServerPath(); !ok {
		redistest.RequireTool(t, errors.New("zookeeper not installed (apt-get install "+zklock.Package+")"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := zklock.StartLocal(ctx, zklock.Options{Servers: 1, TTL: 2 * time.Second, MaxClientCnxns: 3, Log: t.Output()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	_, err = zklock.New(ctx, zklock.Config{Servers: c.Servers(), TTL: 2 * time.Second, Strategy: zklock.StrategyQueue, Sessions: 5})
	if err == nil || !strings.Contains(err.Error(), "maxClientCnxns") || !strings.Contains(err.Error(), "after 3 were") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v; want one line naming maxClientCnxns after 3 sessions", err)
	}
}

// TestFenceGrowsAcrossContainers: a key's token grows past its
// container's deletion and recreation (the server deletes an empty one,
// and so does a locker's Close), where the znode's sequence number starts
// again at 0, and past a holder whose session ended without a release.
func TestFenceGrowsAcrossContainers(t *testing.T) {
	c := startEnsemble(t, 1, 2*time.Second)
	conn := dial(t, c)
	for _, strategy := range []string{zklock.StrategyQueue, engine.StrategyRetry} {
		t.Run(strategy, func(t *testing.T) {
			key := "t:" + strategy + ":again"
			l := newZKLocker(t, c, 2*time.Second, strategy, 1)
			var last int64
			var lastSeq int
			grant := func(l *zklock.Locker, why string) {
				t.Helper()
				lk, res := l.Acquire(context.Background(), key)
				if !res.Acquired {
					t.Fatalf("%s: not acquired: %+v", why, res)
				}
				if lk.Fence <= last {
					t.Fatalf("%s: fence %d after %d: not increasing", why, lk.Fence, last)
				}
				last, lastSeq = lk.Fence, seqOf(t, lk.Token)
				if r := l.Release(context.Background(), lk); !r.OK {
					t.Fatalf("%s: release failed", why)
				}
			}
			for range 3 {
				grant(l, "same container")
			}
			before := lastSeq
			if err := conn.Delete(zklock.Root+"/"+key, -1); err != nil { // as the server deletes an empty container
				t.Fatal(err)
			}
			grant(l, "recreated container")
			if lastSeq >= before {
				t.Fatalf("sequence %d after %d in a recreated container: want it restarted (else this test shows nothing)", lastSeq, before)
			}
			lk, res := l.Acquire(context.Background(), key)
			if !res.Acquired {
				t.Fatal("not acquired before Close")
			}
			last = lk.Fence
			l.Close() // ends the holder's session with the lock held
			next := newZKLocker(t, c, 2*time.Second, strategy, 1)
			defer next.Close()
			grant(next, "after a holder's session ended")
		})
	}
}

// seqOf is a lock znode's sequence number (its path's last 10 digits).
func seqOf(t *testing.T, path string) int {
	t.Helper()
	n, err := strconv.Atoi(path[len(path)-10:])
	if err != nil {
		t.Fatalf("lock znode %s: %v", path, err)
	}
	return n
}
