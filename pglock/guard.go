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

// guardTable is the protected histories' table, made on first use.
const guardTable = "lockbench_history"

// GuardedRead reads key's history ("" when unset) on the holding session.
func (l *Locker) GuardedRead(ctx context.Context, lk *lock.Lock, key string) (string, error) {
	h := lk.Handle.(held)
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := l.makeTable(ctx, h.conn); err != nil {
		return "", err
	}
	l.rpcs.Add(1)
	return readHistory(ctx, h.conn, key)
}

// FinalRead reads key's history on any session, without a lock: the
// checker's read from the server as it stands after the cell.
func (l *Locker) FinalRead(ctx context.Context, key string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	c, err := l.conns.Take(ctx)
	if err != nil {
		return "", err
	}
	defer l.giveBack(c, ctx)
	if err := l.makeTable(ctx, c); err != nil {
		return "", err
	}
	return readHistory(ctx, c, key)
}

func readHistory(ctx context.Context, c *pgx.Conn, key string) (string, error) {
	var v string
	err := c.QueryRow(ctx, "SELECT h FROM "+guardTable+" WHERE k = $1", key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// makeTable creates the histories' table once per locker; another
// session creating it at the same moment (23505 on the catalog, 42P07)
// made it too.
func (l *Locker) makeTable(ctx context.Context, c *pgx.Conn) error {
	if l.tableMade.Load() {
		return nil
	}
	_, err := c.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+guardTable+" (k text PRIMARY KEY, h text NOT NULL)")
	var pe *pgconn.PgError
	if err == nil || errors.As(err, &pe) && (pe.Code == "23505" || pe.Code == "42P07") {
		l.tableMade.Store(true)
		return nil
	}
	return err
}

// guardedUpsert sets key's history to v only if this session holds the
// advisory lock, returning whether it did.
const guardedUpsert = `WITH g AS (SELECT pg_try_advisory_xact_lock($3) AS held),
up AS (INSERT INTO ` + guardTable + ` (k, h) SELECT $1, $2 FROM g WHERE g.held
  ON CONFLICT (k) DO UPDATE SET h = EXCLUDED.h RETURNING 1)
SELECT (SELECT held FROM g), (SELECT count(*) FROM up)`

// GuardedWrite sets the history to v in one statement under the lock: a
// session that lost it cannot write (refused); a call that never reached
// the server, or that the server ended with its backend, wrote nothing.
func (l *Locker) GuardedWrite(ctx context.Context, lk *lock.Lock, key, v string) (bool, error) {
	h := lk.Handle.(held)
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := l.makeTable(ctx, h.conn); err != nil {
		return false, err
	}
	var ok bool
	var wrote int64
	l.rpcs.Add(1)
	err := h.conn.QueryRow(ctx, guardedUpsert, key, v, h.id).Scan(&ok, &wrote)
	if err != nil && h.conn.IsClosed() && !pgconn.Timeout(err) && ctx.Err() == nil { // the server ended it, not our deadline
		l.lostHolder(h.conn)
	}
	var pe *pgconn.PgError
	switch {
	case err == nil:
		return ok && wrote == 1, nil
	case pgconn.SafeToRetry(err), errors.As(err, &pe) && pe.Code == "57P01": // not sent; or its backend ended (admin_shutdown) before it ran
		return false, nil
	}
	return false, err
}
