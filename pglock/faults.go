package pglock

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"lockbench/internal/proc"
)

// The server as a fault's target: a crash kills the postmaster and every
// process under it (never the postmaster alone, which would leave backends
// serving on shared memory a moment), a pause stops them all,
// and a killed backend is pg_terminate_backend of the sessions that hold
// advisory locks.

// Kill is a crash: SIGKILL to the postmaster and its backends, reaped.
func (s *Server) Kill() error {
	if !s.proc.Running() {
		return errors.New("postgres: not running")
	}
	holders := s.holders()
	if err := s.proc.Kill(); err != nil {
		return err
	}
	s.ended(holders) // their locks went with the server
	return nil
}

// holders are the backends holding advisory locks (none when the server
// does not answer within a moment).
func (s *Server) holders() []int32 {
	ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond) // a paused server must not hold its crash back long
	defer cancel()
	var pids []int32
	_ = s.query(ctx, func(c *pgx.Conn) error {
		rows, _ := c.Query(ctx, "SELECT DISTINCT pid FROM pg_locks WHERE locktype = 'advisory' AND granted")
		var err error
		pids, err = pgx.CollectRows(rows, pgx.RowTo[int32])
		return err
	})
	return pids
}

// Restart starts the postmaster again on its data directory (crash
// recovery replays its WAL; advisory locks, in memory, are gone) and waits
// until it takes connections.
func (s *Server) Restart(ctx context.Context) error {
	if s.proc.Running() { // a second postmaster would die on the lock file, and waitReady find the first
		return errors.New("postgres: restart: the server is still running")
	}
	for {
		if _, err := s.proc.Start(); err != nil {
			return err
		}
		err := s.waitReady(ctx)
		if !errors.Is(err, proc.ErrExited) || ctx.Err() != nil {
			return err
		}
		// The new postmaster gave up at once: the killed backends still
		// held the old shared memory a moment. Try again.
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Pause stops the postmaster and its backends (SIGSTOP): every session
// waits.
func (s *Server) Pause() error { return s.proc.Pause() }

// Resume continues a paused server.
func (s *Server) Resume() error { return s.proc.Resume() }

// HeldKeys counts the advisory locks held on the server; -1 when it does
// not answer.
func (s *Server) HeldKeys(ctx context.Context) int {
	var n int
	err := s.query(ctx, func(c *pgx.Conn) error {
		return c.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted").Scan(&n)
	})
	if err != nil {
		return -1
	}
	return n
}

// KillHolders ends every session that holds an advisory lock
// (pg_terminate_backend): the server frees their locks at once, while
// their clients may still be using what the locks protect.
func (s *Server) KillHolders(ctx context.Context) (int, error) {
	var pids []int32
	err := s.query(ctx, func(c *pgx.Conn) error {
		rows, _ := c.Query(ctx, `SELECT pid FROM (SELECT pid, pg_terminate_backend(pid) FROM
			(SELECT DISTINCT pid FROM pg_locks WHERE locktype = 'advisory' AND granted) h) t`)
		var err error
		pids, err = pgx.CollectRows(rows, pgx.RowTo[int32])
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("postgres: terminate the lock holders' backends: %w", err)
	}
	s.ended(pids)
	return len(pids), nil
}

// SessionEndSource says how a session's end on the server is seen, for
// the lock-loss lag.
const SessionEndSource = "postgres: pg_terminate_backend's return, or the server's kill -9 (its locks go with the backend); the client learnt at its next call on that session (no lease, no signal)"

// ended dates the backends a fault ended (KillHolders, Kill).
func (s *Server) ended(pids []int32) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ends == nil {
		s.ends = map[string]time.Time{}
	}
	for _, p := range pids {
		s.ends[strconv.Itoa(int(p))] = now
	}
}

// SessionEnds are the backends faults ended, by pid, and when.
func (s *Server) SessionEnds() map[string]time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.ends)
}

// query runs f on a connection of its own (the fault's, not a client's).
func (s *Server) query(ctx context.Context, f func(*pgx.Conn) error) error {
	c, err := pgx.Connect(ctx, s.URL())
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	return f(c)
}
