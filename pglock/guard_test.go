package pglock_test

import (
	"context"
	"testing"

	"lockbench/pglock"
)

// The guard itself, not a dead connection: a session that no longer holds
// the key's lock (released, and another session holds it now) has its
// guarded write refused, with no error, and the history stays as the
// holder's write left it; the final read, on a session without the lock,
// sees it too.
func TestGuardedWriteRefusedWhenNotHeld(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()
	open := func() *pglock.Locker {
		l, err := pglock.New(ctx, pglock.Config{URL: s.URL(), Strategy: pglock.StrategyQueue, Conns: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(l.Close)
		return l
	}
	a, b := open(), open()
	lk, res := a.Acquire(ctx, "g")
	if !res.Acquired {
		t.Fatal("a did not acquire")
	}
	if ok, err := a.GuardedWrite(ctx, lk, "res:g", "0.1"); !ok || err != nil {
		t.Fatalf("holder's guarded write: applied %v err %v; want applied", ok, err)
	}
	a.Release(ctx, lk)
	lk2, res := b.Acquire(ctx, "g")
	if !res.Acquired {
		t.Fatal("b did not acquire")
	}
	if ok, err := a.GuardedWrite(ctx, lk, "res:g", "0.1 0.2"); ok || err != nil {
		t.Fatalf("guarded write without the lock: applied %v err %v; want refused, no error", ok, err)
	}
	if v, err := b.GuardedRead(ctx, lk2, "res:g"); v != "0.1" || err != nil {
		t.Fatalf("history %q (%v) after the refused write; want the holder's \"0.1\"", v, err)
	}
	b.Release(ctx, lk2)
	if v, err := a.FinalRead(ctx, "res:g"); v != "0.1" || err != nil {
		t.Fatalf("final read %q (%v); want \"0.1\"", v, err)
	}
}
