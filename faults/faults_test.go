package faults_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"lockbench/faults"
	"lockbench/internal/bound"
	"lockbench/internal/redisserver"
	"lockbench/internal/redistest"
	"lockbench/redislock/localmasters"
)

func do(addr string, d time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return redisserver.Do(ctx, addr, args...)
}

func TestNetworkPartitionLatencyReset(t *testing.T) {
	set := redistest.StartMasters(t, 2, localmasters.PersistNone)
	n, err := faults.NewNetwork(set.Addrs(), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	reach := func(c, m int) error { // 1 s: only a black hole, not load, reaches it
		_, err := do(n.Addrs(c)[m], time.Second, "PING")
		return err
	}
	for c := range 2 {
		for m := range 2 {
			if err := reach(c, m); err != nil {
				t.Fatalf("client %d → master %d before any fault: %v", c, m, err)
			}
		}
	}

	// A held connection across the partition must not come back to life
	// with its lost requests: heal drops it.
	held, err := net.Dial("tcp", n.Addrs(0)[1])
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := n.Partition([]int{0}, []int{1}); err != nil {
		t.Fatal(err)
	}
	if err := reach(0, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("client 0 → master 1 while partitioned: %v, want a timeout (black hole)", err)
	}
	if err := reach(1, 1); err != nil {
		t.Fatalf("client 1 → master 1 is not partitioned: %v", err)
	}
	if err := reach(0, 0); err != nil {
		t.Fatalf("client 0 → master 0 is not partitioned: %v", err)
	}
	held.Write([]byte("*1\r\n$4\r\nPING\r\n")) // swallowed by the partition
	if err := n.Heal([]int{0}, []int{1}); err != nil {
		t.Fatal(err)
	}
	if err := reach(0, 1); err != nil {
		t.Fatalf("client 0 → master 1 after heal: %v", err)
	}
	held.SetReadDeadline(time.Now().Add(time.Second))
	if line, err := bufio.NewReader(held).ReadString('\n'); err == nil {
		t.Fatalf("a connection that crossed the partition got %q; it must be dropped", line)
	}

	if err := n.Latency([]int{1}, []int{0}, 60*time.Millisecond, 0); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := reach(1, 0); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); !bound.Min(t, "faults.ping_with_latency", d, 60*time.Millisecond) {
		t.Fatalf("PING with 60ms latency took %v", d)
	}
	if err := n.ClearLatency([]int{1}, []int{0}); err != nil {
		t.Fatal(err)
	}
	// The fastest of 3 PINGs (was one): a latency left in place delays
	// every one by 60 ms, a load spike only some.
	fastest := time.Hour
	for range 3 {
		start = time.Now()
		if err := reach(1, 0); err != nil {
			t.Fatalf("after latency removed: %v", err)
		}
		fastest = min(fastest, time.Since(start))
	}
	if !bound.Max(t, "faults.ping_after_latency_removed", fastest, 50*time.Millisecond) {
		t.Fatalf("after latency removed: the fastest of 3 PINGs took %v", fastest)
	}

	conn, err := net.Dial("tcp", n.Addrs(1)[1])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := n.Reset([]int{1}, []int{1}); err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(time.Now().Add(time.Second))
	conn.Write([]byte("*1\r\n$4\r\nPING\r\n"))
	if _, err := bufio.NewReader(conn).ReadString('\n'); err == nil {
		t.Fatal("a reset connection still answers")
	}
	if err := reach(1, 1); err != nil {
		t.Fatalf("new connection after reset: %v", err)
	}
	if err := n.ResetFor([]int{0}, []int{0}); err != nil {
		t.Fatal(err)
	}
	if err := reach(0, 0); err == nil {
		t.Fatal("connection survived reset_peer")
	}
	if err := n.EndReset([]int{0}, []int{0}); err != nil {
		t.Fatal(err)
	}
	if err := reach(0, 0); err != nil {
		t.Fatalf("after the resets ended: %v", err)
	}
	if err := n.Partition([]int{5}, nil); err == nil {
		t.Fatal("partition of a client that does not exist accepted")
	}
	addrs := append(n.Addrs(0), n.Addrs(1)...)
	n.Close()
	for _, a := range addrs {
		if c, err := net.DialTimeout("tcp", a, 200*time.Millisecond); err == nil {
			c.Close()
			t.Errorf("proxy %s still listening after Close", a)
		}
	}
}

func requireFaketime(t *testing.T) {
	t.Helper()
	redistest.RequireTool(t, faults.FaketimeAvailable())
}

// A master under libfaketime: the pid we signal is redis-server's own, and
// a jump moves its wall clock at once, expiring keys early.
func TestClockJumpOnMaster(t *testing.T) {
	bin := redistest.Require(t)
	requireFaketime(t)
	clock, err := faults.NewClock(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env, err := clock.Env()
	if err != nil {
		t.Fatal(err)
	}
	set, err := localmasters.Start(context.Background(), localmasters.Options{N: 1, RedisServer: bin, Embedded: "never", Env: env})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Stop()
	m := set.Masters()[0]
	info, err := do(m.Addr(), time.Second, "INFO", "server")
	if err != nil || !strings.Contains(info, "process_id:"+strconv.Itoa(m.Pid())+"\r") {
		t.Fatalf("INFO process_id is not our pid %d (%v)", m.Pid(), err)
	}
	// (Not /proc/PID/environ: redis-server writes its title over it.)
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(m.Pid()) + "/maps")
	if !strings.Contains(string(b), "libfaketime") {
		t.Fatal("redis-server does not run under libfaketime")
	}
	serverTime := func() int64 {
		s, err := do(m.Addr(), time.Second, "EVAL", "return redis.call('TIME')[1]", "0")
		if err != nil {
			t.Fatal(err)
		}
		v, _ := strconv.ParseInt(s, 10, 64)
		return v
	}
	if d := serverTime() - time.Now().Unix(); d < -1 || d > 1 {
		t.Fatalf("fake clock off by %ds before any jump", d)
	}
	if _, err := do(m.Addr(), time.Second, "SET", "lock", "tok", "PX", "5000"); err != nil {
		t.Fatal(err)
	}
	if err := clock.Jump(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if d := serverTime() - time.Now().Unix(); d < 9 || d > 11 {
		t.Fatalf("after a 10s jump the server clock is %ds ahead", d)
	}
	if _, err := do(m.Addr(), time.Second, "GET", "lock"); !errors.Is(err, redisserver.ErrNil) {
		t.Fatalf("a 5s lock survived a 10s clock jump: %v", err)
	}
	// The restart (same pid rules) keeps the fake clock.
	if err := m.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := m.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := serverTime() - time.Now().Unix(); d < 9 || d > 11 {
		t.Fatalf("restarted master's clock is %ds ahead, want 10", d)
	}
}

type fakeClient struct{ paused, resumed atomic.Int32 }

func (f *fakeClient) Pause() error  { f.paused.Add(1); return nil }
func (f *fakeClient) Resume() error { f.resumed.Add(1); return nil }

func TestSchedulerAppliesAndUndoes(t *testing.T) {
	set := redistest.StartMasters(t, 2, localmasters.PersistNone)
	n, err := faults.NewNetwork(set.Addrs(), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	cl := &fakeClient{}
	tg := faults.Targets{Net: n, Clients: []faults.Client{cl}}
	for _, m := range set.Masters() {
		tg.Masters = append(tg.Masters, m)
	}
	specs := []faults.Spec{
		{At: 0, Kind: faults.Partition, Clients: []int{0}, Masters: []int{1}},                       // until the end
		{At: 100 * time.Millisecond, Kind: faults.Crash, Masters: []int{0}, Restart: "200ms"},       // delayed restart
		{At: 50 * time.Millisecond, Kind: faults.Pause, Clients: []int{0}, For: time.Hour},          // undone by Stop
		{At: 10 * time.Second, Kind: faults.Crash, Masters: []int{1}, Restart: faults.RestartNever}, // never due
	}
	if _, err := faults.NewScheduler(context.Background(), []faults.Spec{{Kind: faults.ClockJump, Masters: []int{0}, By: time.Second}}, tg); err == nil {
		t.Fatal("a clock jump on a master without a fake clock was accepted")
	}
	s, err := faults.NewScheduler(context.Background(), specs, tg)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	s.Start(t0, specs)
	if _, err := do(n.Addrs(0)[1], 200*time.Millisecond, "PING"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the fault due at 0 is not in place when Start returns: %v", err)
	}
	// Stop once the delayed restart happened (its timer is armed after the
	// crash's kill, so a fixed 500 ms could come first on a loaded
	// machine), for at most 10 s.
	for deadline := time.Now().Add(10 * time.Second); !hasEvent(s.Events(), "restart") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	pid1 := set.Masters()[1].Pid()
	s.Stop()
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range s.Events() {
		kinds = append(kinds, e.Kind)
	}
	if got := strings.Join(kinds, ","); got != "partition,pause,crash,restart,resume,heal" && got != "partition,pause,crash,restart,heal,resume" {
		t.Fatalf("events %s", got)
	}
	ev := s.Events()
	// The lower bound is the spec's; the upper loose (a master's start-up
	// under load: a loaded CI machine took 490 ms).
	if d := ev[3].At.Sub(ev[2].At); !bound.Min(t, "faults.restart_after_crash", d, 200*time.Millisecond) || !bound.Max(t, "faults.restart_after_crash", d, 1500*time.Millisecond) {
		t.Fatalf("restart %v after the crash, want about 200ms", d)
	}
	if cl.paused.Load() != 1 || cl.resumed.Load() != 1 {
		t.Fatalf("client paused %d resumed %d times", cl.paused.Load(), cl.resumed.Load())
	}
	if _, err := do(n.Addrs(0)[1], time.Second, "PING"); err != nil {
		t.Fatalf("partition not healed by Stop: %v", err)
	}
	if !set.Masters()[0].Running() || set.Masters()[1].Pid() != pid1 {
		t.Fatal("master 0 not restarted, or the never-due crash of master 1 happened")
	}
	// The fault that was never due is reported as missed, the others not.
	if m := s.Missed(); len(m) != 1 || m[0].String() != specs[3].String() {
		t.Fatalf("missed %v; want only %v", m, specs[3])
	}
	if ev[2].HeldKeys != 0 {
		t.Fatalf("crash of an empty master: held keys %d, want 0", ev[2].HeldKeys)
	}
}

func TestSpecStringAndRestart(t *testing.T) {
	s := faults.Spec{At: 3 * time.Second, Kind: faults.Crash, Masters: []int{1}, Restart: "2.5s"}
	if got := s.String(); got != "crash at 3s masters 1 restart after 2.5s" {
		t.Fatalf("String: %q", got)
	}
	for r, want := range map[string]time.Duration{"": 0, "immediate": 0, "never": -1, "1500ms": 1500 * time.Millisecond} {
		if d, err := (faults.Spec{Restart: r}).RestartDelay(); err != nil || d != want {
			t.Errorf("restart %q: %v %v", r, d, err)
		}
	}
	if _, err := (faults.Spec{Restart: "soon"}).RestartDelay(); err == nil || !strings.Contains(err.Error(), "restart") {
		t.Errorf("restart soon: %v", err)
	}
}

// hasEvent: whether events hold one of kind.
func hasEvent(events []faults.Event, kind string) bool {
	for _, e := range events {
		if e.Kind == kind {
			return true
		}
	}
	return false
}
