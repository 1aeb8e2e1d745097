package pglock_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"lockbench/pglock"
)

// startReplica starts a streaming replica of s, stopped at the test's end.
func startReplica(t *testing.T, s *pglock.Server) *pglock.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := s.StartReplica(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Stop() })
	return r
}

// exec runs statements on a connection of their own.
func exec(t *testing.T, url string, sqls ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	for _, q := range sqls {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// probeRows are the values in lag_probe on the server at url.
func probeRows(t *testing.T, url string) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	rows, _ := c.Query(ctx, "SELECT v FROM lag_probe")
	vs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, v := range vs {
		out[v] = true
	}
	return out
}

// lsn reads a WAL position, failing the test if the server does not say.
func lsn(t *testing.T, read func(context.Context) (pglock.LSN, error)) pglock.LSN {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// commitProbe commits value into lag_probe on the primary and returns
// the WAL insert position just before its COMMIT: the commit record
// starts at or after it, so a standby whose receive position is at most
// that has not received the commit.
func commitProbe(t *testing.T, primary *pglock.Server, value string) pglock.LSN {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, primary.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var text string
	if _, err := tx.Exec(ctx, "INSERT INTO lag_probe VALUES ($1)", value); err != nil {
		t.Fatal(err)
	}
	if err := tx.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&text); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil { // acknowledged: flushed on the primary
		t.Fatal(err)
	}
	start, err := pglock.ParseLSN(text)
	if err != nil {
		t.Fatal(err)
	}
	return start
}

// caughtUp waits (bounded) until the standby received the primary's WAL
// to want and replayed the row value: the link works.
func caughtUp(t *testing.T, standby *pglock.Server, want pglock.LSN, value string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		got, err := standby.ReceiveLSN(ctx)
		cancel()
		if err == nil && got >= want && probeRows(t, standby.URL())[value] {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby did not catch up in 30 s: received to %v (%v), want %v and row %q", got, err, want, value)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The standby's link cut, it receives none of what the primary commits
// after: its receive position stays before the commit while its WAL
// receiver tries to reconnect (every 200 ms), and once the primary is
// killed and the standby promoted, the row is not there. Before the cut,
// the same wait sees the standby receive a commit: the check can tell.
func TestCutLinkStandbyMissesCommit(t *testing.T) {
	s := startServer(t)
	r := startReplica(t, s)
	exec(t, s.URL(), "CREATE TABLE lag_probe (v text PRIMARY KEY)", "INSERT INTO lag_probe VALUES ('before')")
	caughtUp(t, r, lsn(t, s.CurrentLSN), "before")
	if cut, refused := r.ReplicationCut(); cut || refused != 0 {
		t.Fatalf("link cut %v, %d refused before any cut", cut, refused)
	}

	if err := r.CutReplication(); err != nil {
		t.Fatal(err)
	}
	cutAt := lsn(t, r.ReceiveLSN)
	commitStart := commitProbe(t, s, "after")
	commitEnd := lsn(t, s.CurrentLSN)
	if commitEnd <= cutAt || commitStart < cutAt {
		t.Fatalf("commit at %v..%v, standby received to %v at the cut: the commit is not past it", commitStart, commitEnd, cutAt)
	}
	// Polled, not slept: a receive past the commit's start fails at once.
	// 3 s is 15 of the WAL receiver's retries.
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if got := lsn(t, r.ReceiveLSN); got > commitStart {
			t.Fatalf("the cut standby received WAL to %v, past the commit's start %v (the link let it through)", got, commitStart)
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, refused := r.ReplicationCut()
	if refused == 0 {
		t.Fatal("no reconnection of the standby came in 3 s: the re-check did not meet its WAL receiver's retry")
	}
	if got := lsn(t, r.ReceiveLSN); got > commitStart {
		t.Fatalf("the cut standby received WAL to %v, past the commit's start %v, after %d reconnections", got, commitStart, refused)
	}
	if probeRows(t, r.URL())["after"] {
		t.Fatal("the cut standby shows the row committed after the cut")
	}

	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := r.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	received := lsn(t, r.ReceiveLSN)
	rows := probeRows(t, r.URL())
	switch {
	case received > commitStart:
		t.Fatalf("promoted with WAL received to %v, past the commit's start %v", received, commitStart)
	case !rows["before"] || rows["after"]:
		t.Fatalf("promoted standby's rows %v: want before (streamed) and not after (committed on the primary once the link was cut)", rows)
	}
	exec(t, r.URL(), "INSERT INTO lag_probe VALUES ('promoted')") // it takes writes
	t.Logf("cut at %v, commit %v..%v, promoted with %v received (%d bytes short), %d reconnections refused", cutAt, commitStart, commitEnd, received, commitEnd-received, refused)
}

// A replica's link is cut and restored only on a replica; LSNs read as
// PostgreSQL writes them.
func TestLSN(t *testing.T) {
	for text, want := range map[string]pglock.LSN{"0/0": 0, "0/3000148": 0x3000148, "16/B374D848": 0x16B374D848, "FFFFFFFF/FFFFFFFF": ^pglock.LSN(0)} {
		got, err := pglock.ParseLSN(text)
		if err != nil || got != want || got.String() != text {
			t.Errorf("ParseLSN(%q) = %v (%v), want %#x written the same", text, got, err, uint64(want))
		}
	}
	for _, bad := range []string{"", "0", "0/", "/1", "x/1", "1/2/3", "100000000/0"} {
		if _, err := pglock.ParseLSN(bad); err == nil {
			t.Errorf("ParseLSN(%q): no error", bad)
		}
	}
	var s pglock.Server
	if err := s.CutReplication(); err == nil {
		t.Error("CutReplication on a primary: no error")
	}
}
