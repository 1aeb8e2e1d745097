package pglock

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"lockbench/lock"
)

// The database's own guarded write: the protected value kept in a table
// and updated on the session that holds the advisory lock, in one
// statement that takes the lock again at transaction level
// (pg_try_advisory_xact_lock: granted at once to its holder, refused to
// anyone else). A session whose backend was ended cannot run it at all.

// guardTable is the protected counters' table, made on first use.
const guardTable = "lockbench_resource"

// GuardedRead reads key's counter (0 when unset) on the holding session.
func (l *Locker) GuardedRead(ctx context.Context, lk *lock.Lock, key string) (int64, error) {
	h := lk.Handle.(held)
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := l.makeTable(ctx, h.conn); err != nil {
		return 0, err
	}
	var v int64
	l.rpcs.Add(1)
	err := h.conn.QueryRow(ctx, "SELECT v FROM "+guardTable+" WHERE k = $1", key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return v, err
}

// makeTable creates the counters' table once per locker; another
// session creating it at the same moment (23505 on the catalog, 42P07)
// made it too.
func (l *Locker) makeTable(ctx context.Context, c *pgx.Conn) error {
	if l.tableMade.Load() {
		return nil
	}
	_, err := c.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+guardTable+" (k text PRIMARY KEY, v bigint NOT NULL)")
	var pe *pgconn.PgError
	if err == nil || errors.As(err, &pe) && (pe.Code == "23505" || pe.Code == "42P07") {
		l.tableMade.Store(true)
		return nil
	}
	return err
}

// guardedUpsert sets key's counter to v only if this session holds the
// advisory lock, returning whether it did and the value it replaced.
const guardedUpsert = `WITH g AS (SELECT pg_try_advisory_xact_lock($3) AS held),
old AS (SELECT v FROM ` + guardTable + ` WHERE k = $1),
up AS (INSERT INTO ` + guardTable + ` (k, v) SELECT $1, $2 FROM g WHERE g.held
  ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v RETURNING 1)
SELECT (SELECT held FROM g), coalesce((SELECT v FROM old), 0), (SELECT count(*) FROM up)`

// GuardedWrite sets the counter to v in one statement under the lock: a
// session that lost it cannot write (refused); a call that never reached
// the server, or that the server ended with its backend, wrote nothing.
func (l *Locker) GuardedWrite(ctx context.Context, lk *lock.Lock, key string, v int64) (bool, int64, error) {
	h := lk.Handle.(held)
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := l.makeTable(ctx, h.conn); err != nil {
		return false, 0, err
	}
	var held bool
	var prev, wrote int64
	l.rpcs.Add(1)
	err := h.conn.QueryRow(ctx, guardedUpsert, key, v, h.id).Scan(&held, &prev, &wrote)
	if err != nil && h.conn.IsClosed() && !pgconn.Timeout(err) && ctx.Err() == nil { // the server ended it, not our deadline
		l.lostHolder(h.conn)
	}
	var pe *pgconn.PgError
	switch {
	case err == nil:
		return held && wrote == 1, prev, nil
	case pgconn.SafeToRetry(err), errors.As(err, &pe) && pe.Code == "57P01": // not sent; or its backend ended (admin_shutdown) before it ran
		return false, 0, nil
	}
	return false, 0, err
}
