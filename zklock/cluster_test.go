package zklock

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"lockbench/internal/redistest"
)

// clusterTestStart starts a local ensemble for the test (skipped when
// ZooKeeper is not installed, failed under LOCKBENCH_REQUIRE_REDIS=1),
// stopped at its end, and logs how long it took to serve.
func clusterTestStart(t *testing.T, opt Options) *Cluster {
	t.Helper()
	if jar, ok := ServerPath(); !ok {
		redistest.RequireTool(t, fmt.Errorf("zookeeper (%s) or java not installed (apt-get install %s)", jar, Package))
	}
	opt.Log = t.Output()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	c, err := StartLocal(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	t.Logf("%d members serving in %v", opt.Servers, time.Since(start).Round(time.Millisecond))
	return c
}

// clusterTestAlive says whether pid is a live process (not gone, not a
// zombie).
func clusterTestAlive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// clusterTestRSS is the process's resident set ("" when gone).
func clusterTestRSS(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	v, _ := field(string(b), "VmRSS")
	return v
}

// clusterTestLeader polls until some member leads.
func clusterTestLeader(t *testing.T, c *Cluster, within time.Duration) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for {
		i, err := c.Leader(ctx)
		if err == nil {
			return i
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no leader within %v: %v", within, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// A 3-member ensemble has a leader; when the leader is killed the other
// two elect another, the killed one restarts on its data dir and follows;
// Stop leaves no process.
func TestClusterEnsembleFailover(t *testing.T) {
	c := clusterTestStart(t, Options{Servers: 3, TTL: 2 * time.Second, MaxClientCnxns: 50})
	if got := len(c.Servers()); got != 3 {
		t.Fatalf("%d servers, want 3", got)
	}
	if v := c.ServerVersion(); !strings.HasPrefix(v, "zookeeper 3.") || !strings.Contains(v, " on openjdk ") && !strings.Contains(v, " on java ") {
		t.Errorf("ServerVersion %q", v)
	}
	pids := c.Pids()
	if len(pids) != 3 {
		t.Fatalf("pids %v, want 3", pids)
	}
	for i, pid := range pids {
		if !clusterTestAlive(pid) {
			t.Fatalf("member %d (pid %d) not alive", i, pid)
		}
		t.Logf("zk%d pid %d RSS %s", i+1, pid, clusterTestRSS(pid))
		if pgid, err := syscall.Getpgid(pid); err != nil || pgid != pid {
			t.Errorf("member %d: process group %d (%v), want its own", i, pgid, err)
		}
	}
	ctx := context.Background()
	leader := clusterTestLeader(t, c, 5*time.Second)
	followers := 0
	for i, m := range c.Members() {
		mode, err := m.Mode(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if i != leader && mode == "follower" {
			followers++
		}
	}
	if followers != 2 {
		t.Fatalf("%d followers besides leader %d, want 2", followers, leader)
	}

	old := c.Members()[leader]
	oldPid := old.Pid()
	if err := old.Kill(); err != nil {
		t.Fatal(err)
	}
	if old.Running() || clusterTestAlive(oldPid) {
		t.Fatalf("killed leader (pid %d) still alive", oldPid)
	}
	killed := time.Now()
	next := clusterTestLeader(t, c, 10*time.Second)
	if next == leader {
		t.Fatalf("leader %d again after it was killed", next)
	}
	t.Logf("new leader zk%d %v after zk%d was killed", next+1, time.Since(killed).Round(time.Millisecond), leader+1)

	start := time.Now()
	if err := old.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	mode, err := old.Mode(ctx)
	if err != nil || mode != "follower" {
		t.Fatalf("restarted member: mode %q (%v), want follower", mode, err)
	}
	t.Logf("zk%d serving again %v after restart", leader+1, time.Since(start).Round(time.Millisecond))

	pids = c.Pids()
	if len(pids) != 3 {
		t.Fatalf("pids %v after restart, want 3", pids)
	}
	start = time.Now()
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("stopped in %v", time.Since(start).Round(time.Millisecond))
	for _, pid := range pids {
		if clusterTestAlive(pid) {
			t.Errorf("pid %d alive after Stop", pid)
		}
	}
	if len(c.Pids()) != 0 {
		t.Errorf("Pids %v after Stop", c.Pids())
	}
	if _, err := os.Stat(c.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dir %s left after Stop (%v)", c.dir, err)
	}
}

// clusterTestGrant is the session timeout the server grants to a session
// that asks for ask: ZooKeeper's ConnectRequest and ConnectResponse.
func clusterTestGrant(t *testing.T, addr string, ask time.Duration) time.Duration {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	// protocolVersion, lastZxidSeen, timeOut, sessionId, passwd (16 bytes), readOnly
	req := make([]byte, 4+4+8+4+8+4+16+1)
	binary.BigEndian.PutUint32(req[0:], uint32(len(req)-4))
	binary.BigEndian.PutUint32(req[16:], uint32(ask.Milliseconds()))
	binary.BigEndian.PutUint32(req[28:], 16)
	if _, err := conn.Write(req); err != nil {
		t.Fatal(err)
	}
	resp := make([]byte, 4+4+4)
	if _, err := io.ReadFull(conn, resp); err != nil {
		t.Fatal(err)
	}
	return time.Duration(binary.BigEndian.Uint32(resp[8:])) * time.Millisecond
}

// A standalone server for sessions of 2 s: its zoo.cfg, its mode, the
// timeouts it grants, Pause and Resume.
func TestClusterStandalone(t *testing.T) {
	c := clusterTestStart(t, Options{Servers: 1, ForceSync: true, TTL: 2 * time.Second, MaxClientCnxns: 7})
	if c.TickTime() != 200*time.Millisecond {
		t.Errorf("TickTime %v, want 200ms", c.TickTime())
	}
	if c.FsyncText() != "forceSync=yes" {
		t.Errorf("FsyncText %q", c.FsyncText())
	}
	m := c.Members()[0]
	t.Logf("pid %d RSS %s", m.Pid(), clusterTestRSS(m.Pid()))
	b, err := os.ReadFile(filepath.Join(c.dir, "zk1", "zoo.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(b)
	for _, want := range []string{"tickTime=200\n", "minSessionTimeout=400\n", "maxSessionTimeout=4000\n", "forceSync=yes\n",
		"maxClientCnxns=7\n", "clientPortAddress=127.0.0.1\n", fmt.Sprintf("clientPort=%d\n", m.ClientPort)} {
		if !strings.Contains(cfg, want) {
			t.Errorf("zoo.cfg lacks %q:\n%s", want, cfg)
		}
	}
	if strings.Contains(cfg, "server.") {
		t.Errorf("standalone zoo.cfg has server lines:\n%s", cfg)
	}
	ctx := context.Background()
	if mode, err := m.Mode(ctx); err != nil || mode != "standalone" {
		t.Fatalf("mode %q (%v), want standalone", mode, err)
	}
	if i, err := c.Leader(ctx); err != nil || i != 0 {
		t.Fatalf("Leader %d (%v), want 0", i, err)
	}
	for ask, want := range map[time.Duration]time.Duration{2 * time.Second: 2 * time.Second, 100 * time.Millisecond: 400 * time.Millisecond, time.Minute: 4 * time.Second} {
		if got := clusterTestGrant(t, m.Addr(), ask); got != want {
			t.Errorf("asked a %v session, granted %v, want %v", ask, got, want)
		}
	}

	if err := m.Pause(); err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	_, err = m.Mode(sctx)
	cancel()
	if err == nil {
		t.Fatal("a paused server answered srvr")
	}
	if err := m.Resume(); err != nil {
		t.Fatal(err)
	}
	if mode, err := m.Mode(ctx); err != nil || mode != "standalone" {
		t.Fatalf("after Resume: mode %q (%v)", mode, err)
	}
	pid := m.Pid()
	if err := m.Pause(); err != nil { // Stop must end a paused member too
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if clusterTestAlive(pid) {
		t.Errorf("pid %d alive after Stop", pid)
	}
}

// Options out of range are refused before anything starts.
func TestClusterOptions(t *testing.T) {
	for _, opt := range []Options{{Servers: 0}, {Servers: MaxServers + 1}, {Servers: 1, TTL: -time.Second}, {Servers: 1, MaxClientCnxns: -1},
		{Servers: 1, TTL: 1500 * time.Microsecond}} {
		if c, err := StartLocal(context.Background(), opt); err == nil {
			_ = c.Stop()
			t.Errorf("%+v accepted", opt)
		}
	}
	for ttl, want := range map[time.Duration]time.Duration{0: 50 * time.Millisecond, 300 * time.Millisecond: 50 * time.Millisecond,
		2 * time.Second: 200 * time.Millisecond, 1234 * time.Millisecond: 123 * time.Millisecond, time.Minute: 2 * time.Second} {
		if got := tickFor(ttl); got != want {
			t.Errorf("tickFor(%v) = %v, want %v", ttl, got, want)
		}
	}
}
