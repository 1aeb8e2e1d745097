package localmasters_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"lockbench/internal/bound"
	"lockbench/internal/redisserver"
	"lockbench/internal/redistest"
	"lockbench/redislock/localmasters"
)

func do(t *testing.T, addr string, args ...string) string {
	t.Helper()
	s, err := redistest.Do(addr, args...)
	if err != nil {
		t.Fatalf("%s %v: %v", addr, args, err)
	}
	return s
}

func ping(addr string, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return redisserver.Ping(ctx, addr)
}

func gone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

func TestStartStopNone(t *testing.T) {
	t.Parallel()
	set := redistest.StartMasters(t, 3, localmasters.PersistNone)
	if set.Embedded() {
		t.Fatal("Embedded() = true for real masters")
	}
	seen := map[string]bool{}
	var pids []int
	var dirs []string
	for _, m := range set.Masters() {
		host, _, err := net.SplitHostPort(m.Addr())
		if err != nil || host != "127.0.0.1" {
			t.Errorf("addr %q: want 127.0.0.1:PORT", m.Addr())
		}
		if seen[m.Addr()] {
			t.Errorf("duplicate addr %s", m.Addr())
		}
		seen[m.Addr()] = true
		if err := ping(m.Addr(), 2*time.Second); err != nil {
			t.Errorf("PING %s: %v", m.Addr(), err)
		}
		if m.Pid() <= 0 || !m.Running() {
			t.Errorf("%s: pid %d running %v", m.Addr(), m.Pid(), m.Running())
		}
		do(t, m.Addr(), "SET", "k", "v")
		// none must really mean no persistence: no AOF directory appears.
		if _, err := os.Stat(filepath.Join(m.Dir(), "appendonlydir")); !os.IsNotExist(err) {
			t.Errorf("%s: appendonlydir exists with persistence none (err %v)", m.Addr(), err)
		}
		pids = append(pids, m.Pid())
		dirs = append(dirs, m.Dir())
	}
	if len(set.Addrs()) != 3 {
		t.Fatalf("Addrs() = %v", set.Addrs())
	}

	if err := set.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := set.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	for i, pid := range pids {
		if !gone(pid) {
			t.Errorf("pid %d still exists after Stop", pid)
		}
		if _, err := os.Stat(dirs[i]); !os.IsNotExist(err) {
			t.Errorf("dir %s still exists after Stop (err %v)", dirs[i], err)
		}
	}
	if err := set.Masters()[0].Restart(context.Background()); !errors.Is(err, localmasters.ErrStopped) {
		t.Errorf("Restart after Set.Stop: %v, want ErrStopped", err)
	}
}

func TestKillRestart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p        localmasters.Persistence
		survives bool
	}{
		{localmasters.PersistAOFAlways, true},
		{localmasters.PersistNone, false},
	} {
		t.Run(string(tc.p), func(t *testing.T) {
			t.Parallel()
			set := redistest.StartMasters(t, 1, tc.p)
			m := set.Masters()[0]
			addr, port, dir, pid := m.Addr(), m.Port(), m.Dir(), m.Pid()
			do(t, addr, "SET", "k", "v")

			if err := m.Kill(); err != nil {
				t.Fatalf("Kill: %v", err)
			}
			if m.Running() || m.Pid() != 0 || !gone(pid) {
				t.Fatalf("after Kill: running %v pid %d, old pid gone %v", m.Running(), m.Pid(), gone(pid))
			}
			if err := m.Restart(context.Background()); err != nil {
				t.Fatalf("Restart: %v", err)
			}
			if m.Addr() != addr || m.Port() != port || m.Dir() != dir || m.Pid() == pid || m.Pid() == 0 {
				t.Fatalf("after Restart: %s port %d dir %s pid %d (was %s %d %s %d)",
					m.Addr(), m.Port(), m.Dir(), m.Pid(), addr, port, dir, pid)
			}
			got, err := redistest.Do(addr, "GET", "k")
			switch {
			case tc.survives && (err != nil || got != "v"):
				t.Errorf("GET k after crash: %q, %v; want v (AOF reloaded)", got, err)
			case !tc.survives && !errors.Is(err, redisserver.ErrNil):
				t.Errorf("GET k after crash: %q, %v; want nil (no persistence)", got, err)
			}

			// Graceful Stop and Restart work too.
			if err := m.Stop(); err != nil {
				t.Fatalf("Stop: %v", err)
			}
			if err := m.Restart(context.Background()); err != nil {
				t.Fatalf("second Restart: %v", err)
			}
			if err := m.Restart(context.Background()); err == nil {
				t.Error("Restart of a running master succeeded")
			}
		})
	}
}

func TestPauseResume(t *testing.T) {
	t.Parallel()
	set := redistest.StartMasters(t, 1, localmasters.PersistNone)
	m := set.Masters()[0]
	if err := m.Pause(); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	if err := ping(m.Addr(), 200*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("PING while paused: %v, want deadline exceeded", err)
	}
	if !m.Running() {
		t.Error("paused master not Running")
	}
	if err := m.Resume(); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if err := ping(m.Addr(), 2*time.Second); err != nil {
		t.Fatalf("PING after Resume: %v", err)
	}
	// Stop must also work on a paused master (it sends SIGCONT), quickly.
	if err := m.Pause(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := set.Stop(); err != nil {
		t.Fatalf("Stop paused: %v", err)
	}
	// 2 s is below the 3 s SIGTERM→SIGKILL grace a master left stopped
	// would cost, and many times a Stop's measured tens of ms.
	if d := time.Since(start); !bound.Max(t, "localmasters.stop_paused", d, 2*time.Second) {
		t.Errorf("Stop of a paused master took %v", d)
	}
}

// A server that dies at once is reported with its output, and nothing is left
// behind in the temp dir.
func TestStartFailureCleansUp(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	fake := filepath.Join(t.TempDir(), "fake-redis-server")
	script := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'Redis server v=9.9.9'; exit 0; fi\necho 'boom: cannot start' >&2\nexit 1\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := localmasters.Start(context.Background(), localmasters.Options{N: 2, RedisServer: fake, Embedded: "never"})
	if err == nil || !strings.Contains(err.Error(), "boom: cannot start") {
		t.Fatalf("Start with failing server: %v; want the server's output in the error", err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "lockbench-master-*")); len(left) != 0 {
		t.Errorf("temp dirs left behind: %v", left)
	}
}

func TestParsePersistence(t *testing.T) {
	for _, p := range localmasters.AllPersistence() {
		if got, err := localmasters.ParsePersistence(string(p)); err != nil || got != p {
			t.Errorf("ParsePersistence(%q) = %q, %v", p, got, err)
		}
	}
	_, err := localmasters.ParsePersistence("fsync")
	if err == nil {
		t.Fatal("ParsePersistence(fsync) accepted")
	}
	for _, want := range []string{"persistence", `"fsync"`, "none", "aof-no", "aof-everysec", "aof-always"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestOptionErrors(t *testing.T) {
	for _, opt := range []localmasters.Options{
		{N: 0},
		{N: 1, Embedded: "sometimes"},
		{N: 1, Persistence: "fsync", Embedded: "always"},
		{N: 1, RedisServer: "/nonexistent/redis-server"},
	} {
		if set, err := localmasters.Start(context.Background(), opt); err == nil {
			set.Stop()
			t.Errorf("Start(%+v) succeeded", opt)
		}
	}
}

func TestEmbedded(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	set, err := localmasters.Start(context.Background(), localmasters.Options{N: 2, Embedded: "always", Log: &log})
	if err != nil {
		t.Fatalf("Start embedded: %v", err)
	}
	defer set.Stop()
	if !set.Embedded() || len(set.Addrs()) != 2 || set.Addrs()[0] == set.Addrs()[1] {
		t.Fatalf("embedded=%v addrs=%v", set.Embedded(), set.Addrs())
	}
	if !strings.HasPrefix(log.String(), "WARNING:") || !strings.Contains(log.String(), "miniredis") {
		t.Errorf("announcement %q: want a WARNING: line naming miniredis", log.String())
	}

	m := set.Masters()[0]
	if m.Pid() != 0 || m.Dir() != "" {
		t.Errorf("embedded pid %d dir %q", m.Pid(), m.Dir())
	}
	// From before the SET (was after its reply): a reply late under load
	// cannot make the key seem to expire early.
	start := time.Now()
	if got := do(t, m.Addr(), "SET", "lock", "tok", "PX", "200"); got != "OK" {
		t.Fatalf("SET: %q", got)
	}
	// TTLs must count down in real time without anyone calling FastForward.
	for {
		_, err := redistest.Do(m.Addr(), "GET", "lock")
		if errors.Is(err, redisserver.ErrNil) {
			break
		}
		if err != nil {
			t.Fatalf("GET: %v", err)
		}
		if time.Since(start) > time.Second {
			t.Fatal("key with PX 200 still there after 1s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if d := time.Since(start); !bound.Min(t, "localmasters.embedded_px200_expiry", d, 150*time.Millisecond) {
		t.Errorf("key with PX 200 expired after only %v", d)
	}

	// Kill loses the data, Restart comes back on the same address.
	do(t, m.Addr(), "SET", "k", "v")
	addr := m.Addr()
	if err := m.Kill(); err != nil || m.Running() {
		t.Fatalf("Kill: %v running %v", err, m.Running())
	}
	if err := ping(addr, 200*time.Millisecond); err == nil {
		t.Error("killed embedded master still answers")
	}
	if err := m.Restart(context.Background()); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if m.Addr() != addr {
		t.Errorf("Restart moved %s to %s", addr, m.Addr())
	}
	if _, err := redistest.Do(addr, "GET", "k"); !errors.Is(err, redisserver.ErrNil) {
		t.Errorf("GET k after Kill+Restart: %v, want nil", err)
	}
	if err := m.Pause(); !errors.Is(err, localmasters.ErrEmbeddedUnsupported) {
		t.Errorf("Pause: %v", err)
	}
	if err := m.Resume(); err == nil || !strings.Contains(err.Error(), "not supported by embedded masters") {
		t.Errorf("Resume: %v", err)
	}
	if err := set.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := ping(addr, 200*time.Millisecond); err == nil {
		t.Error("embedded master answers after Stop")
	}
}

func TestEmbeddedRefusesPersistence(t *testing.T) {
	set, err := localmasters.Start(context.Background(), localmasters.Options{N: 2, Embedded: "always", Persistence: localmasters.PersistAOFAlways})
	if err == nil {
		set.Stop()
		t.Fatal("embedded with aof-always accepted")
	}
	if !strings.Contains(err.Error(), "persistence") || !strings.Contains(err.Error(), "aof-always") {
		t.Errorf("error %q does not name persistence and the value", err)
	}
}

func TestAutoFallsBackToEmbedded(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no redis-server here
	var log bytes.Buffer
	set, err := localmasters.Start(context.Background(), localmasters.Options{N: 1, Log: &log})
	if err != nil {
		t.Fatalf("Start auto without redis-server: %v", err)
	}
	defer set.Stop()
	if !set.Embedded() {
		t.Error("not embedded")
	}
	if !strings.HasPrefix(log.String(), "WARNING: redis-server was not found") || !strings.Contains(log.String(), "NOT Redis figures") {
		t.Errorf("announcement %q", log.String())
	}
	if _, err := localmasters.Start(context.Background(), localmasters.Options{N: 1, Embedded: "never"}); err == nil || !strings.Contains(err.Error(), "redis-server not found") {
		t.Errorf("Embedded never without redis-server: %v", err)
	}
}

// Kill, Stop and Set.Stop racing (as with a signal handler) leave nothing running.
func TestConcurrentStop(t *testing.T) {
	t.Parallel()
	set := redistest.StartMasters(t, 3, localmasters.PersistAOFEverysec)
	var pids []int
	for _, m := range set.Masters() {
		pids = append(pids, m.Pid())
	}
	done := make(chan error, 8)
	for _, m := range set.Masters() {
		go func() { done <- m.Kill() }()
		go func() { done <- m.Stop() }()
	}
	go func() { done <- set.Stop() }()
	go func() { done <- set.Stop() }()
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	for _, pid := range pids {
		if !gone(pid) {
			t.Errorf("pid %d survived", pid)
		}
	}
}
