package main

import (
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
