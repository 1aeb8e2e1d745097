package runner

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"lockbench/internal/redistest"
	"lockbench/plan"
	"lockbench/pool"
	"lockbench/results"
)

// measureCell runs one cell through runCell, the one cell path, on servers
// of its own: no binary, no scenario loop.
func measureCell(t *testing.T, doc string, faulty bool) *CellResult {
	t.Helper()
	redistest.Require(t)
	sc, err := plan.Parse(t.Name()+".yaml", []byte(doc), faulty)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := sc.Cells()
	if err != nil || len(cells) != 1 {
		t.Fatalf("%d cells, %v; want 1", len(cells), err)
	}
	c := cells[0]
	p := &pool.Pool{Log: t.Output()}
	defer func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	}()
	m, err := p.Prepare(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	env := cellEnv{cell: c, servers: m, prefix: keyPrefix(c.Settings, newRunID(), c.Index), seed: 7, opt: &Options{Scenario: "test", Log: t.Output()}}
	res, err := runCell(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A benchmark cell is one client on this process's goroutines, on the
// cell's lock service: its workers' figures, its baselines and its window
// readings, no checker.
func TestOneCellPathBenchmark(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd) // a cell without a results directory writes nothing here
	res := measureCell(t, `settings: {local: 1, embedded: `+embedded()+`, workers: 3, keys: 4, duration: 500ms, warmup: 0s, hold: 1ms}`, false)
	r := res.Run
	switch {
	case r.Outcomes.Acquired == 0:
		t.Fatal("no acquisitions: the cell measured nothing")
	case r.Fairness == nil || r.Fairness.Workers != 3:
		t.Errorf("fairness %+v; want the cell's 3 workers", r.Fairness)
	case r.Contention == nil || r.Contention.TimeToLock.Count != r.Outcomes.Acquired:
		t.Errorf("contention %+v; want a time to lock per acquisition (%d)", r.Contention, r.Outcomes.Acquired)
	case len(r.BaselineRTT) != 1 || r.BaselineParallel == nil:
		t.Errorf("baselines %v %v; want the lock service's", r.BaselineRTT, r.BaselineParallel)
	case r.Safety.ResourceChecked || r.Config.ChaosConfig != nil:
		t.Error("a benchmark cell has no resource checker")
	case r.Config.Clients != 1 || r.Config.Workers != 3:
		t.Errorf("config: %d clients × %d workers; want 1 × 3", r.Config.Clients, r.Config.Workers)
	}
	if left, _ := os.ReadDir(cwd); len(left) > 0 {
		t.Errorf("the cell left %d files in the working directory (%s, ...): without a results directory it writes none", len(left), left[0].Name())
	}
}

// A fault cell is N clients × the same worker loop: two clients on this
// process's goroutines, each with its share of the quota, added up into
// one result that the resource's checker and the schedule fill in. The
// pause is due at 50 ms: the quota ends the cell, and a fast machine could
// reach it before a later pause was due (no pause event). It must meet a
// holder, or the verdict is "not exercised": client 0's first worker holds
// 800 ms, past its 150 ms TTL and across the pause, so the other client
// takes the key meanwhile; fencing refuses the paused holder's late write.
func TestOneCellPathFaultTwoClients(t *testing.T) {
	res := measureCell(t, `
settings: {masters: 3, clients: 2, workers: 4, keys: 4, hold: 5ms, long_hold: 800ms, ttl: 150ms, fencing: true, duration: 3s, acquisitions: 200, min_acquisitions: 10}
faults:
  - {at: 50ms, kind: pause, clients: [0], for: 300ms}
expect:
  lost_updates: 0
  acquisitions: ">=200"
`, true)
	r := res.Run
	cc := r.Config.ChaosConfig
	if cc == nil || len(cc.Checks.PerClient) != 2 {
		t.Fatalf("chaos config %+v; want two clients' counts", cc)
	}
	var sum int64
	for _, pc := range cc.Checks.PerClient {
		if pc.Acquired == 0 {
			t.Errorf("client %d acquired nothing", pc.Client)
		}
		sum += pc.Acquired
	}
	switch {
	case sum != r.Outcomes.Acquired || r.Outcomes.Acquired < 200:
		t.Errorf("acquired %d, the clients' sum %d; want one total, the quota 200 reached", r.Outcomes.Acquired, sum)
	case r.Fairness == nil || r.Fairness.Workers != 8:
		t.Errorf("fairness %+v; want 2 clients × 4 workers", r.Fairness)
	case !r.Safety.ResourceChecked || r.Safety.JudgedHolds+r.Safety.HoldsNotJudged != r.Outcomes.Acquired:
		t.Errorf("checker: checked %v, %d+%d holds for %d acquisitions", r.Safety.ResourceChecked, r.Safety.JudgedHolds, r.Safety.HoldsNotJudged, r.Outcomes.Acquired)
	case !slices.ContainsFunc(r.Events, func(e results.Event) bool { return e.Kind == "pause" }):
		t.Errorf("events %+v; want the pause", r.Events)
	case r.Safety.ExercisedHolds == nil || *r.Safety.ExercisedHolds == 0:
		t.Errorf("the pause met no hold (%+v); want the long holder's", r.Safety)
	case res.Verdict != "met":
		t.Errorf("verdict %q (%v %v); want met", res.Verdict, res.Failed, res.NotJudged)
	}
}

// An expectation the cell does not meet makes its verdict "not met", and
// the scenario's outcome lists it (the commands exit 3 on it).
func TestOneCellPathExpectationFails(t *testing.T) {
	redistest.Require(t)
	sc, err := plan.Parse(t.Name()+".yaml", []byte(`
settings: {masters: 1, clients: 2, workers: 2, keys: 2, hold: 1ms, duration: 500ms, min_acquisitions: 1}
expect:
  acquisitions: "==0"
`), true)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := sc.Cells()
	if err != nil {
		t.Fatal(err)
	}
	out, err := Run(context.Background(), sc, cells, Options{Scenario: "test", Log: t.Output()})
	if err != nil || out.Err != nil {
		t.Fatal(err, out.Err)
	}
	res := out.Cells[0].Last
	unmet, _, _ := out.Unshown()
	if res.Verdict != "not met" || len(res.Failed) != 1 || len(unmet) != 1 {
		t.Fatalf("verdict %q, failed %v, unshown %v; want acquisitions==0 not met", res.Verdict, res.Failed, unmet)
	}
}

// A sweep may carry expectations: a benchmark cell's are judged on the
// same path as a fault cell's and recorded, so that report judges them
// again; one it does not meet is "not met".
func TestOneCellPathBenchmarkExpectations(t *testing.T) {
	res := measureCell(t, `
settings: {local: 1, embedded: `+embedded()+`, workers: 2, keys: 4, duration: 300ms, warmup: 0s, hold: 1ms}
expect:
  acquisitions: ">0"
  throughput: ">1000000000"
`, false)
	cc := res.Run.Config
	if res.Verdict != results.NotMet || len(res.Failed) != 1 || !strings.Contains(res.Failed[0], "throughput") {
		t.Fatalf("verdict %q, failed %v; want throughput>1e9 not met, acquisitions>0 met", res.Verdict, res.Failed)
	}
	if len(cc.Expect) != 2 || len(cc.ExpectFailed) != 1 || cc.ChaosConfig != nil {
		t.Errorf("recorded expect %v, failed %v, chaos part %v; want both rules, one failed, no fault part", cc.Expect, cc.ExpectFailed, cc.ChaosConfig)
	}
	js := results.JudgeRun(&res.Run, nil) // as report judges the recorded cell
	if len(js) != 2 || js[0].Status == js[1].Status {
		t.Errorf("report's judgement of the recorded rules: %+v; want one met, one not", js)
	}
}

// A fault that met a holder but could not hand its lock on (a pause
// shorter than the TTL) exercised nothing: the cell reads "not exercised",
// never met. A cell that states what its fault should do to a holder
// (exercised_holds: 0, held_at_faults: >0: a lock that outlives the
// pause) is judged on that instead, and fails if the lock was handed on.
func TestNotExercisedUnlessExpected(t *testing.T) {
	const doc = `
settings: {masters: 3, clients: 2, workers: 2, keys: 4, hold: 5ms, long_hold: 400ms, ttl: 5s, duration: 1s, min_acquisitions: 10}
faults:
  - {at: 50ms, kind: pause, clients: [0], for: 200ms}
expect:
  violations: 0
%s`
	res := measureCell(t, fmt.Sprintf(doc, ""), true)
	s := res.Run.Safety
	if res.Verdict != results.NotExercised || s.ExercisedHolds == nil || *s.ExercisedHolds != 0 {
		t.Fatalf("verdict %q, exercised %v; want not exercised (the pause handed no lock on)", res.Verdict, s.ExercisedHolds)
	}
	res = measureCell(t, fmt.Sprintf(doc, "  exercised_holds: 0\n  held_at_faults: \">0\"\n"), true)
	s = res.Run.Safety
	if res.Verdict != "met" || s.HeldAtFaults == nil || *s.HeldAtFaults == 0 {
		t.Fatalf("verdict %q (%v %v), held at the pause %v; want met: the long holder was met, its lock kept", res.Verdict, res.Failed, res.NotJudged, s.HeldAtFaults)
	}
}
