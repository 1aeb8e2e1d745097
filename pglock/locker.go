package pglock

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"lockbench/internal/sessionloss"
	"lockbench/internal/slots"
	"lockbench/lock"
	"lockbench/results"
)

// StrategyQueue is the server's own wait: pg_advisory_lock queues the
// caller on the lock, bounded by lock_timeout.
const StrategyQueue = "queue"

// WaitStrategies are the waits an advisory lock takes: the server's queue,
// or lock's retry, backoff and spin over pg_try_advisory_lock.
var WaitStrategies = []string{StrategyQueue, lock.StrategyRetry, lock.StrategyBackoff, lock.StrategySpin}

// noValidity is a session lock's ValidUntil: it has no lease; it holds
// until released or its connection ends.
const noValidity = 100 * 365 * 24 * time.Hour

// neverLost is a session lock's Lost: the lock holds until its connection
// ends, and pgx learns that only on the holder's next call, so it never
// fires; set, so that checkers judge the hold as a session's (from the
// acquire to the end of its use), not on a TTL it does not have.
var neverLost = make(chan struct{})

// callTimeout bounds a release, which has no caller's deadline.
const callTimeout = 5 * time.Second

// Config is an advisory-lock client's terms.
type Config struct {
	URL string
	// Strategy is StrategyQueue or one of the retry policy's; Retry holds
	// the retry terms, and its WaitTime is the queue's lock_timeout (0:
	// wait until the caller's context ends).
	Strategy string
	Retry    lock.RetryPolicy
	// Conns is how many contenders: one connection (session) each, as an
	// advisory lock belongs to the session that took it.
	Conns int
}

// Locker is PostgreSQL's session-level advisory locks through pgx, one
// connection per contender.
type Locker struct {
	cfg       Config
	tableMade atomic.Bool            // the guarded write's table exists
	conns     *slots.Pool[*pgx.Conn] // one per contender
	rpcs      atomic.Int64
	losses    sessionloss.Log // holding sessions found dead, by backend pid
	mu        sync.Mutex
	dropped   []<-chan struct{} // connections pgx was closing when dropped (Close waits)
	stmts     statements        // the cycle's calls, prepared on each connection
}

// held is a lock's server side: the connection (session) that holds it.
type held struct {
	conn *pgx.Conn
	id   int64
}

// New opens cfg.Conns connections, naming the server when one fails (the
// URL's password is not part of the message).
func New(ctx context.Context, cfg Config) (*Locker, error) {
	l := &Locker{cfg: cfg}
	l.conns = slots.New(cfg.Conns, l.connect, func(c *pgx.Conn) bool { return !c.IsClosed() })
	if err := l.conns.Fill(ctx); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// connect opens one session, its queue bounded by the wait time.
func (l *Locker) connect(ctx context.Context) (*pgx.Conn, error) {
	pc, err := pgx.ParseConfig(l.cfg.URL)
	if err != nil {
		return nil, errors.New("postgres-url: not a PostgreSQL URL; use postgres://user[:pass]@host:port/db")
	}
	pc.ConnectTimeout = 3 * time.Second
	c, err := pgx.ConnectConfig(ctx, pc)
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && pe.Code == "53300":
		return nil, fmt.Errorf("postgres %s:%d: its max_connections is reached (one connection per worker: lower workers, or raise max_connections): %s", pc.Host, pc.Port, hidePass(err, pc.Password))
	case err != nil:
		return nil, fmt.Errorf("postgres %s:%d: not reachable: %s", pc.Host, pc.Port, hidePass(err, pc.Password))
	}
	if wt := l.cfg.Retry.WaitTime; wt > 0 && l.cfg.Strategy == StrategyQueue {
		if _, err := c.Exec(ctx, fmt.Sprintf("SET lock_timeout = %d", wt.Milliseconds())); err != nil {
			c.Close(context.Background())
			return nil, fmt.Errorf("postgres: set lock_timeout: %w", err)
		}
	}
	if err := l.stmts.prepare(ctx, c); err != nil {
		c.Close(context.Background())
		return nil, fmt.Errorf("postgres: prepare the lock calls: %w", err)
	}
	return c, nil
}

// hidePass keeps a password out of an error's text.
func hidePass(err error, pass string) string {
	msg := strings.Join(strings.Fields(err.Error()), " ") // pgx's is several lines: one line here
	if pass == "" {
		return msg
	}
	return strings.ReplaceAll(msg, pass, "xxxxx")
}

// ID is the advisory lock's 64-bit key for a lock key: its FNV-1a hash.
func ID(key string) int64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return int64(h.Sum64())
}

// giveBack returns a connection; a broken one (its locks are gone with
// it) leaves its slot empty, and counts as lost unless the caller's
// context ended (a cancelled pgx call closes its connection).
func (l *Locker) giveBack(c *pgx.Conn, ctx context.Context) {
	if c.IsClosed() {
		l.closing(c)
		l.conns.Drop(ctx.Err() == nil)
		return
	}
	l.conns.Put(c)
}

// closing keeps a connection pgx is still closing (a cancelled call
// closes it in the background), so that Close waits for it: until then
// its backend may hold a lock.
func (l *Locker) closing(c *pgx.Conn) {
	l.mu.Lock()
	l.dropped = append(l.dropped, c.PgConn().CleanupDone())
	l.mu.Unlock()
}

// Acquire takes key's advisory lock: in the server's queue, or by
// pg_try_advisory_lock with the retry policy. Result.Err is set only when
// ctx ended.
func (l *Locker) Acquire(ctx context.Context, key string) (*lock.Lock, lock.Result) {
	start := time.Now()
	c, err := l.conns.Take(ctx)
	if err != nil {
		return nil, lock.Result{Attempts: 1, Elapsed: time.Since(start), Err: ctx.Err()}
	}
	id := ID(key)
	var res lock.Result
	if l.cfg.Strategy == StrategyQueue {
		res = l.queue(ctx, c, id)
	} else {
		_, res = l.cfg.Retry.Acquire(ctx, func(ctx context.Context) (*lock.Lock, lock.Result) { return l.try(ctx, c, id) })
	}
	res.Elapsed = time.Since(start)
	if !res.Acquired {
		l.giveBack(c, ctx)
		return nil, res
	}
	return &lock.Lock{Key: key, Start: start, ValidUntil: start.Add(noValidity), Handle: held{c, id}, Lost: neverLost}, res
}

// queue waits in the server's queue for the lock, at most lock_timeout
// (55P03: gave up, the key taken all along). A cancelled call tears the
// connection down, and its locks with it.
func (l *Locker) queue(ctx context.Context, c *pgx.Conn, id int64) lock.Result {
	_, err := l.stmts.call(ctx, c, callLock, id)
	l.rpcs.Add(1)
	res := lock.Result{Attempts: 1, Sent: 1}
	var pe *pgconn.PgError
	switch {
	case err == nil:
		res.Acquired = true
	case ctx.Err() != nil:
		res.Err = ctx.Err()
	case errors.As(err, &pe) && pe.Code == "55P03":
		res.Taken = true
	}
	return res
}

// try is one pg_try_advisory_lock.
func (l *Locker) try(ctx context.Context, c *pgx.Conn, id int64) (*lock.Lock, lock.Result) {
	ok, err := l.stmts.call(ctx, c, callTryLock, id)
	l.rpcs.Add(1)
	switch {
	case err != nil:
		return nil, lock.Result{Sent: 1, Err: ctx.Err()}
	case ok: // the retry loop stops at a lock: Acquire makes the real one
		return &lock.Lock{}, lock.Result{Acquired: true, Sent: 1}
	}
	return nil, lock.Result{Taken: true, Sent: 1}
}

// Release unlocks and gives the connection back.
func (l *Locker) Release(ctx context.Context, lk *lock.Lock) lock.OpResult {
	start := time.Now()
	h := lk.Handle.(held)
	var ok bool
	err := bounded(h.conn, func() (err error) {
		ok, err = l.stmts.call(context.Background(), h.conn, callUnlock, h.id)
		return err
	})
	l.rpcs.Add(1)
	if err != nil {
		// The session is in doubt: end it, and its locks with it. Lost
		// under the client only when the server ended it (not our
		// deadline: a server that did not answer in time may hold it yet).
		if !pgconn.Timeout(err) {
			l.lostHolder(h.conn)
		}
		h.conn.Close(context.Background())
	}
	l.giveBack(h.conn, context.Background())
	ok = err == nil && ok
	return lock.OpResult{OK: ok, Count: b2i(ok), Elapsed: time.Since(start), Sent: 1}
}

// bounded runs a clean-up call within callTimeout by a deadline on the
// connection's socket: a caller's context with a deadline would cost pgx a
// goroutine per call to watch it (a bare loop on context.Background()
// pays none), and the release is every cycle's.
func bounded(c *pgx.Conn, call func() error) error {
	nc := c.PgConn().Conn()
	_ = nc.SetDeadline(time.Now().Add(callTimeout))
	err := call()
	if err == nil { // after an error pgx closes the connection under its own deadline: leave that be
		_ = nc.SetDeadline(time.Time{})
	}
	return err
}

// lostHolder records that a holding session's call failed: the client
// learns only now (no lease, no signal) that the server may have freed
// its lock.
func (l *Locker) lostHolder(c *pgx.Conn) {
	l.losses.Add(strconv.Itoa(int(c.PgConn().PID())))
}

// Losses are the holding sessions this locker found dead, as it learnt.
func (l *Locker) Losses() []results.SessionLoss { return l.losses.List() }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// RPCs are the calls the locker made for locks.
func (l *Locker) RPCs() int64 { return l.rpcs.Load() }

// LostConnections are sessions that broke and were replaced.
func (l *Locker) LostConnections() int64 { return l.conns.Lost() }

// HeldLocks counts the advisory locks held on the server (pg_locks).
func (l *Locker) HeldLocks(ctx context.Context) (int64, error) {
	c, err := l.conns.Take(ctx)
	if err != nil {
		return 0, err
	}
	defer l.giveBack(c, ctx)
	var n int64
	err = c.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted").Scan(&n)
	return n, err
}

// Ping is one round trip: the baseline a lock's calls compare with.
func (l *Locker) Ping(ctx context.Context) error {
	c, err := l.conns.Take(ctx)
	if err != nil {
		return err
	}
	defer l.giveBack(c, ctx)
	_, err = c.Exec(ctx, "SELECT 1")
	return err
}

// Close ends every session, also those still holding a lock: their
// advisory locks go with them.
func (l *Locker) Close() {
	for _, c := range l.conns.Opened() {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		_ = c.Close(ctx)
		cancel()
	}
	l.mu.Lock()
	dropped := l.dropped
	l.mu.Unlock()
	deadline := time.After(callTimeout)
	for _, done := range dropped {
		select {
		case <-done:
		case <-deadline:
			return
		}
	}
}
