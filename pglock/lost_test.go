package pglock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"lockbench/check"
	"lockbench/faults"
	"lockbench/internal/redistest"
	"lockbench/lock"
	"lockbench/plan"
)

// The blind spot issue 52 names, on real servers: a primary with an
// asynchronous standby whose link is cut (checked by LSN: the standby
// never received the acknowledged write's commit), one guarded write
// acknowledged there, one in doubt (blocked on its row when the primary is
// killed), the standby promoted, the next holder writing what it read
// there. The history check counts the acknowledged write lost; the counter
// it replaced (check.Judge before e808597: with a write in doubt, the sum
// of each answered write's replaced value − its read) counts nothing,
// because the next holder read the promoted standby and replaced exactly
// what it read.
func TestLostGuardedWriteBesideOneInDoubt(t *testing.T) {
	if _, ok := BinDir(); !ok {
		redistest.RequireTool(t, errors.New("postgres not installed (apt-get install "+Package+")"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	v, tg, c := startPair(t, ctx)
	const key, idx = "k", uint64(0)
	var ops []check.Op
	var replaced []int64 // each answered write's replaced history length, as the old counter got it
	write := func(l *Locker, lk *lock.Lock, id string) check.Op {
		t.Helper()
		read, err := l.GuardedRead(ctx, lk, key)
		if err != nil {
			t.Fatal(err)
		}
		h := check.ParseHistory(read)
		op := check.Op{Key: idx, Begin: time.Now().UnixNano(), Read: int64(len(h)), ReadLast: check.LastID(h), ID: id}
		replaced = append(replaced, int64(len(h))) // the guard serializes: the write replaces what its holder read
		ok, err := l.GuardedWrite(ctx, lk, key, check.AppendID(read, id))
		op.End = time.Now().UnixNano()
		switch {
		case err != nil:
			t.Fatalf("write %s: %v", id, err)
		case !ok:
			t.Fatalf("write %s refused to its holder", id)
		}
		op.Outcome = check.Written
		return op
	}

	a := newClient(t, ctx, v, c)
	lk := acquire(t, ctx, a, key)
	ops = append(ops, write(a, lk, "a.1"))
	waitReceived(t, v.replica, currentLSN(t, v.local))

	lag(t, ctx, tg) // the standby stopped, its link cut
	ops = append(ops, write(a, lk, "a.2"))
	committed := currentLSN(t, v.local)

	// a.3: sent, blocked on the row another session locked, so that the
	// primary's kill leaves it without an answer.
	blocker := rowLock(t, ctx, v.local, key)
	defer blocker.Close(context.Background())
	inDoubt := make(chan check.Op, 1)
	go func() {
		read, _ := a.GuardedRead(ctx, lk, key)
		h := check.ParseHistory(read)
		op := check.Op{Key: idx, Begin: time.Now().UnixNano(), Read: int64(len(h)), ReadLast: check.LastID(h), ID: "a.3"}
		ok, err := a.GuardedWrite(ctx, lk, key, check.AppendID(read, "a.3"))
		op.End, op.Outcome = time.Now().UnixNano(), check.Unknown
		if err == nil {
			op.Outcome = map[bool]check.Outcome{true: check.Written, false: check.Refused}[ok]
		}
		inDoubt <- op
	}()
	waitBlocked(t, ctx, v.local)

	if _, _, _, err := tg.Failover.Failover(ctx); err != nil {
		t.Fatal(err)
	}
	op3 := <-inDoubt
	if op3.Outcome != check.Unknown {
		t.Fatalf("the blocked write's outcome %v at the kill; want in doubt (no answer)", op3.Outcome)
	}
	ops = append(ops, op3)
	p := tg.Failover.(faults.FailoverLog).Promotions()[0]
	if received, err := ParseLSN(p.ReceivedLSN); err != nil || received >= committed {
		t.Fatalf("the standby received WAL to %s (%v); want it short of a.2's commit at %v", p.ReceivedLSN, err, committed)
	}
	// What the promoted standby had: a.1's commit, not a.2's (the runner
	// counts the writes past it from this).
	if had := p.HadUntil.UnixNano(); had < ops[0].Begin || had > ops[0].End || had >= ops[1].Begin {
		t.Errorf("the promoted standby's last commit at %v; want a.1's (%v..%v), before a.2 began", p.HadUntil, time.Unix(0, ops[0].Begin), time.Unix(0, ops[0].End))
	}

	b := newClient(t, ctx, v, c)
	ops = append(ops, write(b, acquire(t, ctx, b, key), "b.1"))
	final, err := newClient(t, ctx, v, c).FinalRead(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	finals := map[uint64][]string{idx: check.ParseHistory(final)}
	w := check.CheckHistories(ops, finals)
	j := check.CheckLinearizable(append(ops, check.FinalOps(ops, finals, time.Now().UnixNano())...), 10*time.Second)
	t.Logf("final history %q: %+v; porcupine: %s; the counter's figure: %d", final, w, j.Verdict, counterLost(ops, replaced))
	switch {
	case j.Verdict != check.NotLinearizable:
		t.Errorf("porcupine's verdict %q on the history with its final read; want %q, as the history check", j.Verdict, check.NotLinearizable)
	case w.Lost != 1 || len(w.LostIDs) != 1 || w.LostIDs[0] != "a.2":
		t.Errorf("lost %d %v; want a.2, acknowledged by the killed primary, missing from the promoted one", w.Lost, w.LostIDs)
	case w.InDoubt != 1 || w.Acknowledged != 3 || w.StaleAccepted != 0:
		t.Errorf("%+v: want 3 acknowledged, 1 in doubt, none stale", w)
	case counterLost(ops, replaced) != 0:
		t.Errorf("the counter's figure %d: this test stands on its being blind (0) here", counterLost(ops, replaced))
	}
}

// counterLost is the counter this history replaced, as check.Judge
// computed it once a guarded write was in doubt: the sum, over answered
// writes, of the value each replaced − the value it read.
func counterLost(ops []check.Op, replaced []int64) int64 {
	var lost int64
	i := 0
	for _, op := range ops {
		if op.Outcome == check.Written {
			lost += replaced[i] - op.Read
			i++
		}
	}
	return lost
}

// startPair starts a primary and its standby as a lag-failover cell does.
func startPair(t *testing.T, ctx context.Context) (*servers, faults.Targets, plan.Cell) {
	t.Helper()
	sc, err := plan.Parse("lost.yaml", []byte("settings: {topology: postgres, replicas: 1, guarded_write: true, workers: 1}\n"+
		"faults: [{at: 1s, kind: replication_lag}, {at: 2s, kind: failover}]\n"), true)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := sc.Cells()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := postgres{}.Start(ctx, cells[0], t.Output())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	var tg faults.Targets
	srv.Targets(cells[0], &tg)
	return srv.(*servers), tg, cells[0]
}

// newClient is a cell's lock client: it finds whichever server takes writes.
func newClient(t *testing.T, ctx context.Context, v *servers, c plan.Cell) *Locker {
	t.Helper()
	raw, err := v.ClientConfig(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := postgres{}.NewClient(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	l := cl.(client).Locker
	t.Cleanup(l.Close)
	return l
}

func acquire(t *testing.T, ctx context.Context, l *Locker, key string) *lock.Lock {
	t.Helper()
	lk, res := l.Acquire(ctx, key)
	if lk == nil {
		t.Fatalf("acquire %s: %+v", key, res)
	}
	return lk
}

// rowLock holds key's history row locked in an open transaction.
func rowLock(t *testing.T, ctx context.Context, s *Server, key string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(ctx, s.URL())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "SELECT h FROM "+guardTable+" WHERE k = $1 FOR UPDATE", key); err != nil {
		t.Fatal(err)
	}
	return c
}

// waitBlocked waits (bounded) until a session waits on a row lock.
func waitBlocked(t *testing.T, ctx context.Context, s *Server) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var n int
		if err := s.query(ctx, func(c *pgx.Conn) error {
			return c.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'").Scan(&n)
		}); err == nil && n > 0 {
			return
		}
	}
	t.Fatal("the in-doubt write never waited on its row")
}
