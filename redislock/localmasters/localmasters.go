// Package localmasters starts and controls Redis' local servers (real
// redis-server processes, each an internal/redisserver.Server, or embedded
// miniredis masters as a fallback): masters for a Redlock benchmark,
// replicated sets with Sentinels and the Redis Cluster, including the faults
// they need: crash, restart, pause.
package localmasters

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/alicebob/miniredis/v2"

	"lockbench/internal/proc"
	"lockbench/internal/redisserver"
)

// ErrEmbeddedUnsupported is returned by operations embedded masters cannot do.
var ErrEmbeddedUnsupported = errors.New("not supported by embedded masters")

// ErrStopped is returned by Restart once the Set has been stopped (a
// fault's restart after the cell ended: Stopped says so to package
// faults, which does not import this one).
var ErrStopped error = errStopped{}

type errStopped struct{}

func (errStopped) Error() string { return "localmasters: set is stopped" }
func (errStopped) Stopped() bool { return true }

// Options configure Start.
type Options struct {
	N           int
	Persistence Persistence // "" means PersistNone
	RedisServer string      // path to redis-server; "" = look up "redis-server" in PATH
	// Embedded: "auto" (default when ""): use redis-server if found, else
	// embedded miniredis; "never": error if redis-server is missing;
	// "always": embedded.
	Embedded string
	Log      io.Writer // where announcements go (nil = io.Discard)
	// Env is extra environment for every redis-server of the set (and its
	// restarts), e.g. libfaketime's LD_PRELOAD for a master with a fake
	// clock. Set it, not a wrapper command, so the pid stays redis-server's.
	Env []string
	// CPUs, when set, pin every redis-server of the set (and its restarts,
	// all of its threads) to these CPUs.
	CPUs []int
}

// Set is a group of masters started together.
type Set struct {
	masters  []*Master
	embedded bool
	bin      string
	version  string
	persist  Persistence
	env      []string
	cpus     []int

	stopping chan struct{} // closed when Stop begins; aborts readiness waits
	stopOnce sync.Once
	stopErr  error
}

// Master is one Redis master of a Set.
type Master struct {
	set *Set
	dir string

	mu  sync.Mutex          // serialises every state change (Kill/Stop may race Set.Stop)
	srv *redisserver.Server // real: its redis-server; nil when embedded
	mr  *miniredis.Miniredis
	// addr and port are an embedded master's (a real one's are srv's).
	addr string
	port int

	// role is a replicated set's (see spec); the zero value is a plain master.
	role spec
}

// spec is what sets one process of a replicated set apart: a Sentinel's
// config file (its first argument; Sentinel rewrites it, so restarts keep
// what it learnt) and extra flags (--replicaof, --replica-priority, ...).
type spec struct {
	name  string // "master", "replica 1", "sentinel 0": for errors
	conf  string // a Sentinel's config file; "" for a data node
	extra []string
}

// Start starts opt.N masters. On any failure everything already started is
// stopped and its temp dir removed.
func Start(ctx context.Context, opt Options) (*Set, error) {
	if opt.N < 1 {
		return nil, fmt.Errorf("localmasters: N must be at least 1, got %d", opt.N)
	}
	persist := PersistNone
	if opt.Persistence != "" {
		p, err := ParsePersistence(string(opt.Persistence))
		if err != nil {
			return nil, err
		}
		persist = p
	}
	log := opt.Log
	if log == nil {
		log = io.Discard
	}
	mode := strings.ToLower(strings.TrimSpace(opt.Embedded))
	if mode == "" {
		mode = "auto"
	}
	bin, err := serverBinary(mode, opt)
	if err != nil {
		return nil, err
	}
	s := &Set{embedded: bin == "", bin: bin, persist: persist, env: opt.Env, cpus: opt.CPUs, stopping: make(chan struct{})}
	if err := s.embeddedCanServe(opt); err != nil {
		return nil, err
	}
	if s.embedded {
		err = s.startEmbedded(opt.N)
	} else {
		err = s.startReal(ctx, opt.N)
	}
	if err != nil {
		if serr := s.Stop(); serr != nil {
			err = errors.Join(err, fmt.Errorf("cleanup: %w", serr))
		}
		return nil, err
	}
	s.announce(log, mode, opt.N)
	return s, nil
}

// serverBinary is the redis-server to run for embedded mode (auto, never,
// always), or "" for embedded miniredis masters.
func serverBinary(mode string, opt Options) (string, error) {
	switch mode {
	case "always":
		return "", nil
	case "auto", "never":
		if opt.RedisServer != "" {
			// An explicit path is a request for that binary: never fall back.
			p, err := exec.LookPath(opt.RedisServer)
			if err != nil {
				return "", fmt.Errorf("localmasters: redis-server %q is not usable: %w", opt.RedisServer, err)
			}
			return p, nil
		}
		if p, ok := redisserver.Path(); ok {
			return p, nil
		}
		if mode == "never" {
			return "", errors.New("localmasters: redis-server not found in PATH and embedded=never; install it (apt-get install redis-server) or pass its path")
		}
		return "", nil
	default:
		return "", fmt.Errorf("localmasters: invalid embedded %q: accepted values are auto, never, always", opt.Embedded)
	}
}

// embeddedCanServe refuses what embedded miniredis masters cannot do (pin
// CPUs, take an environment, persist); nil for real masters.
func (s *Set) embeddedCanServe(opt Options) error {
	switch {
	case !s.embedded:
		return nil
	case len(opt.CPUs) > 0:
		return errors.New("localmasters: CPU pinning is not possible for embedded miniredis masters (they run inside this process); install redis-server")
	case len(opt.Env) > 0:
		return errors.New("localmasters: env is not supported by embedded miniredis masters (they are not processes); install redis-server")
	case s.persist != PersistNone:
		return fmt.Errorf("localmasters: persistence %q is not supported by embedded miniredis masters (they cannot persist); use persistence none or install redis-server", s.persist)
	}
	return nil
}

// announce says which masters started, with a warning when they are
// embedded miniredis masters rather than redis-server.
func (s *Set) announce(log io.Writer, mode string, n int) {
	switch {
	case !s.embedded:
		fmt.Fprintf(log, "localmasters: started %d redis-server masters (%s, version %s, persistence %s) on %s\n",
			n, s.bin, s.version, s.persist, strings.Join(s.Addrs(), " "))
	case mode == "always":
		fmt.Fprintf(log, "WARNING: embedded in-process miniredis masters were requested (embedded=always); %d masters on %s. Figures measured against them are NOT Redis figures.\n",
			n, strings.Join(s.Addrs(), " "))
	default:
		fmt.Fprintf(log, "WARNING: redis-server was not found in PATH; using %d embedded in-process miniredis masters on %s instead. Figures measured against them are NOT Redis figures (install redis-server: apt-get install redis-server).\n",
			n, strings.Join(s.Addrs(), " "))
	}
}

func (s *Set) startReal(ctx context.Context, n int) error {
	if v, err := redisserver.Version(s.bin); err == nil {
		s.version = v
	} else {
		s.version = "unknown" // only used in announcements; startup reports real problems
	}
	for i := 0; i < n; i++ {
		if _, err := s.startProcess(ctx, spec{}, ""); err != nil {
			return fmt.Errorf("localmasters: master %d: %w", i, err)
		}
	}
	return nil
}

// startProcess starts one redis-server of the set in a temp dir of its
// own; conf, when given, is written there as the Sentinel's config file.
func (s *Set) startProcess(ctx context.Context, role spec, conf string) (*Master, error) {
	dir, err := os.MkdirTemp("", "lockbench-master-*")
	if err != nil {
		return nil, err
	}
	m := &Master{set: s, dir: dir, role: role}
	if conf != "" {
		m.role.conf = filepath.Join(dir, "sentinel.conf")
	}
	m.srv = redisserver.New(s.serverConfig(dir, m.role))
	s.masters = append(s.masters, m) // before starting, so Stop removes the dir on failure
	if conf != "" {
		if err := os.WriteFile(m.role.conf, []byte(conf), 0o644); err != nil {
			return nil, err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	ctx, cancel := s.untilStop(ctx)
	defer cancel()
	return m, m.srv.Start(ctx)
}

// serverConfig is how the set runs a redis-server of role in dir: a
// Sentinel takes its config file first and no persistence (it stores no
// data).
func (s *Set) serverConfig(dir string, role spec) redisserver.Config {
	cfg := redisserver.Config{Bin: s.bin, Dir: dir, Env: s.env, CPUs: s.cpus}
	if role.conf != "" {
		cfg.Head = []string{role.conf, "--sentinel"}
	} else {
		cfg.Tail = s.persist.redisArgs()
	}
	cfg.Tail = append(cfg.Tail, role.extra...)
	return cfg
}

// untilStop is ctx ended, with cause ErrStopped, once Stop begins: a
// server's wait for readiness ends then.
func (s *Set) untilStop(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-s.stopping:
			cancel(ErrStopped)
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(nil) }
}

func (s *Set) startEmbedded(n int) error {
	for i := 0; i < n; i++ {
		mr, err := newMini("127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("localmasters: embedded master %d: %w", i, err)
		}
		m := &Master{set: s, mr: mr, addr: mr.Addr()}
		m.port, _ = strconv.Atoi(mr.Port())
		s.masters = append(s.masters, m)
	}
	return nil
}

// newMini starts a miniredis whose TTLs follow the wall clock. ClockTTL makes
// every command first advance TTLs by the real time elapsed, so keys expire
// on time, like a ticker calling FastForward but exact to the access and
// without a goroutine taking every master's lock each tick.
func newMini(addr string) (*miniredis.Miniredis, error) {
	mr := miniredis.NewMiniRedis()
	mr.ClockTTL(true)
	if err := mr.StartAddr(addr); err != nil {
		return nil, err
	}
	return mr, nil
}

// Masters returns the masters in start order.
func (s *Set) Masters() []*Master { return append([]*Master(nil), s.masters...) }

// Addrs returns "127.0.0.1:PORT" for every master.
func (s *Set) Addrs() []string {
	a := make([]string, len(s.masters))
	for i, m := range s.masters {
		a[i] = m.Addr()
	}
	return a
}

// Embedded reports whether the masters are in-process miniredis.
func (s *Set) Embedded() bool { return s.embedded }

// RedisServer returns the redis-server path used ("" when embedded).
func (s *Set) RedisServer() string { return s.bin }

// Version returns the redis-server version ("" when embedded).
func (s *Set) Version() string { return s.version }

// Persistence returns the mode the masters run with.
func (s *Set) Persistence() Persistence { return s.persist }

// Stop stops every master and removes every temp dir. It is idempotent and
// safe to call concurrently (e.g. from a signal handler); later callers wait
// for the first and get its result.
func (s *Set) Stop() error {
	s.stopOnce.Do(func() {
		close(s.stopping)
		errs := proc.StopAll(s.masters)
		for _, m := range s.masters {
			if m.dir != "" {
				if err := os.RemoveAll(m.dir); err != nil {
					errs = append(errs, err)
				}
			}
		}
		s.stopErr = errors.Join(errs...)
	})
	return s.stopErr
}

func (s *Set) isStopping() bool {
	select {
	case <-s.stopping:
		return true
	default:
		return false
	}
}

// Addr returns "127.0.0.1:PORT".
func (m *Master) Addr() string {
	if m.srv != nil {
		return m.srv.Addr()
	}
	return m.addr
}

// Port returns the TCP port; it stays the same across restarts.
func (m *Master) Port() int {
	if m.srv != nil {
		return m.srv.Port()
	}
	return m.port
}

// Dir returns the master's temp dir ("" when embedded).
func (m *Master) Dir() string { return m.dir }

// Pid returns the pid of the running redis-server, 0 when it is not running
// or embedded (a pid of a reaped process could already belong to another).
func (m *Master) Pid() int {
	if m.srv == nil {
		return 0
	}
	return m.srv.Pid()
}

// Running reports whether the master process (or embedded server) is up;
// a paused master is running.
func (m *Master) Running() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.runningLocked()
}

func (m *Master) runningLocked() bool {
	if m.set.embedded {
		return m.mr != nil
	}
	return m.srv.Running()
}

// Kill simulates a crash: SIGKILL by pid, then wait until it is reaped.
// Embedded: the server is closed and its data dropped. No-op if not running.
func (m *Master) Kill() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.set.embedded {
		m.closeMiniLocked()
		return nil
	}
	if err := m.srv.Kill(); err != nil {
		return fmt.Errorf("localmasters: %s: %w", m.Addr(), err)
	}
	return nil
}

// Stop stops the master gracefully: SIGTERM (plus SIGCONT in case it is
// paused), wait up to ~3s, then SIGKILL. Embedded: closed, data dropped.
// No-op if not running.
func (m *Master) Stop() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.set.embedded {
		m.closeMiniLocked()
		return nil
	}
	if err := m.srv.Stop(); err != nil {
		return fmt.Errorf("localmasters: %s: %w", m.Addr(), err)
	}
	return nil
}

func (m *Master) closeMiniLocked() {
	if m.mr != nil {
		m.mr.Close()
		m.mr = nil
	}
}

// Pause sends SIGSTOP: the kernel still accepts connections for the master,
// but it never answers, like a master frozen by a VM or host stall. It
// returns once the kernel shows it stopped, so that a probe sent right
// after cannot still be served.
func (m *Master) Pause() error { return m.pause((*redisserver.Server).Pause, "pause") }

// Resume sends SIGCONT.
func (m *Master) Resume() error { return m.pause((*redisserver.Server).Resume, "resume") }

func (m *Master) pause(do func(*redisserver.Server) error, op string) error {
	if m.set.embedded {
		return fmt.Errorf("localmasters: %s %s: %w", op, m.addr, ErrEmbeddedUnsupported)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := do(m.srv); err != nil {
		return fmt.Errorf("localmasters: %s %s: %w", op, m.Addr(), err)
	}
	return nil
}

// Restart starts the master again on the same port and dir (so an AOF is
// reloaded) and waits until it answers PING. Embedded: a fresh, empty
// miniredis on the same address (data is lost, as in a crash without
// persistence).
func (m *Master) Restart(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.set.isStopping() {
		return ErrStopped
	}
	if m.runningLocked() {
		return fmt.Errorf("localmasters: restart %s: still running", m.Addr())
	}
	if m.set.embedded {
		mr, err := newMini(m.addr)
		if err != nil {
			return fmt.Errorf("localmasters: restart embedded %s: %w", m.addr, err)
		}
		m.mr = mr
		return nil
	}
	ctx, cancel := m.set.untilStop(ctx)
	defer cancel()
	if err := m.srv.Restart(ctx); err != nil {
		return fmt.Errorf("localmasters: restart %s: %w", m.Addr(), err)
	}
	return nil
}
