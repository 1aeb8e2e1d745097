package faults_test

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"lockbench/faults"
)

// memberTestEcho listens on a free loopback port and echoes every
// connection back, until the test ends.
func memberTestEcho(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

// memberTestSays sends parts to addr and returns the first n bytes that
// come back within d (fewer if not).
func memberTestSays(addr string, d time.Duration, n int, parts ...string) string {
	c, err := net.DialTimeout("tcp", addr, d)
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(d))
	for _, p := range parts {
		if _, err := io.WriteString(c, p); err != nil {
			return err.Error()
		}
		time.Sleep(20 * time.Millisecond) // separate chunks through the proxy
	}
	got := make([]byte, n)
	n, _ = io.ReadFull(c, got)
	return string(got[:n])
}

// memberTestNet is 3 members with 2 echoing ports each behind a MemberNet.
func memberTestNet(t *testing.T) ([][]string, *faults.MemberNet) {
	t.Helper()
	listen := make([][]string, 3)
	for j := range listen {
		listen[j] = []string{memberTestEcho(t), memberTestEcho(t)}
	}
	m, err := faults.NewMemberNet(listen)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return listen, m
}

// memberTestLinks checks that each member reaches each other member on
// every port exactly when want says so.
func memberTestLinks(t *testing.T, m *faults.MemberNet, want func(from, to int) bool) {
	t.Helper()
	for from := range 3 {
		for to, addrs := range m.Addrs(from) {
			for k, addr := range addrs {
				if from == to {
					continue
				}
				d := 2 * time.Second
				if !want(from, to) {
					d = 200 * time.Millisecond // a black hole answers nothing
				}
				if got := memberTestSays(addr, d, 4, "ping"); (got == "ping") != want(from, to) {
					t.Errorf("member %d → member %d port %d (%s): got %q, want it to pass: %v", from, to, k, addr, got, want(from, to))
				}
			}
		}
	}
}

// Isolating member 0 of 3 cuts 0↔1 and 0↔2 both ways, not 1↔2; calls
// nest; Rejoin restores every link.
func TestMemberNetIsolateRejoin(t *testing.T) {
	listen, m := memberTestNet(t)
	for from := range 3 {
		addrs := m.Addrs(from)
		if strings.Join(addrs[from], ",") != strings.Join(listen[from], ",") {
			t.Fatalf("member %d's own addresses %v, want its real ones %v", from, addrs[from], listen[from])
		}
		for to := range 3 {
			if to != from && addrs[to][0] == listen[to][0] {
				t.Fatalf("member %d reaches member %d at its real address", from, to)
			}
		}
	}
	all := func(int, int) bool { return true }
	memberTestLinks(t, m, all)
	for range 2 {
		if err := m.Isolate([]int{0}); err != nil {
			t.Fatal(err)
		}
	}
	apart := func(from, to int) bool { return from != 0 && to != 0 }
	memberTestLinks(t, m, apart)
	if err := m.Rejoin([]int{0}); err != nil {
		t.Fatal(err)
	}
	memberTestLinks(t, m, apart) // isolated twice: still cut
	if err := m.Rejoin([]int{0}); err != nil {
		t.Fatal(err)
	}
	memberTestLinks(t, m, all)
	if err := m.Isolate([]int{3}); err == nil {
		t.Error("member 3 of 3 isolated")
	}
}

// A Hello rewrites the first message on its port only, even when it
// arrives in parts; later messages pass as they are.
func TestMemberNetHello(t *testing.T) {
	listen, m := memberTestNet(t)
	err := m.Greet(1, func(head []byte, own, via string) ([]byte, bool) {
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			return bytes.Replace(head, []byte(own), []byte(via), 1), false
		}
		return nil, true
	})
	if err != nil {
		t.Fatal(err)
	}
	hi := "I am " + listen[1][1] + "\n"
	want := "I am " + m.Addrs(0)[1][1] + "\n"
	if got := memberTestSays(m.Addrs(1)[0][1], 2*time.Second, len(want+hi), hi[:7], hi[7:], hi); got != want+hi {
		t.Errorf("member 1 → member 0's port 1 echoed %q, want %q", got, want+hi)
	}
	if got := memberTestSays(m.Addrs(1)[0][0], 2*time.Second, len(hi), hi); got != hi {
		t.Errorf("member 1 → member 0's port 0 echoed %q, want it untouched", got)
	}
}

// A member that listens only after it was dialed is reached: its relay
// retries the refused dial (a ZooKeeper leader opens its quorum port after
// its followers may dial it).
func TestMemberNetLateListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	late := ln.Addr().String()
	ln.Close()
	m, err := faults.NewMemberNet([][]string{{memberTestEcho(t)}, {late}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	go func() {
		time.Sleep(300 * time.Millisecond)
		ln, err := net.Listen("tcp", late)
		if err != nil {
			return // the port was taken meanwhile: the check below says so
		}
		defer ln.Close()
		c, err := ln.Accept() // the one dial below
		if err == nil {
			_, _ = io.Copy(c, c)
			c.Close()
		}
	}()
	if got := memberTestSays(m.Addrs(0)[1][0], 2*time.Second, 4, "ping"); got != "ping" {
		t.Errorf("member 0 → member 1 listening 300ms late: got %q", got)
	}
}
