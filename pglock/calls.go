package pglock

import (
	"context"
	"encoding/binary"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The cycle's calls run on pgconn's level: statements each connection
// prepared once, run by their description (no Describe per call), the key
// sent in binary, a bool read from its row's byte. pgx's Exec and QueryRow
// encode the argument through the type map and build rows to Scan, which
// cost the client CPU per cycle that a 2-core machine takes from the
// server (BENCHMARKS: PostgreSQL against a bare pgx loop).
const (
	callLock = iota
	callTryLock
	callUnlock
	numCalls
)

var (
	binaryFormat = []int16{1}
	callSQL      = [numCalls][2]string{
		callLock:    {"lockbench_lock", "SELECT pg_advisory_lock($1::int8)"},
		callTryLock: {"lockbench_try_lock", "SELECT pg_try_advisory_lock($1::int8)"},
		callUnlock:  {"lockbench_unlock", "SELECT pg_advisory_unlock($1::int8)"},
	}
)

// statements are the calls' descriptions: the same on every connection of
// a Locker (same names, same SQL, same server), kept from the first.
type statements struct {
	desc atomic.Pointer[[numCalls]*pgconn.StatementDescription]
}

// prepare prepares the cycle's statements on a new connection.
func (s *statements) prepare(ctx context.Context, c *pgx.Conn) error {
	var d [numCalls]*pgconn.StatementDescription
	for i, q := range callSQL {
		sd, err := c.PgConn().Prepare(ctx, q[0], q[1], nil)
		if err != nil {
			return err
		}
		d[i] = sd
	}
	s.desc.CompareAndSwap(nil, &d)
	return nil
}

// call runs one of the cycle's statements on key id; ok is its bool
// result (pg_advisory_lock's void reads as false).
func (s *statements) call(ctx context.Context, c *pgx.Conn, which int, id int64) (ok bool, err error) {
	var key [8]byte
	binary.BigEndian.PutUint64(key[:], uint64(id))
	rr := c.PgConn().ExecStatement(ctx, s.desc.Load()[which], [][]byte{key[:]}, binaryFormat, binaryFormat)
	for rr.NextRow() {
		v := rr.Values()
		ok = len(v) == 1 && len(v[0]) == 1 && v[0][0] == 1
	}
	_, err = rr.Close()
	return ok && err == nil, err
}
