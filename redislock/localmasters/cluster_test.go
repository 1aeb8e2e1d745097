package localmasters_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"lockbench/internal/redistest"
	"lockbench/redislock/localmasters"
)

// TestClusterFormsWhole forms 3 masters with a replica each and reads
// CLUSTER SLOTS from every node: the ranges cover the 16384 slots once,
// each served by a node started as master with one replica, the same on
// every node; Stop leaves no process.
func TestClusterFormsWhole(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, localmasters.ClusterOptions{Masters: 3, ReplicasPerMaster: 1})
	masters := map[string]bool{}
	for _, a := range c.MasterAddrs() {
		masters[a] = true
	}
	var before []int
	for _, m := range c.Nodes() {
		before = append(before, m.Pid())
		covered := clusterSlots(t, m.Addr(), masters)
		if covered != localmasters.Slots {
			t.Errorf("node %s: CLUSTER SLOTS covers %d slots, want %d", m.Addr(), covered, localmasters.Slots)
		}
	}
	if len(before) != 6 {
		t.Fatalf("%d nodes, want 6", len(before))
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range before {
		if !gone(pid) {
			t.Errorf("pid %d still exists after Stop", pid)
		}
	}
}

// clusterSlots reads CLUSTER SLOTS at addr, checks each range's master is
// one of masters with exactly one replica, and returns the slots covered
// (each counted once: an overlap is an error).
func clusterSlots(t *testing.T, addr string, masters map[string]bool) int {
	t.Helper()
	cl, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, ForceSingleClient: true, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ranges, err := cl.Do(ctx, cl.B().ClusterSlots().Build()).ToArray()
	if err != nil {
		t.Fatalf("%s: CLUSTER SLOTS: %v", addr, err)
	}
	seen := make([]bool, localmasters.Slots)
	n := 0
	for _, r := range ranges {
		e, _ := r.ToArray()
		if len(e) < 3 {
			t.Fatalf("%s: CLUSTER SLOTS entry %v", addr, e)
		}
		lo, _ := e[0].AsInt64()
		hi, _ := e[1].AsInt64()
		node, _ := e[2].ToArray()
		host, _ := node[0].ToString()
		port, _ := node[1].AsInt64()
		if a := host + ":" + strconv.FormatInt(port, 10); !masters[a] {
			t.Errorf("%s: slots %d-%d served by %s, not a node started as master", addr, lo, hi, a)
		}
		if reps := len(e) - 3; reps != 1 {
			t.Errorf("%s: slots %d-%d have %d replicas, want 1", addr, lo, hi, reps)
		}
		for s := lo; s <= hi; s++ {
			if seen[s] {
				t.Errorf("%s: slot %d listed twice", addr, s)
			}
			seen[s] = true
			n++
		}
	}
	return n
}
