package runner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/jackc/pgx/v5"
	"github.com/prometheus/procfs"

	"lockbench/pglock"
	"lockbench/plan"
	"lockbench/pool"
	"lockbench/results"
	"lockbench/zklock"
)

// BenchmarkZookeeperVsBare: lockbench's zookeeper cell against a bare loop
// of go-zookeeper's own lock recipe (zk.NewLock: Lock, Unlock; it reads no
// token, lockbench's cell takes its token from the Children reply the
// recipe reads anyway), one session per contender, same ensemble,
// contenders and keys, interleaved pairs; the ratio of their lock
// cycles/s is the figure.
//
//	LOCKBENCH_REQUIRE_REDIS=1 go test -run '^$' -bench ZookeeperVsBare -benchtime 1x ./runner
func BenchmarkZookeeperVsBare(b *testing.B) {
	const contenders, keys, window = 16, 1000, 4 * time.Second
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
	jvms := func() []time.Duration { return pool.ProcessCPU(cl.Pids(), false) }
	pairsOf(b, func() side { return bareZookeeperLoop(b, cl.Servers(), jvms, contenders, keys, window) },
		func() side { return lockbenchCell(b, doc, jvms) })
}

// BenchmarkPostgresVsBare: lockbench's postgres cell against a bare pgx
// loop of pg_advisory_lock / pg_advisory_unlock, one connection per
// contender, same server, contenders and keys, interleaved pairs.
//
//	LOCKBENCH_REQUIRE_REDIS=1 go test -run '^$' -bench PostgresVsBare -benchtime 1x ./runner
func BenchmarkPostgresVsBare(b *testing.B) {
	const contenders, keys, window = 16, 1000, 4 * time.Second
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
	backends := func() []time.Duration { return postmasterCPU(srv.Pid()) }
	pairsOf(b, func() side { return barePostgresLoop(b, srv.URL(), backends, contenders, keys, window) },
		func() side { return lockbenchCell(b, doc, backends) })
}

// pairs is how many bare/lockbench pairs a VsBare benchmark runs
// (LOCKBENCH_PAIRS overrides): on 2 shared cores one window can be off
// by 2x, so the figure is the median of the pairs' ratios.
func pairs(b *testing.B) int {
	n := 5
	if v := os.Getenv("LOCKBENCH_PAIRS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("LOCKBENCH_PAIRS=%q: want a count >= 1", v)
		}
	}
	return n
}

// side is one measured run of a pair: its lock cycles/s, this process's
// CPU per cycle, the share of the machine other processes took in its
// window (not this one, not the servers: a disturbed pair shows it), and
// the cell's service calls per cycle.
type side struct {
	rate, clientUS, other float64
	calls                 string
}

func (s side) String() string {
	t := fmt.Sprintf("%.0f cycles/s, %.0f µs client CPU/cycle, other %.0f%%", s.rate, s.clientUS, 100*s.other)
	if s.calls != "" {
		t += ", " + s.calls
	}
	return t
}

// pairsOf runs bare and ours in interleaved pairs, which of the two goes
// first alternating (a machine's drift then falls on both), and reports
// the median of the pairs' ratios (ours/bare) with their range, beside
// each side's median cycles/s. One pair first is not measured: the first
// bare window ran at 0.5-0.65x the later ones (the JVMs' JIT, the
// servers' and this process's first allocations), with the cell after
// it at its usual rate.
func pairsOf(b *testing.B, bare, ours func() side) {
	n := pairs(b)
	bare()
	ours()
	for range b.N {
		var bs, ls, rs []float64
		for i := range n {
			var x, y side
			first := "bare"
			if i%2 == 0 {
				x = settled(bare)
				y = settled(ours)
			} else {
				first = "lockbench"
				y = settled(ours)
				x = settled(bare)
			}
			r := y.rate / x.rate
			bs, ls, rs = append(bs, x.rate), append(ls, y.rate), append(rs, r)
			b.Logf("pair %d (%s first): ratio %.3f; bare %v; lockbench %v", i+1, first, r, x, y)
		}
		b.Logf("ratio median %.3f, range %.3f-%.3f over %d pairs", median(rs), slices.Min(rs), slices.Max(rs), n)
		b.ReportMetric(median(bs), "bare_cycles/s")
		b.ReportMetric(median(ls), "lockbench_cycles/s")
		b.ReportMetric(median(rs), "ratio")
		b.ReportMetric(slices.Min(rs), "ratio_min")
		b.ReportMetric(slices.Max(rs), "ratio_max")
	}
}

// settle is the pause before each measured run: a run straight after
// another would start in its servers' clean-up (a session's close, a
// collector's pass) where one after a cell's set-up would not.
const settle = 2 * time.Second

func settled(f func() side) side { time.Sleep(settle); return f() }

// bareWarmup is the bare loops' unmeasured lead-in, the cells' warmup:
// both make their keys' parents and connections hot before counting.
const bareWarmup = 500 * time.Millisecond

// loopFor runs step on each contender for bareWarmup and then the window,
// and returns the cycles/s of the cycles that ended in the window with
// the window's CPU split (servers: the servers' CPU, as the cells read
// it); an error stops that contender.
func loopFor(b *testing.B, servers func() []time.Duration, contenders int, window time.Duration, step func(i int) error) side {
	var cycles atomic.Int64
	from := time.Now().Add(bareWarmup)
	deadline := from.Add(window)
	marks := make(chan cpuMark, 2)
	go func() {
		time.Sleep(time.Until(from))
		marks <- markCPU(servers)
		time.Sleep(time.Until(deadline))
		marks <- markCPU(servers)
	}()
	var wg sync.WaitGroup
	for i := range contenders {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if err := step(i); err != nil {
					b.Error(err)
					return
				}
				if now := time.Now(); now.After(from) && !now.After(deadline) {
					cycles.Add(1)
				}
			}
		})
	}
	wg.Wait()
	a, z := <-marks, <-marks
	n := float64(cycles.Load())
	return side{rate: n / window.Seconds(), clientUS: (z.self - a.self) * 1e6 / n, other: otherShare(a, z)}
}

// postmasterCPU is the postmaster's and its live backends' CPU, and the
// ended backends' it reaped (a cell's connections end inside the span
// its other share is read over).
func postmasterCPU(pid int) []time.Duration {
	out := pool.ProcessCPU([]int{pid}, true)
	if fs, err := procfs.NewDefaultFS(); err == nil {
		if p, err := fs.Proc(pid); err == nil {
			if st, err := p.Stat(); err == nil {
				out = append(out, time.Duration(st.CUTime+st.CSTime)*time.Second/userHZ)
			}
		}
	}
	return out
}

// userHZ is /proc's clock tick (procfs assumes the same).
const userHZ = 100

// cpuMark is the machine's and this process's CPU seconds so far, and
// the servers'.
type cpuMark struct{ busy, total, self, servers float64 }

// markCPU reads /proc as the cells' machine split does: busy is neither
// idle, I/O wait nor stolen.
func markCPU(servers func() []time.Duration) cpuMark {
	var m cpuMark
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return m
	}
	if st, err := fs.Stat(); err == nil {
		c := st.CPUTotal
		m.busy = c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ
		m.total = m.busy + c.Steal + c.Idle + c.Iowait
	}
	if p, err := fs.Self(); err == nil {
		if st, err := p.Stat(); err == nil {
			m.self = st.CPUTime()
		}
	}
	for _, d := range servers() {
		m.servers += d.Seconds()
	}
	return m
}

// otherShare is the machine's CPU between a and z that neither this
// process nor the servers used, a share of cores × wall.
func otherShare(a, z cpuMark) float64 {
	if z.total <= a.total {
		return 0
	}
	return max(0, (z.busy-a.busy)-(z.self-a.self)-(z.servers-a.servers)) / (z.total - a.total)
}

// bareZookeeperLoop is the loop a user writes with the client's recipe.
func bareZookeeperLoop(b *testing.B, servers []string, cpu func() []time.Duration, contenders, keys int, window time.Duration) side {
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
	return loopFor(b, cpu, contenders, window, func(i int) error {
		l := zk.NewLock(conns[i], fmt.Sprintf("%s/k%d", prefix, rand.IntN(keys)), zk.WorldACL(zk.PermAll))
		if err := l.Lock(); err != nil {
			return err
		}
		return l.Unlock()
	})
}

// barePostgresLoop is the loop a user writes with pgx: a connection per
// goroutine, pg_advisory_lock, pg_advisory_unlock.
func barePostgresLoop(b *testing.B, url string, cpu func() []time.Duration, contenders, keys int, window time.Duration) side {
	var conns []*pgx.Conn
	for range contenders {
		c, err := pgx.Connect(context.Background(), url)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close(context.Background())
		conns = append(conns, c)
	}
	return loopFor(b, cpu, contenders, window, func(i int) error {
		id := pglock.ID(fmt.Sprintf("bare:%d", rand.IntN(keys)))
		if _, err := conns[i].Exec(context.Background(), "SELECT pg_advisory_lock($1)", id); err != nil {
			return err
		}
		_, err := conns[i].Exec(context.Background(), "SELECT pg_advisory_unlock($1)", id)
		return err
	})
}

// lockbenchCell is one lockbench benchmark cell of doc: its cycles/s,
// client CPU and service calls per cycle as it recorded them, and the
// machine's other share over the whole call (the cell's own split counts
// servers it did not start as other).
func lockbenchCell(b *testing.B, doc string, servers func() []time.Duration) side {
	a := markCPU(servers)
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
	run := out.Cells[0].Combined
	return side{rate: run.Throughput.CyclesPerSec, clientUS: run.Client.CPUMicrosCycle, other: otherShare(a, markCPU(servers)), calls: callsOf(run.Config)}
}

// callsOf is the service calls per cycle a cell recorded; the bare
// loop's are known (on zookeeper 3 once a key's parents stand: create,
// children, delete; 2 on postgres; on etcd a Txn and a Delete, with a Get
// when it waits).
func callsOf(c *results.CellConfig) string {
	if c == nil || c.Service == nil {
		return "calls not recorded"
	}
	return fmt.Sprintf("%.2f %s/cycle", c.Service.CallsPerCycle, c.Service.Calls)
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}
