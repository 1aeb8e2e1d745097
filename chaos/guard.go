package chaos

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"lockbench/check"
	"lockbench/lock"
	"lockbench/workloads"
)

// GuardedStore is a lock service that keeps the protected history itself
// (its write ids as text, separated by spaces) and writes it in one step
// with a check that the lock is still held: the pattern its users are
// told to follow (etcd: a txn If(mutex.IsOwner()); PostgreSQL: the update
// on the holding session, under pg_try_advisory_xact_lock; ZooKeeper: a
// multi that checks the holder znode and sets the value if unchanged since
// the read).
type GuardedStore interface {
	// GuardedRead reads key's history ("": none yet).
	GuardedRead(ctx context.Context, lk *lock.Lock, key string) (string, error)
	// GuardedWrite replaces key's history by v unless the lock is no
	// longer held: applied false with a nil error is a refusal (nothing
	// written); an error leaves the outcome unknown.
	GuardedWrite(ctx context.Context, lk *lock.Lock, key, v string) (applied bool, err error)
	// FinalRead reads key's history without a lock, from the service as it
	// stands (the promoted primary, the new leader): the checker's read
	// after the cell.
	FinalRead(ctx context.Context, key string) (string, error)
}

// guardKey is the service's name of key idx's history: under the cell's
// prefix, as the resource's own.
func guardKey(prefix string, idx uint64) string {
	return prefix + "res:" + strconv.FormatUint(idx, 10)
}

// guardedRMW is readModifyWrite with the history in the lock service: the
// read, the hold, and the guarded write of the history read with this
// write's id appended, logged for the checkers as the resource's own.
func (c *client) guardedRMW(ctx context.Context, w *workloads.Worker, h workloads.Held, hold *check.Hold, found *finding) error {
	c.gate.wait()
	hold.Begin = time.Now().UnixNano()
	key := guardKey(c.cfg.Prefix, h.Key)
	v, err := c.guard.GuardedRead(ctx, h.Lock, key)
	if err != nil {
		return err // no section: nothing read, nothing written
	}
	read := check.ParseHistory(v)
	hold.Read, hold.ReadLast = int64(len(read)), check.LastID(read)
	time.Sleep(c.holdTime(w))
	// The pause hook lands here, before the write, as in the GC-pause story.
	c.gate.wait()
	hold.ID = c.writeID()
	applied, err := c.guard.GuardedWrite(ctx, h.Lock, key, check.AppendID(v, hold.ID))
	hold.Outcome, hold.End = check.Written, time.Now().UnixNano()
	switch {
	case err != nil: // it may have landed, at any time from now on
		hold.Outcome, hold.End = check.Unknown, check.OpenEnd
	case !applied:
		hold.Outcome, found.rejected = check.Refused, true
	}
	return err
}

// FinalHistories is the checker's final read of a guarded cell: every
// key's history from the lock service as it stands after the cell, through
// a lock client of its own on cfg (a client's config).
func FinalHistories(ctx context.Context, cfg ClientConfig, keys uint64) (map[uint64][]string, error) {
	lk, closeLk, err := newLocker(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer closeLk()
	g, ok := lk.(GuardedStore)
	if !ok {
		return nil, fmt.Errorf("service %q keeps no protected history of its own", cfg.Service)
	}
	out := map[uint64][]string{}
	for i := range keys {
		v, err := g.FinalRead(ctx, guardKey(cfg.Prefix, i))
		if err != nil {
			return nil, fmt.Errorf("key %d: %w", i, err)
		}
		if h := check.ParseHistory(v); len(h) > 0 {
			out[i] = h
		}
	}
	return out, nil
}
