package localmasters_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"lockbench/internal/redisserver"
	"lockbench/internal/redistest"
	"lockbench/redislock/localmasters"
)

// TestCutFromBusSplitsALock cuts a shard's master from the cluster bus
// (not from clients) and shows the split brain Redis Cluster allows: the
// cut master still grants a SET NX on its slots, the majority promotes
// its replica, and the promoted replica grants the same lock again while
// the old master still holds it: two holders.
//
// Bounds (node timeout 2 s): the grant after the cut must come within the
// node timeout (else nothing was judged: the master may already have
// judged itself cut off); the cut master must refuse writes, and the
// majority promote, within 15 s of the cut; the locks' 120 s TTL
// outlasts the test, so the overlap is no expiry.
func TestCutFromBusSplitsALock(t *testing.T) {
	t.Parallel()
	const nodeTimeout = 2 * time.Second
	c := redistest.StartCluster(t, localmasters.ClusterOptions{Masters: 3, ReplicasPerMaster: 1, NodeTimeout: nodeTimeout, CuttableBus: true})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	held, fresh := "{lb}held", "{lb}fresh"
	shard := redistest.ShardOf(t, c, held)
	old, err := c.ShardMaster(ctx, shard)
	if err != nil {
		t.Fatal(err)
	}
	replica := c.ShardReplicas(shard)[0].Addr()
	other := c.MasterAddrs()[(shard+1)%3] // judges from the majority's side
	mustDo(t, old, "OK", "SET", held, "A", "NX", "PX", "120000")
	mustDo(t, old, "1", "WAIT", "1", "5000") // on the replica before the cut

	cut, err := c.CutFromBus(ctx, shard)
	if err != nil {
		t.Fatal(err)
	}
	got, err := redistest.Do(old, "SET", fresh, "A", "NX", "PX", "120000")
	if since := time.Since(cut.At); err != nil || got != "OK" {
		if since >= nodeTimeout {
			t.Fatalf("judged nothing: the first SET after the cut came %v after it (node timeout %v): %q, %v", since, nodeTimeout, got, err)
		}
		t.Fatalf("cut master %s refused a lock %v after the cut, within the node timeout: %q, %v", old, since, got, err)
	}
	mustDo(t, old, "0", "WAIT", "1", "500") // the replica's link is cut too

	grants, refusal := grantWindow(t, old, cut.At)
	t.Logf("cut master %s kept granting for %v after the cut, then refused: %v", old, grants, refusal)
	if !strings.Contains(refusal.Error(), "CLUSTERDOWN") {
		t.Errorf("cut master's refusal: %v, want CLUSTERDOWN", refusal)
	}
	promoted := waitView(t, other, 15*time.Second, cut.At, func(v string) bool { return servesAsMaster(v, replica) && flagged(v, old, "fail") })
	t.Logf("%s names %s master of shard %d %v after the cut", other, replica, shard, promoted)

	mustDo(t, replica, "OK", "SET", fresh, "B", "NX", "PX", "120000") // the second holder
	mustDo(t, replica, "", "SET", held, "B", "NX", "PX", "120000")    // replicated before the cut: still held
	if keys := keysAt(t, old, fresh); len(keys) != 1 {                // KEYS names no key: served while CLUSTERDOWN
		t.Fatalf("old master %s: KEYS %s: %v, want the first holder's lock still there", old, fresh, keys)
	}

	if err := c.HealBus(ctx); err != nil {
		t.Fatal(err)
	}
	rejoined := waitView(t, other, 15*time.Second, cut.At, func(v string) bool { return replicates(v, old, replica) })
	t.Logf("healed: %s rejoined as a replica of %s %v after the cut", old, replica, rejoined)
}

// grantWindow probes addr with SET NX on fresh keys of the test's slot
// until it refuses one (at most 15 s after the cut): how long it granted
// after the cut, and the refusal.
func grantWindow(t *testing.T, addr string, cutAt time.Time) (time.Duration, error) {
	t.Helper()
	var last time.Time
	for n := 0; time.Since(cutAt) < 15*time.Second; n++ {
		got, err := redistest.Do(addr, "SET", fmt.Sprintf("{lb}probe%d", n), "A", "NX", "PX", "120000")
		if err != nil {
			return last.Sub(cutAt), err
		}
		if got == "OK" {
			last = time.Now()
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("cut master %s still granted 15 s after the cut", addr)
	return 0, nil
}

// waitView polls CLUSTER NODES at addr until ok holds (within limit of
// cutAt) and says how long after the cut that was.
func waitView(t *testing.T, addr string, limit time.Duration, cutAt time.Time, ok func(string) bool) time.Duration {
	t.Helper()
	var v string
	var err error
	for time.Since(cutAt) < limit {
		if v, err = redistest.Do(addr, "CLUSTER", "NODES"); err == nil && ok(v) {
			return time.Since(cutAt)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s: not seen within %v of the cut; CLUSTER NODES: %v\n%s", addr, limit, err, v)
	return 0
}

// nodeLine is addr's line of CLUSTER NODES v, split in fields.
func nodeLine(v, addr string) []string {
	for _, line := range strings.Split(v, "\n") {
		if f := strings.Fields(line); len(f) >= 8 && strings.HasPrefix(f[1], addr+"@") {
			return f
		}
	}
	return nil
}

func flagged(v, addr, flag string) bool {
	f := nodeLine(v, addr)
	return f != nil && strings.Contains(","+f[2]+",", ","+flag+",")
}

// servesAsMaster: addr is a master with slots, not failing.
func servesAsMaster(v, addr string) bool {
	f := nodeLine(v, addr)
	return f != nil && flagged(v, addr, "master") && !strings.Contains(f[2], "fail") && len(f) > 8
}

// replicates: addr is a replica of master.
func replicates(v, addr, master string) bool {
	f, m := nodeLine(v, addr), nodeLine(v, master)
	return f != nil && m != nil && flagged(v, addr, "slave") && f[3] == m[0]
}

// mustDo fails the test unless args at addr reply want ("" for a nil).
func mustDo(t *testing.T, addr, want string, args ...string) {
	t.Helper()
	got, err := redistest.Do(addr, args...)
	if err != nil && !(want == "" && errors.Is(err, redisserver.ErrNil)) {
		t.Fatalf("%s: %v: %v", addr, args, err)
	}
	if got != want {
		t.Fatalf("%s: %v: %q, want %q", addr, args, got, want)
	}
}

// keysAt is KEYS pattern at addr.
func keysAt(t *testing.T, addr, pattern string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	m, err := redisserver.DoMessage(ctx, addr, "KEYS", pattern)
	if err != nil {
		t.Fatalf("%s: KEYS %s: %v", addr, pattern, err)
	}
	keys, err := m.AsStrSlice()
	if err != nil {
		t.Fatalf("%s: KEYS %s: %v", addr, pattern, err)
	}
	return keys
}
