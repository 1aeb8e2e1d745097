package runner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"lockbench/etcdlock"
	"lockbench/pool"
)

// BenchmarkEtcdVsBare: lockbench's etcd cell against a bare loop of
// concurrency.Mutex Lock/Unlock as a user writes it (one Session per
// contender, the lock's revision read as its token), same cluster, same
// contenders and keys, interleaved pairs; the ratio of their lock cycles/s
// is the figure (lockbench must not be what limits etcd).
//
//	LOCKBENCH_REQUIRE_REDIS=1 go test -run '^$' -bench EtcdVsBare -benchtime 1x ./runner
func BenchmarkEtcdVsBare(b *testing.B) {
	const contenders, keys, window = 16, 1000, 4 * time.Second
	if _, ok := etcdlock.ServerPath(); !ok {
		b.Skip("etcd not installed")
	}
	cl, err := etcdlock.StartLocal(context.Background(), etcdlock.Options{Members: 3, NoFsync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Stop()
	members := func() []time.Duration { return pool.ProcessCPU(cl.Pids(), false) }
	pairsOf(b, func() side { return bareEtcdLoop(b, cl.Endpoints(), members, contenders, keys, window) },
		func() side { return lockbenchEtcdCell(b, cl.Endpoints(), members, contenders, keys, window) })
}

// median of v; of an even count, the mean of the middle two.
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// bareEtcdLoop is the loop a user writes: a session per goroutine, Lock,
// read the token, Unlock.
func bareEtcdLoop(b *testing.B, eps []string, cpu func() []time.Duration, contenders, keys int, window time.Duration) side {
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, Logger: zap.NewNop()})
	if err != nil {
		b.Fatal(err)
	}
	defer cli.Close()
	prefix := fmt.Sprintf("bare:%d:", rand.Int())
	var tokens atomic.Int64
	var sessions []*concurrency.Session
	for range contenders { // before the window, as lockbench's are
		s, err := concurrency.NewSession(cli, concurrency.WithTTL(10))
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		sessions = append(sessions, s)
	}
	return loopFor(b, cpu, contenders, window, func(i int) error {
		m := concurrency.NewMutex(sessions[i], prefix+fmt.Sprint(rand.IntN(keys)))
		if err := m.Lock(context.Background()); err != nil {
			return err
		}
		tokens.Add(m.Header().Revision)
		return m.Unlock(context.Background())
	})
}

// lockbenchEtcdCell is one lockbench cell on the same cluster (external
// endpoints), hold 0.
func lockbenchEtcdCell(b *testing.B, eps []string, cpu func() []time.Duration, contenders, keys int, window time.Duration) side {
	return lockbenchCell(b, fmt.Sprintf(`settings: {topology: etcd, etcd_endpoints: [%s], workers: %d, keys: %d, hold: 0s, ttl: 10s, duration: %s, warmup: 500ms, wait_strategy: queue}`,
		strings.Join(eps, ", "), contenders, keys, window), cpu)
}
