package pglock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"os"
	"strconv"

	"lockbench/faults"
	"lockbench/internal/proc"
	"lockbench/internal/redistest"
	"lockbench/plan"
)

// The which-lock matrix's lag-failover on postgres with replicas: 1, as
// the fault scheduler runs it (replicationLag, then failover and endLags),
// through the servers' fault targets: the standby stopped and its link
// cut, a row committed on the primary, the primary killed and the standby
// promoted. The promotion's log gives the WAL the promoted node lacked
// (the commit's among it) and the row is not on it.
func TestReplicationLagThenFailover(t *testing.T) {
	if _, ok := BinDir(); !ok {
		redistest.RequireTool(t, errors.New("postgres not installed (apt-get install "+Package+")"))
	}
	sc, err := plan.Parse("lag.yaml", []byte("settings: {topology: postgres, replicas: 1, duration: 8s}\n"+
		"faults: [{at: 1s, kind: replication_lag}, {at: 4s, kind: failover}]\n"), true)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := sc.Cells()
	if err != nil {
		t.Fatal(err)
	}
	c := cells[0]
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	srv, err := postgres{}.Start(ctx, c, t.Output())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	var tg faults.Targets
	srv.Targets(c, &tg)
	if err := tg.Check(c.Faults); err != nil {
		t.Fatalf("the targets refuse the cell's faults: %v", err)
	}
	v := srv.(*servers)
	primary, replica := v.local, v.replica
	if len(tg.Replicas) != 1 || tg.Replicas[0].Addr() != replica.Addr() {
		t.Fatalf("replicas %v: want the standby", tg.Replicas)
	}
	if _, err := primary.CurrentLSN(ctx); err != nil {
		t.Fatal(err)
	}
	mustExec(t, ctx, primary, "CREATE TABLE lag_probe (v text PRIMARY KEY)")
	waitReceived(t, replica, currentLSN(t, primary))

	// replicationLag with for: the replicas paused, their links cut, then
	// resumed: the standby receives what the primary wrote meanwhile.
	lag(t, ctx, tg)
	mustExec(t, ctx, primary, "INSERT INTO lag_probe VALUES ('during a lag that ended')")
	meanwhile := currentLSN(t, primary)
	if err := tg.Replicas[0].Resume(); err != nil {
		t.Fatal(err)
	}
	if cut, _ := replica.ReplicationCut(); cut {
		t.Fatal("the standby resumed with its link still cut")
	}
	waitReceived(t, replica, meanwhile)

	// replicationLag until the failover.
	lag(t, ctx, tg)
	mustExec(t, ctx, primary, "INSERT INTO lag_probe VALUES ('after the cut')")
	committed := currentLSN(t, primary)

	// failover, then endLags' Resume.
	target, detail, _, err := tg.Failover.Failover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Replicas[0].Resume(); err != nil {
		t.Fatalf("the standby's resume once promoted: %v", err)
	}
	ps := tg.Failover.(faults.FailoverLog).Promotions()
	if len(ps) != 1 {
		t.Fatalf("promotions %+v: want one", ps)
	}
	p := ps[0]
	received, err1 := ParseLSN(p.ReceivedLSN)
	sent, err2 := ParseLSN(p.PrimaryLSN)
	switch {
	case err1 != nil || err2 != nil:
		t.Fatalf("promotion %+v: want both LSNs (%v, %v)", p, err1, err2)
	case received >= committed || sent < committed:
		t.Fatalf("promotion %+v: want the receive position before the commit's end %v, the primary's at or after it", p, committed)
	case p.Lacked != int64(sent-received) || p.Lacked <= 0:
		t.Fatalf("promotion %+v: lacked %d bytes, want %d", p, p.Lacked, sent-received)
	case !strings.Contains(p.Detail, "continued first, its link to the primary still cut") || !strings.Contains(detail, "bytes of the primary's WAL it never received"):
		t.Fatalf("promotion detail %q, failover detail %q: want the lag in words", p.Detail, detail)
	}
	var n int
	if err := replica.query(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, "SELECT count(*) FROM lag_probe WHERE v = 'after the cut'").Scan(&n)
	}); err != nil || n != 0 {
		t.Fatalf("the promoted standby has %d rows committed after the cut (%v), want 0", n, err)
	}
	if err := tg.Replication.CutReplicaLinks(ctx); err == nil {
		t.Error("a cut after the promotion: no error")
	}
	t.Logf("%s: %s; %s", target, detail, p.Detail)
}

// lag is the scheduler's replicationLag: the replicas paused (the
// standby's whole process group), their links cut.
func lag(t *testing.T, ctx context.Context, tg faults.Targets) {
	t.Helper()
	if err := tg.Replicas[0].Pause(); err != nil {
		t.Fatal(err)
	}
	if err := tg.Replication.CutReplicaLinks(ctx); err != nil {
		t.Fatal(err)
	}
	pid := tg.Replicas[0].Pid()
	under := childPids(pid)
	for _, p := range append(under, pid) {
		if st := pidState(p); st != 0 && st != 'Z' && !proc.Stopped(p) { // a zombie: a backend that ended, not reaped by the stopped postmaster
			t.Errorf("standby pid %d in state %c, not stopped by the lag", p, st)
		}
	}
	if len(under) < 2 {
		t.Errorf("standby postmaster %d has %d processes under it: want its startup process, WAL receiver...", pid, len(under))
	}
}

func mustExec(t *testing.T, ctx context.Context, s *Server, q string) {
	t.Helper()
	if err := s.query(ctx, func(c *pgx.Conn) error { _, err := c.Exec(ctx, q); return err }); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func currentLSN(t *testing.T, s *Server) LSN {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := s.CurrentLSN(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// waitReceived waits (bounded) until the standby received WAL to want.
func waitReceived(t *testing.T, s *Server, want LSN) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		got, err := s.ReceiveLSN(ctx)
		cancel()
		switch {
		case err == nil && got >= want:
			return
		case time.Now().After(deadline):
			t.Fatalf("the standby received to %v (%v) in 30 s, want %v", got, err, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// childPids are the processes whose parent is pid.
func childPids(pid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if p, err := strconv.Atoi(e.Name()); err == nil && len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out
}

// pidState is pid's state letter in /proc (0: gone).
func pidState(pid int) byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	return strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))[0][0]
}
