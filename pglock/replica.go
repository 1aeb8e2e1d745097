package pglock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"lockbench/internal/ports"
)

// A primary with a streaming replica: the replica is a base backup of the
// primary (pg_basebackup -R), a hot standby following its WAL, an
// asynchronous one (no synchronous_standby_names): the primary acknowledges
// a commit once its own WAL is flushed. Advisory locks are in the
// primary's memory only, never in its WAL: a promoted replica has none of
// them, as a promoted Redis replica lacks the keys its master had not yet
// sent. The replica reaches its primary through a link lockbench owns (a
// loopback forwarder): cut, the replica receives none of the primary's
// WAL from then on, and a promotion loses what the primary committed
// since (replication_lag, then failover).

// retryInterval is the replica's wal_retrieve_retry_interval (5 s by
// default): how soon its WAL receiver tries its primary again once its
// connection ended, so that a restored link is used again within it, and
// a cut one is tried (and refused) several times a second.
const retryInterval = "200ms"

// StartReplica starts a streaming replica of s on a free loopback port,
// its replication connection through a link of its own.
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
	if r.link, err = newLink(primary.Addr()); err != nil {
		return err
	}
	// -R writes standby.signal and primary_conninfo, with the host and
	// port the backup used: the link's. -X stream takes the WAL the backup
	// needs over a second connection.
	bb := exec.CommandContext(ctx, filepath.Join(r.bin, "pg_basebackup"), "-h", "127.0.0.1", "-p", fmt.Sprint(r.link.Port()), "-U", "lockbench",
		"-D", r.data, "-R", "-X", "stream", "--no-sync")
	bb.SysProcAttr = &syscall.SysProcAttr{Credential: r.cred}
	if out, err := bb.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_basebackup: %v: %s", err, lastLine(string(out)))
	}
	if err := r.checkConninfo(); err != nil {
		return err
	}
	if _, err := r.proc.Start(); err != nil {
		return err
	}
	return r.waitReady(ctx)
}

// checkConninfo: the replica's primary_conninfo (postgresql.auto.conf,
// written by -R) names the link's port, not the primary's; and its WAL
// receiver retries every retryInterval.
func (r *Server) checkConninfo() error {
	conf := filepath.Join(r.data, "postgresql.auto.conf")
	b, err := os.ReadFile(conf)
	if err != nil {
		return err
	}
	if !strings.Contains(string(b), fmt.Sprintf("port=%d ", r.link.Port())) {
		return fmt.Errorf("postgres replica: %s has no primary_conninfo through the link (port %d): %q", conf, r.link.Port(), string(b))
	}
	f, err := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "wal_retrieve_retry_interval = '%s'\n", retryInterval)
	return errors.Join(err, f.Close())
}

// CutReplication cuts a replica's link to its primary: it receives none of
// the primary's WAL from now on, until RestoreReplication (its WAL
// receiver's attempts to reconnect are refused).
func (r *Server) CutReplication() error {
	if r.link == nil {
		return errors.New("postgres: cut replication: not a replica")
	}
	r.link.Cut()
	return nil
}

// RestoreReplication lets a replica reach its primary again: its WAL
// receiver reconnects within retryInterval and catches up.
func (r *Server) RestoreReplication() error {
	if r.link == nil {
		return errors.New("postgres: restore replication: not a replica")
	}
	r.link.Restore()
	return nil
}

// ReplicationCut says whether a replica's link is cut, and how many of its
// WAL receiver's connections the cut link closed at once (its attempts to
// reconnect).
func (r *Server) ReplicationCut() (cut bool, refused int) {
	if r.link == nil {
		return false, 0
	}
	return r.link.State()
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
