package runner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/jackc/pgx/v5"

	"lockbench/pglock"
	"lockbench/plan"
	"lockbench/zklock"
)

// BenchmarkZookeeperVsBare: lockbench's zookeeper cell against a bare loop
// of go-zookeeper's own lock recipe (zk.NewLock: Lock, Unlock; it reads no
// token, where lockbench's cell spends an Exists on the czxid: the bare
// loop is favoured), one session per contender, same ensemble,
// contenders and keys, interleaved; the ratio of their lock cycles/s is
// the figure.
//
//	LOCKBENCH_REQUIRE_REDIS=1 go test -run '^$' -bench ZookeeperVsBare -benchtime 1x ./runner
func BenchmarkZookeeperVsBare(b *testing.B) {
	const contenders, keys, window, pairs = 16, 1000, 4 * time.Second, 3
	if _, ok := zklock.ServerPath(); !ok {
		b.Skip("zookeeper not installed")
	}
	cl, err := zklock.StartLocal(context.Background(), zklock.Options{Servers: 3, TTL: 10 * time.Second, MaxClientCnxns: 200})
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Stop()
	doc := fmt.Sprintf(`settings: {topology: zookeeper, zookeeper_servers: [%s], workers: %d, keys: %d, hold: 0s, ttl: 10s, duration: %s, warmup: 500ms, wait_strategy: queue}`,
		strings.Join(cl.Servers(), ", "), contenders, keys, window)
	bareZookeeperLoop(b, cl.Servers(), contenders, keys, window) // the JVMs' JIT warms up first: not measured
	pairsOf(b, pairs, func() float64 { return bareZookeeperLoop(b, cl.Servers(), contenders, keys, window) },
		func() float64 { return lockbenchCell(b, doc) })
}

// BenchmarkPostgresVsBare: lockbench's postgres cell against a bare pgx
// loop of pg_advisory_lock / pg_advisory_unlock, one connection per
// contender, same server, contenders and keys, interleaved.
//
//	LOCKBENCH_REQUIRE_REDIS=1 go test -run '^$' -bench PostgresVsBare -benchtime 1x ./runner
func BenchmarkPostgresVsBare(b *testing.B) {
	const contenders, keys, window, pairs = 16, 1000, 4 * time.Second, 3
	if _, ok := pglock.BinDir(); !ok {
		b.Skip("postgres not installed")
	}
	srv, err := pglock.StartLocal(context.Background(), pglock.Options{MaxConnections: 100})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Stop()
	doc := fmt.Sprintf(`settings: {topology: postgres, postgres_url: %q, workers: %d, keys: %d, hold: 0s, duration: %s, warmup: 500ms, wait_strategy: queue}`,
		srv.URL(), contenders, keys, window)
	pairsOf(b, pairs, func() float64 { return barePostgresLoop(b, srv.URL(), contenders, keys, window) },
		func() float64 { return lockbenchCell(b, doc) })
}

// pairsOf runs bare and ours n times, interleaved, and reports their
// medians and the ratio.
func pairsOf(b *testing.B, n int, bare, ours func() float64) {
	for range b.N {
		var bs, os []float64
		for range n {
			bs = append(bs, bare())
			os = append(os, ours())
		}
		mb, mo := median(bs), median(os)
		b.Logf("bare %v cycles/s, lockbench %v cycles/s", bs, os)
		b.ReportMetric(mb, "bare_cycles/s")
		b.ReportMetric(mo, "lockbench_cycles/s")
		b.ReportMetric(mo/mb, "ratio")
	}
}

// loopFor runs step on each contender until the window ends and returns
// the cycles/s (an error stops that contender).
func loopFor(b *testing.B, contenders int, window time.Duration, step func(i int) error) float64 {
	var cycles atomic.Int64
	deadline := time.Now().Add(window)
	var wg sync.WaitGroup
	for i := range contenders {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if err := step(i); err != nil {
					b.Error(err)
					return
				}
				cycles.Add(1)
			}
		})
	}
	wg.Wait()
	return float64(cycles.Load()) / window.Seconds()
}

// bareZookeeperLoop is the loop a user writes with the client's recipe.
func bareZookeeperLoop(b *testing.B, servers []string, contenders, keys int, window time.Duration) float64 {
	prefix := fmt.Sprintf("/bare%d", rand.Int())
	var conns []*zk.Conn
	for range contenders { // before the window, as lockbench's sessions are
		c, _, err := zk.Connect(servers, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(nopLogger{}))
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	return loopFor(b, contenders, window, func(i int) error {
		l := zk.NewLock(conns[i], fmt.Sprintf("%s/k%d", prefix, rand.IntN(keys)), zk.WorldACL(zk.PermAll))
		if err := l.Lock(); err != nil {
			return err
		}
		return l.Unlock()
	})
}

// barePostgresLoop is the loop a user writes with pgx: a connection per
// goroutine, pg_advisory_lock, pg_advisory_unlock.
func barePostgresLoop(b *testing.B, url string, contenders, keys int, window time.Duration) float64 {
	var conns []*pgx.Conn
	for range contenders {
		c, err := pgx.Connect(context.Background(), url)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close(context.Background())
		conns = append(conns, c)
	}
	return loopFor(b, contenders, window, func(i int) error {
		id := pglock.ID(fmt.Sprintf("bare:%d", rand.IntN(keys)))
		if _, err := conns[i].Exec(context.Background(), "SELECT pg_advisory_lock($1)", id); err != nil {
			return err
		}
		_, err := conns[i].Exec(context.Background(), "SELECT pg_advisory_unlock($1)", id)
		return err
	})
}

// lockbenchCell is one lockbench benchmark cell of doc; its cycles/s.
func lockbenchCell(b *testing.B, doc string) float64 {
	sc, err := plan.Parse("bench.yaml", []byte(doc), false)
	if err != nil {
		b.Fatal(err)
	}
	cells, err := sc.Cells()
	if err != nil {
		b.Fatal(err)
	}
	out, err := Run(context.Background(), sc, cells, Options{Scenario: "bench"})
	if err == nil {
		err = out.Err
	}
	if err != nil {
		b.Fatal(err)
	}
	return out.Cells[0].Combined.Throughput.CyclesPerSec
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}
