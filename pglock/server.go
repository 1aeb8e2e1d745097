// Package pglock is PostgreSQL's advisory locks as a lock service: its
// server (a local postmaster of Debian's binaries in a temporary
// directory, run as the postgres account, or an external one's URL) and
// its Locker (pgx, one connection per contender).
package pglock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"lockbench/internal/ports"
	"lockbench/internal/proc"
)

// Package names the Debian package with the server binaries.
const Package = "postgresql"

// stopGrace is how long a fast shutdown (SIGINT) may take before the
// immediate one (SIGQUIT), as the docs name them, and that before SIGKILL
// of the whole group (never of the postmaster alone).
const stopGrace = 10 * time.Second

// Options say what local server to start.
type Options struct {
	// MaxConnections is the server's max_connections: lockbench's
	// contenders and a few of its own.
	MaxConnections int
	Log            io.Writer // the start-up line (nil: none)
	// Synced: the data directory is on disk before the server starts.
	// initdb runs with --no-sync (its files reach the disk in their own
	// time, a fraction of a second saved at each start), but a crash's
	// recovery fsyncs every file of the directory: a restart soon after
	// initdb would pay for its writes, which a real server's recovery
	// never does, and the recovery window would measure lockbench.
	Synced bool
}

// Server is a local PostgreSQL server lockbench started.
type Server struct {
	dir, data string
	port      int
	version   string
	// bin, cred and maxConns start the postmaster again (Restart).
	bin      string
	cred     *syscall.Credential
	maxConns int
	proc     *proc.Process
	link     *link // a replica's connection to its primary (nil: a primary)
	mu       sync.Mutex
	ends     map[string]time.Time // backends a fault ended, by pid
}

// BinDir is the newest installed server's bin directory ("" and false:
// none).
func BinDir() (string, bool) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	if len(dirs) == 0 {
		return "", false
	}
	return filepath.Dir(dirs[len(dirs)-1]), true
}

// StartLocal initialises a data directory and starts a postmaster on a
// free loopback port; on failure nothing is left running.
func StartLocal(ctx context.Context, opt Options) (*Server, error) {
	bin, ok := BinDir()
	if !ok {
		return nil, fmt.Errorf("postgres not found in /usr/lib/postgresql/*/bin; topology postgres with a local server runs Debian's (apt-get install %s)", Package)
	}
	cred, uid, gid, err := credential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "lockbench-pg-*")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, data: filepath.Join(dir, "data")}
	s.proc = s.process("postgres")
	if err := s.start(ctx, bin, cred, uid, gid, opt); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	if opt.Log != nil {
		fmt.Fprintf(opt.Log, "lockbench: started a local PostgreSQL %s on %s (max_connections %d), pid %d\n", s.version, s.Addr(), opt.MaxConnections, s.Pid())
	}
	return s, nil
}

// credential is the postgres account's, when lockbench runs as root (the
// server refuses root); nil when it runs as another user (itself).
func credential() (*syscall.Credential, int, int, error) {
	if os.Geteuid() != 0 {
		return nil, os.Getuid(), os.Getgid(), nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, 0, 0, fmt.Errorf("postgres: running as root, the server needs the postgres account (apt-get install %s): %v", Package, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, uid, gid, nil
}

func (s *Server) start(ctx context.Context, bin string, cred *syscall.Credential, uid, gid int, opt Options) error {
	if err := os.Chown(s.dir, uid, gid); err != nil {
		return err
	}
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", s.data, "-U", "lockbench", "--auth=trust", "-E", "UTF8", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %v: %s", err, lastLine(string(out)))
	}
	if opt.Synced {
		sync := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "--sync-only", "-D", s.data)
		sync.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		if out, err := sync.CombinedOutput(); err != nil {
			return fmt.Errorf("initdb --sync-only: %v: %s", err, lastLine(string(out)))
		}
	}
	port, err := ports.Free()
	if err != nil {
		return err
	}
	s.port, s.bin, s.cred, s.maxConns = port, bin, cred, opt.MaxConnections
	if _, err := s.proc.Start(); err != nil {
		return err
	}
	return s.waitReady(ctx)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// process is the postmaster's. Tree: a pause stops, and a crash kills,
// its backends with it (see faults.go); Stop's fast, then immediate,
// shutdown goes to the postmaster, which ends its backends itself.
func (s *Server) process(name string) *proc.Process {
	return proc.New(proc.Options{Name: name, Spawn: s.command, Output: filepath.Join(s.dir, "postgres.log"),
		Tree: true, StopSignals: []syscall.Signal{syscall.SIGINT, syscall.SIGQUIT}, Grace: stopGrace})
}

// command is the postmaster itself (its pid is the one lockbench holds,
// not a runuser's), as the postgres account when lockbench is root.
func (s *Server) command() *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), "-D", s.data, "-k", s.dir, "-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=127.0.0.1", "-c", "max_connections="+strconv.Itoa(s.maxConns))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	return cmd
}

// waitReady waits until the server takes a connection and reads its
// version.
func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := s.proc.Await(ctx, func(ctx context.Context) error {
		var v string
		err := s.query(ctx, func(c *pgx.Conn) error { return c.QueryRow(ctx, "SHOW server_version").Scan(&v) })
		if err == nil {
			s.version = strings.Fields(v)[0]
		}
		return err
	})
	if errors.Is(err, proc.ErrExited) {
		b, _ := os.ReadFile(filepath.Join(s.dir, "postgres.log"))
		return fmt.Errorf("%w: %s", err, lastLine(string(b)))
	}
	return err
}

// URL is how a client connects (trust auth on loopback).
func (s *Server) URL() string {
	return fmt.Sprintf("postgres://lockbench@127.0.0.1:%d/postgres?sslmode=disable", s.port)
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return fmt.Sprintf("127.0.0.1:%d", s.port) }

// Version is the server's version ("15.18").
func (s *Server) Version() string { return s.version }

// Pid is the postmaster's (0: not running).
func (s *Server) Pid() int { return s.proc.Pid() }

// Stop shuts the server down as the docs say, by its pid: SIGINT (fast
// shutdown), then SIGQUIT (immediate) after stopGrace, then SIGKILL of the
// group after another; then closes a replica's link and removes its
// directory.
func (s *Server) Stop() error {
	err := s.proc.Stop()
	if s.link != nil {
		err = errors.Join(err, s.link.Close())
	}
	return errors.Join(err, os.RemoveAll(s.dir))
}
