package zklock

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"lockbench/faults"
)

type linksTestLog struct{}

func (linksTestLog) Printf(string, ...any) {}

// linksTestWithin polls ok every 100 ms until it says true, and fails the
// test with its last reason after d; it returns how long it took.
func linksTestWithin(t *testing.T, d time.Duration, what string, ok func() (bool, string)) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		done, why := ok()
		if done {
			return time.Since(start).Round(time.Millisecond)
		}
		if time.Since(start) > d {
			t.Fatalf("%s: not within %v: %s", what, d, why)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// linksTestModes are the members' srvr modes ("" for one that does not
// serve), and the index of the leader among them (-1: none).
func linksTestModes(c *Cluster, members []int) ([]string, int) {
	modes, leader := make([]string, len(members)), -1
	for k, i := range members {
		modes[k], _ = c.Members()[i].Mode(context.Background())
		if modes[k] == "leader" {
			leader = i
		}
	}
	return modes, leader
}

// linksTestServed says whether the members serve: one leads, the others
// follow it (it counts them synced).
func linksTestServed(c *Cluster, members []int) (bool, string) {
	modes, leader := linksTestModes(c, members)
	if leader < 0 || slices.Contains(modes, "") {
		return false, fmt.Sprintf("modes %q", modes)
	}
	out, err := fourLetter(context.Background(), c.Members()[leader].Addr(), "mntr")
	synced, _ := field(strings.ReplaceAll(out, "\t", ":"), "zk_synced_followers")
	n, _ := strconv.Atoi(synced)
	return n == len(members)-1, fmt.Sprintf("modes %q, leader %d has %q synced followers (%v)", modes, leader, synced, err)
}

// linksTestCreate makes a znode through the servers (a write the quorum
// commits), within d.
func linksTestCreate(servers []string, path string, d time.Duration) error {
	conn, _, err := zk.Connect(servers, 2*time.Second, zk.WithLogInfo(false), zk.WithLogger(linksTestLog{}))
	if err != nil {
		return err
	}
	defer conn.Close()
	done := make(chan error, 1)
	go func() { _, err := conn.Create(path, nil, 0, zk.WorldACL(zk.PermAll)); done <- err }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		return fmt.Errorf("create %s through %v: no answer in %v", path, servers, d)
	}
}

// linksTestExists says whether the znode is in member i's copy.
func linksTestExists(c *Cluster, i int, path string) (bool, string) {
	conn, _, err := zk.Connect([]string{c.Members()[i].Addr()}, 2*time.Second, zk.WithLogInfo(false), zk.WithLogger(linksTestLog{}))
	if err != nil {
		return false, err.Error()
	}
	defer conn.Close()
	done := make(chan error, 1)
	go func() {
		ok, _, err := conn.Exists(path)
		if err == nil && !ok {
			err = fmt.Errorf("%s not on %s", path, c.Members()[i].Name)
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err == nil, fmt.Sprint(err)
	case <-time.After(2 * time.Second):
		return false, "no answer"
	}
}

// The leader of 3 PeerVia members is cut off from the other two: they
// elect one of themselves and commit without it, while it does not serve
// (Proof); rejoined, it follows the new leader and has the write. A
// killed and restarted leader rejoins through the proxies too.
func TestLinksIsolateLeader(t *testing.T) {
	start := time.Now()
	c := clusterTestStart(t, Options{Servers: 3, TTL: time.Second, MaxClientCnxns: 50, PeerVia: testPeers})
	cfg, err := os.ReadFile(c.members[0].cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	for j, m := range c.members {
		own := fmt.Sprintf("server.%d=127.0.0.1:%d:%d\n", m.ID, m.PeerPort, m.ElectionPort)
		if strings.Contains(string(cfg), own) != (j == 0) {
			t.Fatalf("zk1's zoo.cfg: only its own server line is its real address, got:\n%s", cfg)
		}
	}
	links := c.Links()
	old := clusterTestLeader(t, c, 5*time.Second)
	var others []int
	for i := range c.members {
		if i != old {
			others = append(others, i)
		}
	}
	if err := links.Isolate([]int{old}); err != nil {
		t.Fatal(err)
	}
	took := linksTestWithin(t, 10*time.Second, "a leader among the other two", func() (bool, string) { return linksTestServed(c, others) })
	t.Logf("zk%d cut off; zk%d and zk%d serve again %v later", old+1, others[0]+1, others[1]+1, took)
	var servers []string
	for _, i := range others {
		servers = append(servers, c.members[i].Addr())
	}
	if err := linksTestCreate(servers, "/links-test", 5*time.Second); err != nil {
		t.Fatalf("a write through the other two: %v", err)
	}
	linksTestWithin(t, 5*time.Second, "proof that the old leader is cut", func() (bool, string) {
		detail, cut := links.Proof(context.Background(), old)
		return cut, detail
	})
	detail, _ := links.Proof(context.Background(), old)
	t.Logf("proof: %s", detail)

	if err := links.Rejoin([]int{old}); err != nil {
		t.Fatal(err)
	}
	all := []int{0, 1, 2}
	took = linksTestWithin(t, 10*time.Second, "all three serving one leader", func() (bool, string) { return linksTestServed(c, all) })
	_, leader := linksTestModes(c, all)
	t.Logf("rejoined: all three serve leader zk%d %v later", leader+1, took)
	if detail, cut := links.Proof(context.Background(), old); cut {
		t.Errorf("rejoined member still proven cut: %s", detail)
	}
	linksTestWithin(t, 5*time.Second, "the write on the rejoined member", func() (bool, string) { return linksTestExists(c, old, "/links-test") })

	// Kill and Restart still work through the proxies (same ports).
	if err := c.members[leader].Kill(); err != nil {
		t.Fatal(err)
	}
	rest := slices.DeleteFunc(slices.Clone(all), func(i int) bool { return i == leader })
	took = linksTestWithin(t, 10*time.Second, "a leader after the kill", func() (bool, string) { return linksTestServed(c, rest) })
	t.Logf("zk%d killed: the other two serve %v later", leader+1, took)
	if err := c.members[leader].Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	took = linksTestWithin(t, 10*time.Second, "all three serving after the restart", func() (bool, string) { return linksTestServed(c, all) })
	t.Logf("zk%d restarted: all three serve, %v after Restart returned", leader+1, took)
	t.Logf("whole test %v", time.Since(start).Round(time.Millisecond))
}

// linksTestOpening is an election InitialMessage (protocol version 1).
func linksTestOpening(sid int64, addr string) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(0xffffffffffff0000)) // -65536
	b = binary.BigEndian.AppendUint64(b, uint64(sid))
	b = binary.BigEndian.AppendUint32(b, uint32(len(addr)))
	return append(b, addr...)
}

// The InitialMessage names the proxy instead of the sender's own election
// address once it is whole; others pass as they are.
func TestLinksInitialMessage(t *testing.T) {
	own, via := "127.0.0.1:1234", "127.0.0.1:56789"
	msg := linksTestOpening(3, own)
	for n := range len(msg) {
		if _, more := initialMessage(msg[:n], own, via); !more {
			t.Fatalf("%d bytes of %d: not asked for more", n, len(msg))
		}
	}
	if out, more := initialMessage(append(msg, 'x'), own, via); more || !bytes.Equal(out, append(linksTestOpening(3, via), 'x')) {
		t.Errorf("rewritten %q (more %v)", out, more)
	}
	for _, head := range [][]byte{linksTestOpening(3, "127.0.0.1:999"), binary.BigEndian.AppendUint64(nil, 3)} {
		if out, more := initialMessage(head, own, via); more || !bytes.Equal(out, head) {
			t.Errorf("%q became %q (more %v), want it as it is", head, out, more)
		}
	}
}

// A standalone server has no member links to proxy.
func TestLinksStandaloneRefused(t *testing.T) {
	if c, err := StartLocal(context.Background(), Options{Servers: 1, PeerVia: testPeers}); err == nil {
		_ = c.Stop()
		t.Fatal("an PeerVia standalone server started")
	}
}

// testPeers is the server pool's PeerVia for these tests: faults' proxies on every
// link, the election's first message rewritten.
func testPeers(listen [][]string, hello Hello) (PeerNet, error) {
	n, err := faults.NewMemberNet(listen)
	if err != nil {
		return nil, err
	}
	if err := n.Greet(1, hello); err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}
