// Package rueidislockdriver runs the workload through rueidis' own lock,
// github.com/redis/rueidis/rueidislock, through its own API: the lock
// that ships with the client library lockbench is built on.
//
// What it is: a majority of 2·KeyMajority−1 keys (rueidislock:{i}:name, 3
// by default) on one deployment, not independent masters; each key is
// extended every ExtendInterval while the holder lives; no fencing token;
// the holder learns of a lost lock through the context it was given, which
// is cancelled when an extension fails (possibly late: an extension runs
// with the new deadline). lockbench keeps its defaults (KeyMajority 2,
// ExtendInterval KeyValidity/2, TryNextAfter 20 ms) but KeyValidity (5 s
// by default), which is the cell's ttl, so that every design holds the
// same lease.
package rueidislockdriver

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"lockbench/lock"
	"lockbench/redislock/engine"
	"lockbench/results"
)

// Name is the driver's name in settings (driver: rueidislock).
const Name = "rueidislock"

// Driver is rueidislock as the worker loop's Locker.
type Driver struct {
	lk       rueidislock.Locker
	cfg      engine.Config
	addr     string
	acquires atomic.Int64 // calls made: tries and waits
}

// noValidity: a lock kept alive by its extensions has no validity of its
// own to the holder (its context says when it ended); a hundred years, as
// the session locks' (a far future the checker's sums do not overflow).
const noValidity = 100 * 365 * 24 * time.Hour

// New connects rueidislock to the cell's one master, or to a cluster (its
// nodes the seeds; rueidis routes each of its keys to its slot).
func New(ctx context.Context, cfg engine.Config) (*Driver, error) {
	cluster := cfg.Topology == engine.Cluster
	if len(cfg.Masters) != 1 && !cluster {
		return nil, fmt.Errorf("driver: rueidislock runs on one master (topology single) or a cluster; %d given", len(cfg.Masters))
	}
	lk, err := rueidislock.NewLocker(rueidislock.LockerOption{
		ClientOption: rueidis.ClientOption{InitAddress: cfg.Masters, ForceSingleClient: !cluster},
		KeyValidity:  cfg.TTL,
	})
	if err != nil {
		return nil, fmt.Errorf("rueidislock on %s: %w", cfg.Masters[0], err)
	}
	if err := lk.Client().Do(ctx, lk.Client().B().Ping().Build()).Error(); err != nil {
		lk.Close()
		return nil, fmt.Errorf("rueidislock on %s: PING: %w", cfg.Masters[0], err)
	}
	return &Driver{lk: lk, cfg: cfg, addr: cfg.Masters[0]}, nil
}

// held is a lock's release: rueidislock's cancel.
type held struct{ cancel context.CancelFunc }

// Acquire waits for key with WithContext (rueidislock's waiters wake on
// the keys' invalidations), at most wait_time (none: one try). The lock's
// context is rueidislock's own, never bounded by the wait: a deadline on
// it would cut the lock's keys to the wait's end.
func (d *Driver) Acquire(ctx context.Context, key string) (*lock.Lock, lock.Result) {
	start := time.Now()
	d.acquires.Add(1)
	var lctx context.Context
	var cancel context.CancelFunc
	var err error
	if d.cfg.WaitTime <= 0 {
		lctx, cancel, err = d.lk.TryWithContext(context.Background(), key)
	} else {
		lctx, cancel, err = d.wait(ctx, key)
	}
	res := lock.Result{Attempts: 1, Elapsed: time.Since(start)}
	switch {
	case err == nil:
		res.Acquired = true
		return &lock.Lock{Key: key, Start: start, ValidUntil: start.Add(noValidity), Lost: lctx.Done(), Handle: held{cancel}}, res
	case ctx.Err() != nil:
		res.Err = ctx.Err()
	case errors.Is(err, rueidislock.ErrNotLocked), errors.Is(err, context.Canceled):
		res.Taken = true
	default:
		res.Err = err
	}
	return nil, res
}

// wait is WithContext bounded by wait_time and by the caller's context,
// without bounding the lock it returns: a give-up that comes as the lock
// is granted releases it.
func (d *Driver) wait(ctx context.Context, key string) (context.Context, context.CancelFunc, error) {
	wctx, stopWaiting := context.WithCancel(context.Background())
	var state atomic.Int32 // 0 waiting, 1 granted, 2 gave up
	giveUp := func() {
		if state.CompareAndSwap(0, 2) {
			stopWaiting()
		}
	}
	t := time.AfterFunc(d.cfg.WaitTime, giveUp)
	defer t.Stop()
	stop := context.AfterFunc(ctx, giveUp)
	defer stop()
	lctx, cancel, err := d.lk.WithContext(wctx, key)
	if err == nil && !state.CompareAndSwap(0, 1) {
		cancel()
		return nil, nil, context.Canceled
	}
	if err != nil {
		stopWaiting()
		return nil, nil, err
	}
	return lctx, func() { cancel(); stopWaiting() }, nil
}

// Release cancels the lock's context: rueidislock deletes its keys.
func (d *Driver) Release(_ context.Context, l *lock.Lock) lock.OpResult {
	start := time.Now()
	h, ok := l.Handle.(held)
	if !ok {
		return lock.OpResult{}
	}
	h.cancel()
	return lock.OpResult{OK: true, Count: 1, Elapsed: time.Since(start)}
}

// Close closes rueidislock's client.
func (d *Driver) Close() { d.lk.Close() }

// CountKeys counts the keys under prefix on the master, or on each of a
// cluster's nodes that is a master (rueidislock's own are under
// rueidislock:, not the cell's prefix).
func (d *Driver) CountKeys(ctx context.Context, prefix string) (int64, error) {
	if d.cfg.Topology != engine.Cluster {
		return countKeys(ctx, d.lk.Client(), prefix)
	}
	var total int64
	for _, c := range d.lk.Client().Nodes() {
		role, err := c.Do(ctx, c.B().Role().Build()).ToArray()
		if err != nil || len(role) == 0 {
			continue // a node down: its shard's master is another now
		}
		if r, _ := role[0].ToString(); r != "master" {
			continue
		}
		n, err := countKeys(ctx, c, prefix)
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

// countKeys is CountKeys on one server.
func countKeys(ctx context.Context, c rueidis.Client, prefix string) (int64, error) {
	var n int64
	cursor := uint64(0)
	for {
		e, err := c.Do(ctx, c.B().Scan().Cursor(cursor).Match(prefix+"*").Count(1000).Build()).AsScanEntry()
		if err != nil {
			return n, err
		}
		n += int64(len(e.Elements))
		if cursor = e.Cursor; cursor == 0 {
			return n, nil
		}
	}
}

// Put is one plain SET round trip: the floor to compare acquires with.
func (d *Driver) Put(ctx context.Context, key string) error {
	c := d.lk.Client()
	return c.Do(ctx, c.B().Set().Key(key).Value("1").Px(time.Second).Build()).Error()
}

// Delete: Put's keys expire by themselves.
func (d *Driver) Delete(context.Context, string) error { return nil }

// RPCs are the lock calls made (rueidislock counts no commands of its
// own: each acquire sets 3 keys, each hold extends them).
func (d *Driver) RPCs() int64 { return d.acquires.Load() }

// Record: what the locks ran on.
func (d *Driver) Record(v *results.ServiceSettings) {
	if v != nil { // a Redis topology's result keeps no service section
		v.LeaseTTL, v.Calls = results.Duration(d.cfg.TTL), "lock calls (acquires)"
	}
}
