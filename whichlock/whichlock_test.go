package whichlock

import (
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	"lockbench/internal/redistest"
	"lockbench/plan"

	// The lock services register themselves, as package main has them.
	_ "lockbench/etcdlock"
	_ "lockbench/pglock"
	_ "lockbench/redislock"
	_ "lockbench/zklock"
)

// --quick runs one design of each lock service: the first that can meet
// the needs asked (choose --quick --need fencing,leader-kill used to run
// etcd, postgres and zookeeper, none of which can, and answered "none").
func TestQuickDesignsCanMeetTheNeeds(t *testing.T) {
	ask := Ask{Repeat: 1, Duration: 5 * time.Second}
	plain, err := QuickDesigns(ask)
	if err != nil {
		t.Fatal(err)
	}
	ask.Needs = []string{"fencing", "leader-kill"}
	needy, err := QuickDesigns(ask)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"etcd", "postgres", "zookeeper", "redlock-5-mux"} {
		if !slices.Contains(plain, want) {
			t.Errorf("no needs: %v lacks %s, its service's first design", plain, want)
		}
	}
	for _, want := range []string{"etcd-fencing", "postgres-replica-guarded", "zookeeper-fencing"} {
		if !slices.Contains(needy, want) {
			t.Errorf("fencing,leader-kill: %v lacks %s, the first of its service that can meet them", needy, want)
		}
	}
	// Redis has no fenced design: its topologies keep their first, so the
	// page still says why they fall short.
	if !slices.Contains(needy, "redlock-5-mux") || len(needy) != len(plain) {
		t.Errorf("fencing,leader-kill: %v; want one design per service as without needs (%v)", needy, plain)
	}
}

// An external client's design (choose --client) is a row beside the
// designs: its cells run its adapter on the topology's servers, it has
// the not-applicable cells of single-fixed-ttl (a lock of fixed TTL on
// one master), and its own price cells.
func TestClientDesignRow(t *testing.T) {
	redistest.Require(t) // without redis-server every cell is "not measured here"
	cmd, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	py, err := plan.ClientDesign("py@single=" + cmd)
	if err != nil {
		t.Fatal(err)
	}
	ask := Ask{Repeat: 1, Duration: QuickDuration, Designs: []string{"single-fixed-ttl"}, Clients: []plan.Design{py}}
	_, cells, wl, err := Build(ask)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(wl.Designs, []string{"single-fixed-ttl", "py"}) {
		t.Fatalf("designs %v; want single-fixed-ttl and the client's row", wl.Designs)
	}
	if !maps.Equal(wl.NotApplicable["py"], wl.NotApplicable["single-fixed-ttl"]) || len(wl.NotApplicable["py"]) == 0 {
		t.Errorf("the client's not applicable %v; want single-fixed-ttl's %v", wl.NotApplicable["py"], wl.NotApplicable["single-fixed-ttl"])
	}
	for _, name := range []string{"py.none", "py.crash", "py.common", "py.hot"} {
		i := slices.IndexFunc(cells, func(c plan.Cell) bool { return c.Label == name })
		if i < 0 {
			t.Errorf("no cell %s", name)
			continue
		}
		if s := cells[i].Settings; s.Client != cmd || s.TopologyOf() != "single" || s.Watchdog {
			t.Errorf("cell %s: client %q on %s (watchdog %v); want %q on single, no watchdog", name, s.Client, s.TopologyOf(), s.Watchdog, cmd)
		}
	}
	if n := len(wl.PriceCells.Ladder["py"]); n != len(plan.LadderSteps) {
		t.Errorf("the client's capacity sweep has %d cells; want %d", n, len(plan.LadderSteps))
	}
}
