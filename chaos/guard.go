package chaos

import (
	"context"
	"errors"
	"strconv"
	"time"

	"lockbench/check"
	"lockbench/lock"
	"lockbench/workloads"
)

// GuardedStore is a lock service that keeps the protected counter itself
// and writes it in one step with a check that the lock is still held: the
// pattern its users are told to follow (etcd: a txn If(mutex.IsOwner());
// PostgreSQL: the update on the holding session, under
// pg_try_advisory_xact_lock; ZooKeeper: a multi that checks the holder
// znode and sets the counter if unchanged since the read).
type GuardedStore interface {
	GuardedRead(ctx context.Context, lk *lock.Lock, key string) (int64, error)
	// GuardedWrite writes v unless the lock is no longer held: applied
	// false with a nil error is a refusal (nothing written); an error
	// leaves the outcome unknown. prev is the counter it replaced.
	GuardedWrite(ctx context.Context, lk *lock.Lock, key string, v int64) (applied bool, prev int64, err error)
}

// guardKey is the service's name of key idx's counter: under the cell's
// prefix, as the resource's own.
func (c *client) guardKey(idx uint64) string {
	return c.cfg.Prefix + "res:" + strconv.FormatUint(idx, 10)
}

// guardedRMW is readModifyWrite with the counter in the lock service: the
// read, the hold, and the guarded write, filed in the resource's ledger
// for the checkers as its own writes are.
func (c *client) guardedRMW(ctx context.Context, w *workloads.Worker, h workloads.Held, hold *check.Hold, found *finding) error {
	c.gate.wait()
	hold.Begin = time.Now().UnixNano()
	v, err := c.guard.GuardedRead(ctx, h.Lock, c.guardKey(h.Key))
	if err != nil {
		return err // no section: nothing read, nothing written
	}
	hold.Read = v
	time.Sleep(c.hold.Next(w.Rand))
	// The pause hook lands here, before the write, as in the GC-pause story.
	c.gate.wait()
	applied, prev, err := c.guard.GuardedWrite(ctx, h.Lock, c.guardKey(h.Key), v+1)
	hold.Outcome, hold.End = check.Written, time.Now().UnixNano()
	if err != nil { // it may have landed, at any time from now on
		hold.Outcome, hold.End = check.Unknown, check.OpenEnd
		return errors.Join(err, c.res.RecordDoubt(ctx))
	}
	if !applied {
		hold.Outcome = check.Refused
	}
	return c.record(ctx, h.Key, v+1, prev, applied, found)
}

// record files a guarded write in the ledger, and what it found.
func (c *client) record(ctx context.Context, idx uint64, v, prev int64, applied bool, found *finding) (err error) {
	slot := int64(time.Since(c.t0) / time.Second)
	found.lost, err = c.res.Record(ctx, idx, v, prev, slot, applied)
	found.rejected = err == nil && !applied
	return err
}
