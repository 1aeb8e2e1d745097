package whichlock

import (
	"slices"
	"testing"
	"time"

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
