package runner

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"lockbench/internal/bound"
	"lockbench/internal/redistest"
	"lockbench/plan"
	"lockbench/zklock"
)

// A local ZooKeeper ensemble takes the recipe's locks through the one
// benchmark cell: calm keys by retry over the try-once variant, one hot
// key in the recipe's queue (fair: Jain's index >= 0.95); the result says
// what it ran on (the granted session timeout, the czxid token, fsync);
// no server process is left after.
func TestZookeeperCells(t *testing.T) {
	if _, ok := zklock.ServerPath(); !ok {
		redistest.RequireTool(t, errors.New("zookeeper not installed (apt-get install "+zklock.Package+")"))
	}
	sc, err := plan.Parse("zk.yaml", []byte(`
settings: {topology: zookeeper, local: 1, ttl: 2s, workers: 8, hold: 1ms, wait_time: 3s, duration: 2s, warmup: 500ms}
cells:
  - name: calm
    settings: {keys: 1000, wait_strategy: retry}
  - name: hot
    settings: {keys: 1, wait_strategy: queue}
`), false)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := sc.Cells()
	if err != nil {
		t.Fatal(err)
	}
	log := &syncBuf{}
	out, err := Run(context.Background(), sc, cells, Options{Scenario: "zk", Log: log})
	if err == nil {
		err = out.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`zookeeper .* pids \[(\d+)\]`).FindStringSubmatch(log.String())
	if m == nil {
		t.Fatalf("no start-up line:\n%s", log.String())
	}
	pid, _ := strconv.Atoi(m[1])
	checkGone(t, []int{pid})
	calm, hot := out.Cells[0].Combined, out.Cells[1].Combined
	cc := calm.Config
	if cc.Topology != "zookeeper" || cc.Persistence != "fsync" || !strings.HasPrefix(cc.ServerVersion, "zookeeper 3.") || cc.Service == nil ||
		time.Duration(cc.Service.LeaseTTL) != 2*time.Second || cc.Service.FenceSource != zklock.FenceSource {
		t.Fatalf("config: topology %q persistence %q server %q zookeeper %+v", cc.Topology, cc.Persistence, cc.ServerVersion, cc.Service)
	}
	// The counts are samples, not rates: enough locks for the errors, the
	// checks and the Jain index to judge something. The hot key took
	// 270-495 locks in its 2 s idle (scripts/stress), the floor of 50
	// a fifth of the fewest.
	if calm.Outcomes.Acquired < 50 || calm.Outcomes.Errors > 0 || calm.Safety.Violations > 0 || calm.Servers == nil {
		t.Fatalf("calm: %d acquired, %d errors, %d violations, servers %v", calm.Outcomes.Acquired, calm.Outcomes.Errors, calm.Safety.Violations, calm.Servers)
	}
	if f := hot.Fairness; f == nil || !bound.Min(t, "zookeeper.hot.jain", f.JainIndex, 0.95) || hot.Safety.Violations > 0 || !bound.Min(t, "zookeeper.hot.acquired", hot.Outcomes.Acquired, 50) {
		t.Fatalf("hot: fairness %+v, %d violations, %d acquired", f, hot.Safety.Violations, hot.Outcomes.Acquired)
	}
	t.Logf("calm %.0f cycles/s, %.1f requests/cycle, server CPU %.1f µs/cycle; hot %.0f cycles/s, Jain %.3f", calm.Throughput.CyclesPerSec,
		cc.Service.CallsPerCycle, calm.Servers.CPUMicrosCycle, hot.Throughput.CyclesPerSec, hot.Fairness.JainIndex)
}
