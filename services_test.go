package main

import (
	"strings"
	"testing"

	"lockbench/plan"
	"lockbench/service"
)

// Every topology a cell can name is a registered service, Redis' three
// included: bench, runner and chaos find each one's servers and client
// through the registry only.
func TestEveryTopologyIsAService(t *testing.T) {
	names := plan.TopologyNames()
	if len(names) < 6 {
		t.Fatalf("topologies %v; want Redis' three and the three services", names)
	}
	for _, n := range names {
		if service.Lookup(n) == nil {
			t.Errorf("topology %s: no registered service (its servers and client cannot be found)", n)
		}
	}
}

// TestVersionNamesEachServiceLibrary: lockbench version prints the
// version of each registered service's client libraries
// (service.Libraries) and lockbench's own histograms', as built.
func TestVersionNamesEachServiceLibrary(t *testing.T) {
	stdout, stderr, code := lockbench(t, "version")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, lib := range []string{"github.com/redis/rueidis v", "github.com/go-redsync/redsync/v4 v", "go.etcd.io/etcd/client/v3 v",
		"github.com/go-zookeeper/zk v", "github.com/jackc/pgx/v5 v", "github.com/HdrHistogram/hdrhistogram-go v"} {
		if !strings.Contains(stdout, "\n"+lib) {
			t.Errorf("version does not name %s…:\n%s", lib, stdout)
		}
	}
}
