package etcdlock_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"lockbench/etcdlock"
	"lockbench/faults"
	"lockbench/internal/redistest"
)

var _ faults.Links = (*etcdlock.PeerGates)(nil)

// startGated starts a local cluster of 3 members behind peer gates.
func startGated(t *testing.T) *etcdlock.Cluster {
	t.Helper()
	if _, ok := etcdlock.ServerPath(); !ok {
		redistest.RequireTool(t, errors.New("etcd not installed (apt-get install "+etcdlock.Package+")"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	c, err := etcdlock.StartLocal(ctx, etcdlock.Options{Members: 3, NoFsync: true, Gates: true, Log: t.Output()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	return c
}

func client(t *testing.T, c *etcdlock.Cluster, members ...int) *clientv3.Client {
	t.Helper()
	var eps []string
	for _, i := range members {
		eps = append(eps, c.Members()[i].ClientURL)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// status is member i's own view.
func status(t *testing.T, c *etcdlock.Cluster, i int) (*clientv3.StatusResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return client(t, c, i).Status(ctx, c.Members()[i].ClientURL)
}

func put(cli *clientv3.Client, within time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	_, err := cli.Put(ctx, "lockbench:test:gate", "x")
	return err
}

// eventually retries f every 100 ms until it succeeds or within passes.
func eventually(t *testing.T, within time.Duration, what string, f func() error) {
	t.Helper()
	start := time.Now()
	for {
		err := f()
		if err == nil {
			t.Logf("%s after %v", what, time.Since(start).Round(time.Millisecond))
			return
		}
		if time.Since(start) > within {
			t.Fatalf("%s: not within %v: %v", what, within, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func leader(t *testing.T, c *etcdlock.Cluster) int {
	t.Helper()
	i, err := c.Leader(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return i
}

func memberID(t *testing.T, c *etcdlock.Cluster, i int) uint64 {
	t.Helper()
	st, err := status(t, c, i)
	if err != nil {
		t.Fatal(err)
	}
	return st.Header.MemberId
}

func others(i int) []int { return []int{(i + 1) % 3, (i + 2) % 3} }

// sees checks that member i names a leader, and which.
func sees(t *testing.T, c *etcdlock.Cluster, i int, want func(uint64) bool) error {
	st, err := status(t, c, i)
	if err != nil {
		return err
	}
	if st.Leader == 0 || !want(st.Leader) {
		return fmt.Errorf("member %d sees leader %x (term %d)", i, st.Leader, st.RaftTerm)
	}
	return nil
}

func mustProve(t *testing.T, links *etcdlock.PeerGates, i int) {
	t.Helper()
	start := time.Now()
	detail, cut := links.Proof(context.Background(), i)
	t.Logf("proof (%v): %s", time.Since(start).Round(time.Millisecond), detail)
	if !cut {
		t.Fatalf("member %d isolated but not cut: %s", i, detail)
	}
}

// converge waits until all members name one leader and a write through
// member i commits.
func converge(t *testing.T, c *etcdlock.Cluster, i int) {
	t.Helper()
	eventually(t, 10*time.Second, "one leader for all", func() error { return oneLeader(t, c) })
	cli := client(t, c, i)
	eventually(t, 8*time.Second, "a put through the rejoined member", func() error { return put(cli, 2*time.Second) })
}

func oneLeader(t *testing.T, c *etcdlock.Cluster) error {
	first, err := status(t, c, 0)
	if err != nil {
		return err
	}
	for m := range 3 {
		if err := sees(t, c, m, func(id uint64) bool { return id == first.Leader }); err != nil {
			return err
		}
	}
	return nil
}

// The isolated leader is replaced by the other two, which commit; it
// cannot; rejoined, it follows the new leader.
func TestIsolateLeader(t *testing.T) {
	c := startGated(t)
	links := c.Links()
	lead := leader(t, c)
	old := memberID(t, c, lead)
	if err := links.Isolate([]int{lead}); err != nil {
		t.Fatal(err)
	}
	rest := others(lead)
	eventually(t, 8*time.Second, "a new leader", func() error {
		return sees(t, c, rest[0], func(id uint64) bool { return id != old })
	})
	majority := client(t, c, rest...)
	eventually(t, 5*time.Second, "a put through the others", func() error { return put(majority, 2*time.Second) })
	mustProve(t, links, lead)
	if err := put(client(t, c, lead), 1500*time.Millisecond); err == nil {
		t.Fatal("a put through the isolated leader committed")
	}
	if err := links.Rejoin([]int{lead}); err != nil {
		t.Fatal(err)
	}
	converge(t, c, lead)
}

// An isolated follower leaves the leader and its term in place; Isolates
// nest; a Rejoin too many and an unknown member are refused.
func TestIsolateFollower(t *testing.T) {
	c := startGated(t)
	links := c.Links()
	lead := leader(t, c)
	f := others(lead)[0]
	before, err := status(t, c, lead)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := links.Isolate([]int{f}); err != nil {
			t.Fatal(err)
		}
	}
	// Past etcd's largest randomized election timeout (2 × 1 s): the
	// follower has campaigned, unheard.
	time.Sleep(2500 * time.Millisecond)
	after, err := status(t, c, lead)
	if err != nil || after.Leader != before.Header.MemberId || after.RaftTerm != before.RaftTerm {
		t.Fatalf("leader before %x term %d, after %+v (%v)", before.Header.MemberId, before.RaftTerm, after, err)
	}
	if err := put(client(t, c, lead, others(lead)[1]), 2*time.Second); err != nil {
		t.Fatalf("put through the leader and the other follower: %v", err)
	}
	mustProve(t, links, f)
	if err := links.Rejoin([]int{f}); err != nil {
		t.Fatal(err)
	}
	mustProve(t, links, f) // one Isolate left
	if err := links.Rejoin([]int{f}); err != nil {
		t.Fatal(err)
	}
	converge(t, c, f)
	if err := links.Rejoin([]int{f}); err == nil {
		t.Error("a Rejoin too many was accepted")
	}
	if err := links.Isolate([]int{3}); err == nil {
		t.Error("member 3 of 3 isolated")
	}
}

// Stop closes the gates.
func TestGatesCloseWithStop(t *testing.T) {
	c := startGated(t)
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Members() {
		u, _ := url.Parse(m.AdvertisedPeerURL)
		if conn, err := net.DialTimeout("tcp", u.Host, time.Second); err == nil {
			conn.Close()
			t.Errorf("gate %s still open after Stop", u.Host)
		}
	}
}
