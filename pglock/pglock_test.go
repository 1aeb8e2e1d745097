package pglock_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"lockbench/internal/redistest"
	"lockbench/pglock"
	"lockbench/redislock/engine"
)

func startServer(t *testing.T) *pglock.Server {
	t.Helper()
	if _, ok := pglock.BinDir(); !ok {
		redistest.RequireTool(t, errors.New("postgres not installed (apt-get install "+pglock.Package+")"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := pglock.StartLocal(ctx, pglock.Options{MaxConnections: 50, Log: t.Output()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

// Contenders on one key exclude each other with both waits; no advisory
// lock is left once every lock is released and the locker closed.
func TestAdvisoryMutualExclusion(t *testing.T) {
	s := startServer(t)
	for _, strategy := range []string{pglock.StrategyQueue, engine.StrategyRetry} {
		t.Run(strategy, func(t *testing.T) {
			l, err := pglock.New(context.Background(), pglock.Config{URL: s.URL(), Strategy: strategy, Conns: 6,
				Retry: engine.RetryPolicy{Strategy: engine.StrategyRetry, Min: time.Millisecond, Max: 3 * time.Millisecond, WaitTime: 5 * time.Second}})
			if err != nil {
				t.Fatal(err)
			}
			var inside, violations, cycles atomic.Int64
			var wg sync.WaitGroup
			for range 6 {
				wg.Go(func() {
					for range 20 {
						lock, res := l.Acquire(context.Background(), "lockbench:test:hot")
						if lock == nil {
							t.Errorf("acquire failed: %+v", res)
							return
						}
						if inside.Add(1) > 1 {
							violations.Add(1)
						}
						time.Sleep(time.Millisecond)
						inside.Add(-1)
						if r := l.Release(context.Background(), lock); !r.OK {
							t.Error("release failed")
						}
						cycles.Add(1)
					}
				})
			}
			wg.Wait()
			if cycles.Load() != 120 || violations.Load() != 0 {
				t.Fatalf("cycles %d (want 120), violations %d (want 0)", cycles.Load(), violations.Load())
			}
			if n, err := l.HeldLocks(context.Background()); err != nil || n != 0 {
				t.Fatalf("advisory locks held after every release: %d (%v)", n, err)
			}
			l.Close()
		})
	}
}

// Stop ends the postmaster and its backends (by the postmaster's pid,
// with the shutdown signals the docs name); an unreachable server is named
// without its password.
func TestStopAndRefusals(t *testing.T) {
	s := startServer(t)
	l, err := pglock.New(context.Background(), pglock.Config{URL: s.URL(), Strategy: pglock.StrategyQueue, Conns: 2})
	if err != nil {
		t.Fatal(err)
	}
	lock, _ := l.Acquire(context.Background(), "k")
	if lock == nil {
		t.Fatal("no lock")
	}
	pid := s.Pid()
	children := childrenOf(pid)
	if len(children) == 0 {
		t.Fatalf("no backend under postmaster %d", pid)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, p := range append(children, pid) {
		if syscall.Kill(p, 0) == nil {
			t.Errorf("pid %d still running after Stop", p)
		}
	}
	_, err = pglock.New(context.Background(), pglock.Config{URL: "postgres://u:secretpw@127.0.0.1:1/x", Conns: 1})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") || strings.Contains(err.Error(), "secretpw") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("unreachable: %v", err)
	}
}

// A crash kills the backends with the postmaster, and a pause stops them:
// each backend calls setsid, so the postmaster's process group is itself
// alone, and a backend left running serves its sessions (and grants
// queued locks) on the old shared memory until it sees the postmaster
// gone.
func TestCrashAndPauseReachTheBackends(t *testing.T) {
	s := startServer(t)
	l, err := pglock.New(context.Background(), pglock.Config{URL: s.URL(), Strategy: pglock.StrategyQueue, Conns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if lock, _ := l.Acquire(context.Background(), "k"); lock == nil {
		t.Fatal("no lock")
	}
	pid := s.Pid()
	backends := childrenOf(pid)
	if len(backends) < 2 {
		t.Fatalf("%d processes under postmaster %d: want its backends", len(backends), pid)
	}
	if err := s.Pause(); err != nil {
		t.Fatal(err)
	}
	for _, b := range backends {
		if st := stateOf(b); st != 'T' {
			t.Errorf("pid %d in state %c after Pause, want T (stopped)", b, st)
		}
	}
	if err := s.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	for _, b := range append(backends, pid) {
		if st := stateOf(b); st != 0 && st != 'Z' {
			t.Errorf("pid %d in state %c once Kill returned, want gone", b, st)
		}
	}
}

// stateOf is pid's state letter in /proc (0: gone).
func stateOf(pid int) byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	return strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))[0][0]
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out
}
