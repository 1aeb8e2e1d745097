package pglock

import (
	"context"
	"encoding/binary"

	"github.com/jackc/pgx/v5"
)

// The cycle's calls run on pgconn's level: statements each connection
// prepared once, the key sent in binary, a bool read from its row's byte.
// pgx's Exec and QueryRow encode the argument through the type map and
// build rows to Scan, which cost the client CPU per cycle that a 2-core
// machine takes from the server (BENCHMARKS: PostgreSQL against a bare
// pgx loop).
const (
	stmtLock    = "lockbench_lock"
	stmtTryLock = "lockbench_try_lock"
	stmtUnlock  = "lockbench_unlock"
)

var (
	binaryFormat = []int16{1}
	statements   = [...][2]string{
		{stmtLock, "SELECT pg_advisory_lock($1::int8)"},
		{stmtTryLock, "SELECT pg_try_advisory_lock($1::int8)"},
		{stmtUnlock, "SELECT pg_advisory_unlock($1::int8)"},
	}
)

// prepare prepares the cycle's statements on a new connection.
func prepare(ctx context.Context, c *pgx.Conn) error {
	for _, s := range statements {
		if _, err := c.PgConn().Prepare(ctx, s[0], s[1], nil); err != nil {
			return err
		}
	}
	return nil
}

// call runs one of the cycle's statements on key id; ok is its bool
// result (pg_advisory_lock's void reads as false).
func call(ctx context.Context, c *pgx.Conn, stmt string, id int64) (ok bool, err error) {
	var key [8]byte
	binary.BigEndian.PutUint64(key[:], uint64(id))
	rr := c.PgConn().ExecPrepared(ctx, stmt, [][]byte{key[:]}, binaryFormat, binaryFormat).Read()
	if rr.Err != nil {
		return false, rr.Err
	}
	return len(rr.Rows) == 1 && len(rr.Rows[0]) == 1 && len(rr.Rows[0][0]) == 1 && rr.Rows[0][0][0] == 1, nil
}
