package runner

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/jackc/pgx/v5"

	"lockbench/internal/bound"
	"lockbench/pglock"
	"lockbench/plan"
	"lockbench/zklock"
)

func parseCells(t *testing.T, doc string) (*plan.Scenario, []plan.Cell) {
	t.Helper()
	sc, err := plan.Parse("service.yaml", []byte(doc), false)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := sc.Cells()
	if err != nil {
		t.Fatal(err)
	}
	return sc, cells
}

// interruptCell runs doc's cell and interrupts it at the first interval
// that counted locks (cold JVMs take what they take: not a fixed time
// after the servers' start-up line); the run must wind down within 20 s
// of the interrupt (below the 30 s cell a wind-down that ignored it would
// run out), say so, and keep what it measured.
func interruptCell(t *testing.T, doc string) string {
	t.Helper()
	sc, cells := parseCells(t, doc)
	log := &syncBuf{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := &cancelOnLocks{cancel: cancel, log: log}
	out, err := Run(ctx, sc, cells, Options{Scenario: "interrupt", Progress: p})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Interrupted || p.at.Load() == 0 {
		t.Fatalf("interrupt: interrupted %v, cancelled at %d", out.Interrupted, p.at.Load())
	}
	if d := time.Since(time.Unix(0, p.at.Load())); !bound.Max(t, "service.interrupt_wind_down", d, 20*time.Second) {
		t.Fatalf("interrupt: took %v to wind down", d)
	}
	if len(out.Cells) == 0 || out.Cells[0].Combined.Outcomes.Acquired == 0 {
		t.Fatalf("no partial result kept")
	}
	return log.String()
}

// pidsIn are the pids a start-up line matching re lists.
func pidsIn(t *testing.T, log, re string) []int {
	t.Helper()
	var pids []int
	for _, m := range regexp.MustCompile(re).FindAllStringSubmatch(log, -1) {
		for _, f := range strings.Fields(m[1]) {
			p, _ := strconv.Atoi(f)
			pids = append(pids, p)
		}
	}
	if len(pids) == 0 {
		t.Fatalf("no start-up line %q in the log:\n%s", re, log)
	}
	return pids
}

// Ctrl-C in the middle of a zookeeper cell stops every server (by pid)
// and keeps what was measured.
func TestZookeeperInterrupt(t *testing.T) {
	requireZookeeper(t)
	log := interruptCell(t, `
settings: {topology: zookeeper, local: 3, persistence: no-fsync, workers: 4, keys: 100, hold: 1ms, ttl: 4s, duration: 30s, warmup: 0s}
`)
	checkGone(t, pidsIn(t, log, `local zookeeper .* pids \[([0-9 ]+)\]`))
}

// Ctrl-C in the middle of a postgres cell stops the postmaster (by pid)
// and keeps what was measured.
func TestPostgresInterrupt(t *testing.T) {
	requirePostgres(t)
	log := interruptCell(t, `
settings: {topology: postgres, workers: 4, keys: 100, hold: 1ms, duration: 30s, warmup: 0s}
`)
	checkGone(t, pidsIn(t, log, `local PostgreSQL .* pid ([0-9]+)`))
}

// On an external ensemble a cell leaves no znode under lockbench's path
// and touches no one else's; an unreachable server is an error naming it.
func TestZookeeperExternalCleanup(t *testing.T) {
	requireZookeeper(t)
	cl, err := zklock.StartLocal(context.Background(), zklock.Options{Servers: 1, TTL: 5 * time.Second, Log: t.Output()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	conn, _, err := zk.Connect(cl.Servers(), 5*time.Second, zk.WithLogInfo(false), zk.WithLogger(nopLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Create("/someone-else", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	sc, cells := parseCells(t, `
settings: {topology: zookeeper, zookeeper_servers: [`+strings.Join(cl.Servers(), ", ")+`], key_prefix: "lockbench:ext:", workers: 4, keys: 10, hold: 1ms, ttl: 5s, duration: 1s, warmup: 0s}
`)
	out, err := Run(context.Background(), sc, cells, Options{Scenario: "zk"})
	if err == nil {
		err = out.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	if out.Cells[0].Combined.Outcomes.Acquired == 0 {
		t.Fatal("nothing acquired")
	}
	if ok, _, err := conn.Exists(zklock.Root); err != nil || ok {
		kids, _, _ := conn.Children(zklock.Root)
		t.Fatalf("%s after the cell: exists %v (%v), children %v; want it gone", zklock.Root, ok, err, kids)
	}
	if ok, _, err := conn.Exists("/someone-else"); err != nil || !ok {
		t.Fatalf("someone else's znode: exists %v (%v), want it untouched", ok, err)
	}
	sc, cells = parseCells(t, `settings: {topology: zookeeper, zookeeper_servers: ["127.0.0.1:1"], duration: 1s}`)
	out, err = Run(context.Background(), sc, cells, Options{Scenario: "zk"})
	if err == nil {
		err = out.Err
	}
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("unreachable server: %v, want an error naming it", err)
	}
}

// On an external server a cell leaves no advisory lock held and leaves
// someone else's alone; an unreachable server is an error naming it.
func TestPostgresExternalCleanup(t *testing.T) {
	requirePostgres(t)
	srv, err := pglock.StartLocal(context.Background(), pglock.Options{MaxConnections: 50, Log: t.Output()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	ctx := context.Background()
	other, err := pgx.Connect(ctx, srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	if _, err := other.Exec(ctx, "SELECT pg_advisory_lock(424242)"); err != nil {
		t.Fatal(err)
	}
	sc, cells := parseCells(t, `
settings: {topology: postgres, postgres_url: "`+srv.URL()+`", workers: 4, keys: 10, hold: 1ms, duration: 1s, warmup: 0s}
`)
	out, err := Run(ctx, sc, cells, Options{Scenario: "pg"})
	if err == nil {
		err = out.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	if out.Cells[0].Combined.Outcomes.Acquired == 0 {
		t.Fatal("nothing acquired")
	}
	// A closed session's locks go as its backend exits, a moment after
	// the connection closed: a lock that stays is one left behind.
	var held, theirs int
	for end := time.Now().Add(3 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if err := other.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE objid = 424242 AND pid = pg_backend_pid())
		FROM pg_locks WHERE locktype = 'advisory' AND granted`).Scan(&held, &theirs); err != nil {
			t.Fatal(err)
		}
		if held == 1 || time.Now().After(end) {
			break
		}
	}
	if held != 1 || theirs != 1 {
		t.Fatalf("advisory locks after the cell: %d held, %d of them someone else's; want only someone else's", held, theirs)
	}
	sc, cells = parseCells(t, `settings: {topology: postgres, postgres_url: "postgres://lockbench@127.0.0.1:1/postgres", duration: 1s}`)
	out, err = Run(ctx, sc, cells, Options{Scenario: "pg"})
	if err == nil {
		err = out.Err
	}
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("unreachable server: %v, want an error naming it", err)
	}
}
