// Package redisserver is one redis-server process lockbench starts on
// 127.0.0.1: found in PATH, started in a dir of its own on a free port
// with the caller's flags, ready once it answers PING as its own pid, and
// stopped, killed, paused and restarted by that pid. Redis' local masters,
// replicas, Sentinels and cluster nodes are built on it, and so is a fault
// cell's protected resource, which the core starts without importing
// Redis' package.
package redisserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"lockbench/internal/affinity"
	"lockbench/internal/ports"
	"lockbench/internal/proc"
)

const (
	readyTimeout = 5 * time.Second        // overall wait for a server to answer PING
	probeTimeout = 250 * time.Millisecond // one readiness probe
	probeEvery   = 5 * time.Millisecond   // between readiness probes
	stopGrace    = 3 * time.Second        // SIGTERM -> SIGKILL escalation
)

// BindAttempts is how many fresh ports are tried when a port was raced
// (another process took it between our probe listener closing and redis
// binding it).
const BindAttempts = 5

// Path looks up "redis-server" in PATH.
func Path() (string, bool) {
	p, err := exec.LookPath("redis-server")
	return p, err == nil
}

var versionRE = regexp.MustCompile(`\bv=([0-9][0-9A-Za-z.\-]*)`)

// Version runs `path --version` and returns the version, e.g. "7.0.15".
func Version(path string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w: %s", path, err, strings.TrimSpace(string(out)))
	}
	m := versionRE.FindSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("%s --version: no v=... in %q", path, strings.TrimSpace(string(out)))
	}
	return string(m[1]), nil
}

// NoPersistence are the flags of a server that keeps nothing across a
// restart: no RDB snapshots, no AOF.
func NoPersistence() []string { return []string{"--save", "", "--appendonly", "no"} }

// Config says how to run a server.
type Config struct {
	Bin string // redis-server's path
	// Dir is the server's own dir (its data, redis.log, stdout.log); the
	// caller makes it and removes it.
	Dir string
	// Head are flags before the common ones (a Sentinel's config file and
	// --sentinel); Tail after them (persistence, replication, cluster).
	Head, Tail []string
	// Env is extra environment (e.g. libfaketime's LD_PRELOAD): set it,
	// not a wrapper command, so the pid stays redis-server's.
	Env []string
	// CPUs, when set, pin all of the server's threads to these CPUs, at
	// every start.
	CPUs []int
}

// Server is one redis-server: its current run, or the last one. State
// changes (Start, Restart, Kill, Stop, Pause, Resume) are the caller's to
// make one at a time.
type Server struct {
	cfg  Config
	port int
	addr string
	proc *proc.Process
}

// New is a server, not started yet; its early output (bad flags, before
// the logfile opens) goes to stdout.log in its dir.
func New(cfg Config) *Server {
	s := &Server{cfg: cfg}
	s.proc = proc.New(proc.Options{Name: "redis-server", Spawn: s.command, Output: filepath.Join(cfg.Dir, "stdout.log"),
		Grace: stopGrace, Poll: probeEvery})
	return s
}

// Start picks a free port and starts the server, retrying with a new port
// when redis-server could not bind it. When ctx ends with a cause of its
// own (context.WithCancelCause), a wait for readiness returns that cause.
func (s *Server) Start(ctx context.Context) error {
	var err error
	for attempt := 0; attempt < BindAttempts; attempt++ {
		port, perr := ports.Free()
		if perr != nil {
			return perr
		}
		s.port = port
		s.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		var bindFailed bool
		bindFailed, err = s.run(ctx)
		if err == nil || !bindFailed {
			return err
		}
	}
	return fmt.Errorf("gave up after %d ports: %w", BindAttempts, err)
}

// Restart starts the server again on the same port and dir (so an AOF is
// reloaded) and waits until it answers PING.
func (s *Server) Restart(ctx context.Context) error {
	_, err := s.run(ctx)
	return err
}

// Addr returns "127.0.0.1:PORT".
func (s *Server) Addr() string { return s.addr }

// Port returns the TCP port; it stays the same across restarts.
func (s *Server) Port() int { return s.port }

// Dir returns the server's dir.
func (s *Server) Dir() string { return s.cfg.Dir }

// Pid returns the pid of the running redis-server, 0 when it is not
// running (a pid of a reaped process could already belong to another).
func (s *Server) Pid() int { return s.proc.Pid() }

// Running reports whether the process is up; a paused one is running.
func (s *Server) Running() bool { return s.proc.Running() }

// Kill simulates a crash: SIGKILL by pid, then wait until it is reaped.
// No-op if not running.
func (s *Server) Kill() error { return s.proc.Kill() }

// Stop stops it gracefully: SIGTERM (plus SIGCONT in case it is paused),
// wait up to ~3s, then SIGKILL. No-op if not running.
func (s *Server) Stop() error { return s.proc.Stop() }

// Pause sends SIGSTOP: the kernel still accepts connections for the
// server, but it never answers, like a server frozen by a VM or host
// stall. It returns once the kernel shows it stopped, so that a probe sent
// right after cannot still be served.
func (s *Server) Pause() error { return s.proc.Pause() }

// Resume sends SIGCONT.
func (s *Server) Resume() error { return s.proc.Resume() }

// run spawns redis-server on s.port/s.cfg.Dir and waits until it answers.
// On failure nothing is left running; bindFailed reports a lost port race.
func (s *Server) run(ctx context.Context) (bindFailed bool, err error) {
	logPath := filepath.Join(s.cfg.Dir, "redis.log")
	outPath := filepath.Join(s.cfg.Dir, "stdout.log")
	// Error reports show only what this run wrote, not earlier runs.
	logOff, outOff := fileSize(logPath), fileSize(outPath)
	pid, err := s.proc.Start()
	if err != nil {
		return false, err
	}
	report := func(what string) error {
		tail := strings.TrimSpace(tailFrom(logPath, logOff) + "\n" + tailFrom(outPath, outOff))
		if tail == "" {
			tail = "(redis.log is empty)"
		}
		return fmt.Errorf("redis-server on %s (pid %d, dir %s) %s; log tail:\n%s", s.addr, pid, s.cfg.Dir, what, tail)
	}

	err = s.waitReady(ctx, pid)
	if err == nil && len(s.cfg.CPUs) > 0 {
		// Once ready, every thread the server starts with exists.
		if err = affinity.PinProcess(pid, s.cfg.CPUs); err != nil {
			return false, errors.Join(report(err.Error()), s.proc.Kill())
		}
	}
	if err == nil {
		return false, nil
	}
	if !s.proc.Running() {
		tail := tailFrom(logPath, logOff)
		return strings.Contains(tail, "Address already in use") || strings.Contains(tail, "Failed listening on port"),
			report(fmt.Sprintf("exited before it was ready (%s)", s.proc.ExitState()))
	}
	kerr := s.proc.Kill()
	return false, errors.Join(report(fmt.Sprintf("did not become ready: %v", err)), kerr)
}

// command is redis-server with this server's port, dir, flags and
// environment, logging to redis.log; not CommandContext: a ctx bounds
// the startup only.
func (s *Server) command() *exec.Cmd {
	cmd := exec.Command(s.cfg.Bin, s.args(filepath.Join(s.cfg.Dir, "redis.log"))...)
	cmd.Dir = s.cfg.Dir
	if len(s.cfg.Env) > 0 {
		cmd.Env = append(os.Environ(), s.cfg.Env...)
	}
	return cmd
}

// args are redis-server's flags: Head, the common ones, Tail.
func (s *Server) args(logPath string) []string {
	args := append([]string(nil), s.cfg.Head...)
	args = append(args,
		"--bind", "127.0.0.1",
		"--port", strconv.Itoa(s.port),
		"--dir", s.cfg.Dir,
		"--daemonize", "no",
		"--protected-mode", "yes",
		"--logfile", logPath,
	)
	return append(args, s.cfg.Tail...)
}

// waitReady polls until our own process (pid) answers PING; an error when
// it exits, or ctx ends (its cause, when it has one of its own). It checks
// the pid via INFO because after a lost port race another server may
// answer on the port.
func (s *Server) waitReady(ctx context.Context, pid int) error {
	tctx, tcancel := context.WithTimeout(ctx, readyTimeout)
	defer tcancel()
	err := s.proc.Await(tctx, func(ctx context.Context) error {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		defer cancel()
		return probe(pctx, s.addr, pid)
	})
	if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
		return cause
	}
	return err
}

func probe(ctx context.Context, addr string, wantPid int) error {
	// Redis answers -LOADING while it replays the AOF, so PONG means loaded.
	if err := Ping(ctx, addr); err != nil {
		return err
	}
	info, err := Do(ctx, addr, "INFO", "server")
	if err != nil {
		return err
	}
	v, ok := ParseInfo(info)["process_id"]
	if !ok {
		return fmt.Errorf("%s: no process_id in INFO server", addr)
	}
	if pid, _ := strconv.Atoi(v); pid != wantPid {
		return fmt.Errorf("%s is served by pid %s, not ours (%d)", addr, v, wantPid)
	}
	return nil
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// tailFrom returns at most the last 2 KiB written to path after offset off.
func tailFrom(path string, off int64) string {
	const max = 2048
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	size := fileSize(path)
	if size-off > max {
		off = size - max
	}
	if off < 0 || off > size {
		off = 0
	}
	b := make([]byte, size-off)
	n, _ := f.ReadAt(b, off)
	return strings.TrimSpace(string(b[:n]))
}
