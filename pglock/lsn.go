package pglock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// LSN is a position in PostgreSQL's WAL (pg_lsn): a byte offset, written
// "X/Y" (the high and low 32 bits in hex). LSNs compare as numbers, and
// their difference is bytes of WAL (pg_wal_lsn_diff).
type LSN uint64

// ParseLSN reads pg_lsn's text form ("0/3000148").
func ParseLSN(s string) (LSN, error) {
	hi, lo, ok := strings.Cut(s, "/")
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if !ok || err1 != nil || err2 != nil {
		return 0, fmt.Errorf("postgres: %q is not an LSN (X/Y in hex)", s)
	}
	return LSN(h<<32 | l), nil
}

func (l LSN) String() string { return fmt.Sprintf("%X/%X", uint64(l)>>32, uint64(l)&0xFFFFFFFF) }

// errNoLSN: the position asked for is NULL (a standby whose WAL receiver
// never streamed since it started, or a primary asked for a standby's).
var errNoLSN = errors.New("no such WAL position on this server")

// lsn runs one query returning a pg_lsn (as text) on its own connection.
func (s *Server) lsn(ctx context.Context, query string) (LSN, error) {
	var text *string
	err := s.query(ctx, func(c *pgx.Conn) error { return c.QueryRow(ctx, query).Scan(&text) })
	switch {
	case err != nil:
		return 0, fmt.Errorf("postgres %s: %w", s.Addr(), err)
	case text == nil:
		return 0, fmt.Errorf("postgres %s: %w", s.Addr(), errNoLSN)
	}
	return ParseLSN(*text)
}

// CurrentLSN is a primary's WAL write position (pg_current_wal_lsn): every
// commit it acknowledged ends at or before it.
func (s *Server) CurrentLSN(ctx context.Context) (LSN, error) {
	return s.lsn(ctx, "SELECT pg_current_wal_lsn()::text")
}

// ReceiveLSN is a standby's WAL receive position
// (pg_last_wal_receive_lsn): the end of the WAL it received from its
// primary and wrote to disk, what a promotion of it would have. After the
// promotion it stays where the receiving stopped.
func (s *Server) ReceiveLSN(ctx context.Context) (LSN, error) {
	return s.lsn(ctx, "SELECT pg_last_wal_receive_lsn()::text")
}

// ReplayLSN is a standby's WAL replay position (pg_last_wal_replay_lsn).
func (s *Server) ReplayLSN(ctx context.Context) (LSN, error) {
	return s.lsn(ctx, "SELECT pg_last_wal_replay_lsn()::text")
}

// LastReplayed is when the last transaction a standby replayed was
// committed on its primary (pg_last_xact_replay_timestamp; after its
// promotion, the last one it had from the old primary): a commit of the
// old primary after it never reached this node. The servers share this
// machine's clock. ok is false when it replayed none.
func (s *Server) LastReplayed(ctx context.Context) (at time.Time, ok bool, err error) {
	var ts *time.Time
	err = s.query(ctx, func(c *pgx.Conn) error { return c.QueryRow(ctx, "SELECT pg_last_xact_replay_timestamp()").Scan(&ts) })
	if err != nil || ts == nil {
		return time.Time{}, false, err
	}
	return *ts, true, nil
}
