package redisserver

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A server started with NoPersistence answers as its own pid with no RDB
// snapshots and no AOF (the protected resource's flags), keeps its port
// across a crash and a restart, forgets its data then, and leaves nothing
// running once stopped.
func TestServerLifecycle(t *testing.T) {
	bin := requireServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	s := New(Config{Bin: bin, Dir: t.TempDir(), Tail: NoPersistence()})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	pid, port := s.Pid(), s.Port()
	if pid <= 0 || !s.Running() {
		t.Fatalf("started: pid %d, running %v", pid, s.Running())
	}
	for name, want := range map[string]string{"save": "", "appendonly": "no", "bind": "127.0.0.1"} {
		if got := config(t, ctx, s.Addr(), name); got != want {
			t.Errorf("CONFIG GET %s = %q, want %q", name, got, want)
		}
	}
	if _, err := Do(ctx, s.Addr(), "SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if s.Pid() != 0 || s.Running() {
		t.Fatalf("killed: pid %d, running %v", s.Pid(), s.Running())
	}
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if s.Port() != port || s.Pid() == pid || s.Pid() <= 0 {
		t.Errorf("restarted: port %d pid %d, want port %d and a new pid (was %d)", s.Port(), s.Pid(), port, pid)
	}
	if _, err := Do(ctx, s.Addr(), "GET", "k"); !errors.Is(err, ErrNil) {
		t.Errorf("GET after a crash without persistence: %v, want ErrNil", err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if s.Pid() != 0 || s.Running() {
		t.Errorf("stopped: pid %d, running %v", s.Pid(), s.Running())
	}
}

// A cause the caller gives ctx (a set's Stop) is what a wait for
// readiness returns, and nothing is left running.
func TestStartReturnsCause(t *testing.T) {
	bin := requireServer(t)
	stopped := errors.New("set stopped")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(stopped)
	s := New(Config{Bin: bin, Dir: t.TempDir(), Tail: NoPersistence()})
	err := s.Start(ctx)
	if err == nil || !strings.Contains(err.Error(), "did not become ready: set stopped") {
		t.Errorf("Start with a cancelled ctx: %v, want its cause %q", err, stopped)
	}
	if s.Running() {
		t.Error("a server is left running")
		_ = s.Stop()
	}
}

func config(t *testing.T, ctx context.Context, addr, name string) string {
	t.Helper()
	m, err := DoMessage(ctx, addr, "CONFIG", "GET", name)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := m.AsStrSlice()
	if err != nil || len(kv) != 2 {
		t.Fatalf("CONFIG GET %s: %v %v", name, kv, err)
	}
	return kv[1]
}
