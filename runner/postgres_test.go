package runner

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"lockbench/internal/bound"
	"lockbench/internal/redistest"
	"lockbench/pglock"
	"lockbench/plan"
)

// A local PostgreSQL server takes advisory locks through the one
// benchmark cell: calm keys by retry, one hot key in the server's queue
// (fair: Jain's index >= 0.95); the result says what it ran on (no lease,
// no token, persistence not applicable); the postmaster is gone after.
func TestPostgresCells(t *testing.T) {
	if _, ok := pglock.BinDir(); !ok {
		redistest.RequireTool(t, errors.New("postgres not installed (apt-get install "+pglock.Package+")"))
	}
	sc, err := plan.Parse("pg.yaml", []byte(`
settings: {topology: postgres, workers: 8, hold: 1ms, wait_time: 3s, duration: 2s, warmup: 300ms}
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
	out, err := Run(context.Background(), sc, cells, Options{Scenario: "pg", Log: log})
	if err == nil {
		err = out.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`local PostgreSQL .* pid (\d+)`).FindStringSubmatch(log.String())
	if m == nil {
		t.Fatalf("no start-up line:\n%s", log.String())
	}
	pid, _ := strconv.Atoi(m[1])
	checkGone(t, []int{pid})
	calm, hot := out.Cells[0].Combined, out.Cells[1].Combined
	cc := calm.Config
	if cc.Topology != "postgres" || cc.Persistence != "not applicable" || !strings.HasPrefix(cc.ServerVersion, "PostgreSQL ") || cc.Service == nil || cc.TTL != 0 {
		t.Fatalf("config: topology %q persistence %q server %q postgres %+v ttl %v", cc.Topology, cc.Persistence, cc.ServerVersion, cc.Service, cc.TTL)
	}
	// The counts are samples, not rates: enough locks for the errors, the
	// checks and the Jain index to judge something. The hot key took
	// 1,300-1,530 locks in its 2 s idle (scripts/stress), the floor of
	// 100 a thirteenth of the fewest.
	if calm.Outcomes.Acquired < 100 || calm.Outcomes.Errors > 0 || calm.Safety.Violations > 0 || calm.Servers == nil {
		t.Fatalf("calm: %d acquired, %d errors, %d violations, servers %v", calm.Outcomes.Acquired, calm.Outcomes.Errors, calm.Safety.Violations, calm.Servers)
	}
	if f := hot.Fairness; f == nil || !bound.Min(t, "postgres.hot.jain", f.JainIndex, 0.95) || hot.Safety.Violations > 0 || !bound.Min(t, "postgres.hot.acquired", hot.Outcomes.Acquired, 100) {
		t.Fatalf("hot: fairness %+v, %d violations, %d acquired", f, hot.Safety.Violations, hot.Outcomes.Acquired)
	}
	t.Logf("calm %.0f cycles/s, server CPU %.1f µs/cycle; hot %.0f cycles/s, Jain %.3f", calm.Throughput.CyclesPerSec, calm.Servers.CPUMicrosCycle,
		hot.Throughput.CyclesPerSec, hot.Fairness.JainIndex)
}
