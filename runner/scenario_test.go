package runner

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"lockbench/internal/redistest"
	"lockbench/plan"
	"lockbench/results"
)

// embedded is the masters setting of the scenario-loop tests: real
// redis-server masters under LOCKBENCH_REQUIRE_REDIS=1 (CI), embedded ones
// where redis-server is missing, so the loop is tested on any machine.
func embedded() string {
	if os.Getenv(redistest.RequireEnv) == "1" {
		return "never"
	}
	return "auto"
}

// benchScenario is a two-cell benchmark scenario of short cells.
func benchScenario(t *testing.T, repeat string) (*plan.Scenario, []plan.Cell) {
	t.Helper()
	doc := `
settings: {local: 1, embedded: ` + embedded() + `, workers: 2, keys: 100, duration: 300ms, warmup: 0s, hold: 1ms}
matrix:
  mode: [sequential, multiplexed]
repeat: ` + repeat + "\n"
	sc, err := plan.Parse("loop.yaml", []byte(doc), false)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := sc.Cells()
	if err != nil {
		t.Fatal(err)
	}
	return sc, cells
}

// order records the progress the loop reports; cancel, when set, ends the
// run after the first measurement.
type order struct {
	mu     sync.Mutex
	starts []string
	cancel context.CancelFunc
}

func (o *order) StartCell(c plan.Cell, r int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.starts = append(o.starts, c.ID+"#"+string(rune('0'+r)))
}
func (o *order) Interval(results.Interval) {}
func (o *order) EndCell(plan.Cell, int, *CellResult) {
	if o.cancel != nil {
		o.cancel()
	}
}
func (o *order) Finish()        {}
func (o *order) Log() io.Writer { return io.Discard }

func readRun(t *testing.T, path string) results.Run {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r results.Run
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// Repeats run interleaved (A, B, A, B), every repeat on fresh keys, and
// each cell's file combines its repeats, its logs concatenated.
func TestRepeatsInterleaved(t *testing.T) {
	sc, cells := benchScenario(t, "2")
	o := &order{}
	dir := filepath.Join(t.TempDir(), "out")
	out, err := Run(context.Background(), sc, cells, Options{Scenario: sc.Name, Dir: dir, Progress: o})
	if err != nil || out.Err != nil {
		t.Fatalf("run: %v, %v", err, out.Err)
	}
	want := []string{cells[0].ID + "#1", cells[1].ID + "#1", cells[0].ID + "#2", cells[1].ID + "#2"}
	if strings.Join(o.starts, " ") != strings.Join(want, " ") {
		t.Errorf("order %v, want %v", o.starts, want)
	}
	for _, c := range cells {
		r := readRun(t, filepath.Join(dir, "cells", c.ID+".json"))
		if r.Repeats == nil || r.Repeats.Count != 2 || r.Outcomes.Acquired == 0 {
			t.Errorf("cell %s: repeats %+v, acquired %d; want 2 combined repeats that acquired", c.ID, r.Repeats, r.Outcomes.Acquired)
		}
		for _, m := range []string{"acquire", "failed", "release"} {
			if _, err := os.Stat(filepath.Join(dir, "cells", c.ID+"."+m+".hlog")); err != nil {
				t.Errorf("cell %s: %v", c.ID, err)
			}
		}
	}
	for _, co := range out.Cells {
		if p := co.Runs; len(p) != 2 || p[0].Config.KeyPrefix == p[1].Config.KeyPrefix {
			t.Errorf("cell %s: %d repeats, keys %q; want 2 on keys of their own", co.Cell.ID, len(p), p[0].Config.KeyPrefix)
		}
	}
	var man results.Manifest
	b, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err := json.Unmarshal(b, &man); err != nil || len(man.Cells) != 2 || man.Interrupted || man.FinishedAt.IsZero() {
		t.Errorf("manifest %+v (%v): want 2 cells, finished, not interrupted", man, err)
	}
}

// An interrupt after the first measurement stops the loop; what was
// measured is written and the manifest says the run was interrupted.
func TestInterruptKeepsPartialResults(t *testing.T) {
	sc, cells := benchScenario(t, "1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := &order{cancel: cancel}
	dir := filepath.Join(t.TempDir(), "out")
	out, err := Run(ctx, sc, cells, Options{Scenario: sc.Name, Dir: dir, Progress: o})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Interrupted || len(out.Cells) != 1 || len(o.starts) != 1 {
		t.Fatalf("interrupted %v, %d cells measured, starts %v; want the first cell only, interrupted", out.Interrupted, len(out.Cells), o.starts)
	}
	if r := readRun(t, filepath.Join(dir, "cells", cells[0].ID+".json")); r.Outcomes.Acquired == 0 {
		t.Errorf("the first cell's result holds no acquisitions")
	}
	if _, err := os.Stat(filepath.Join(dir, "cells", cells[1].ID+".json")); !os.IsNotExist(err) {
		t.Errorf("the second cell was written: %v", err)
	}
	var man results.Manifest
	b, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err := json.Unmarshal(b, &man); err != nil || !man.Interrupted || len(man.Cells) != 1 {
		t.Errorf("manifest %+v (%v): want 1 cell, interrupted", man, err)
	}
}

// A results directory that holds anything is refused before anything runs.
func TestNotEmptyDirRefused(t *testing.T) {
	sc, cells := benchScenario(t, "1")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o644)
	o := &order{}
	_, err := Run(context.Background(), sc, cells, Options{Dir: dir, Progress: o})
	if _, ok := err.(ErrDirNotEmpty); !ok || len(o.starts) > 0 {
		t.Fatalf("err %v, starts %v; want ErrDirNotEmpty and nothing run", err, o.starts)
	}
}

// A fault cell's verdict: only "met" passes; too little to judge is "not
// judged" whatever the figures; no expectations is "unchecked".
func TestCellVerdict(t *testing.T) {
	ex := func(m, cond string) plan.Expectation {
		e, err := plan.ParseExpectation(m, cond)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	cases := []struct {
		name        string
		expect      []plan.Expectation
		violations  int64
		notJudged   []string
		interrupted bool
		want        string
	}{
		{"met", []plan.Expectation{ex("violations", ">0")}, 3, nil, false, "met"},
		{"not met", []plan.Expectation{ex("violations", "0")}, 3, nil, false, "not met"},
		{"not judged", []plan.Expectation{ex("violations", "0")}, 0, []string{"0 acquisitions"}, false, "not judged"},
		{"unchecked", nil, 5, nil, false, "unchecked"},
		// No failover: its unavailability was not measured, never a pass
		// nor a failure.
		{"not measured", []plan.Expectation{ex("unavailable_s", "<5")}, 0, nil, false, "not judged"},
		{"interrupted", []plan.Expectation{ex("violations", "0")}, 0, []string{"0 acquisitions"}, true, "interrupted"},
	}
	for _, tc := range cases {
		r := &CellResult{}
		r.Run.Safety.Violations = tc.violations
		r.judge(plan.Cell{Expect: tc.expect}, tc.interrupted, tc.notJudged)
		if r.Verdict != tc.want || r.Run.Safety.Verdict != tc.want {
			t.Errorf("%s: verdict %q (safety %q), want %q", tc.name, r.Verdict, r.Run.Safety.Verdict, tc.want)
		}
		if tc.want == "not met" && len(r.Failed) != 1 {
			t.Errorf("%s: failed %v, want the unmet expectation", tc.name, r.Failed)
		}
	}
}

// Where the resource's counters and the history's judge disagree, the
// cell says so and is never green, whatever its expectations say.
func TestCheckersDisagree(t *testing.T) {
	key := uint64(3)
	lin := &results.Linearizability{Verdict: "linearizable", Operations: 10}
	notLin := &results.Linearizability{Verdict: "not linearizable", Key: &key, Operations: 10}
	unknown := &results.Linearizability{Verdict: "unknown", Operations: 10}
	for _, tc := range []struct {
		lin  *results.Linearizability
		lost int64
		want bool
	}{{lin, 0, false}, {lin, 4, true}, {notLin, 4, false}, {notLin, 0, true}, {unknown, 4, false}} {
		if got := disagreement(tc.lin, tc.lost) != ""; got != tc.want {
			t.Errorf("%s with %d lost updates: disagree %v, want %v", tc.lin.Verdict, tc.lost, got, tc.want)
		}
	}
	e, _ := plan.ParseExpectation("violations", "0")
	r := &CellResult{}
	r.Run.Safety.Disagreement = disagreement(lin, 4)
	r.judge(plan.Cell{Expect: []plan.Expectation{e}}, false, nil)
	if r.Verdict != "checkers disagree" || r.Disagree == "" {
		t.Errorf("verdict %q (%q), want checkers disagree", r.Verdict, r.Disagree)
	}
}
