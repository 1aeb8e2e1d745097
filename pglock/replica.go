package pglock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"lockbench/internal/ports"
)

// A primary with a streaming replica: the replica is a base backup of the
// primary (pg_basebackup -R), a hot standby following its WAL. Advisory
// locks are in the primary's memory only, never in its WAL: a promoted
// replica has none of them, as a promoted Redis replica lacks the keys its
// master had not yet sent.

// StartReplica starts a streaming replica of s on a free loopback port.
func (s *Server) StartReplica(ctx context.Context) (*Server, error) {
	dir, err := os.MkdirTemp("", "lockbench-pg-replica-*")
	if err != nil {
		return nil, err
	}
	r := &Server{dir: dir, data: filepath.Join(dir, "data"), bin: s.bin, cred: s.cred, maxConns: s.maxConns}
	r.proc = r.process("postgres replica")
	if err := r.startReplica(ctx, s); err != nil {
		return nil, errors.Join(err, r.Stop())
	}
	return r, nil
}

func (r *Server) startReplica(ctx context.Context, primary *Server) error {
	if r.cred != nil {
		if err := os.Chown(r.dir, int(r.cred.Uid), int(r.cred.Gid)); err != nil {
			return err
		}
	}
	port, err := ports.Free()
	if err != nil {
		return err
	}
	r.port = port
	// -R writes standby.signal and primary_conninfo; -X stream takes the
	// WAL the backup needs over a second connection.
	bb := exec.CommandContext(ctx, filepath.Join(r.bin, "pg_basebackup"), "-h", "127.0.0.1", "-p", fmt.Sprint(primary.port), "-U", "lockbench",
		"-D", r.data, "-R", "-X", "stream", "--no-sync")
	bb.SysProcAttr = &syscall.SysProcAttr{Credential: r.cred}
	if out, err := bb.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_basebackup: %v: %s", err, lastLine(string(out)))
	}
	if _, err := r.proc.Start(); err != nil {
		return err
	}
	return r.waitReady(ctx)
}

// Promote makes a replica the primary (pg_promote) and waits until it
// takes writes.
func (r *Server) Promote(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return r.query(ctx, func(c *pgx.Conn) error {
		var ok bool
		if err := c.QueryRow(ctx, "SELECT pg_promote(true, 30)").Scan(&ok); err != nil {
			return fmt.Errorf("postgres: promote: %w", err)
		}
		if !ok {
			return errors.New("postgres: promote: the replica did not finish its promotion in 30 s")
		}
		return nil
	})
}
