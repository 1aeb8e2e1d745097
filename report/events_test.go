package report

import (
	"strings"
	"testing"

	"lockbench/results"
)

// eventRuns are runs of a fault cell judged by event: per run, each
// event's violations (-1: an event that met no holder, not judged).
func eventRuns(perRun ...[]int64) []results.RepeatRun {
	var out []results.RepeatRun
	for _, evs := range perRun {
		r := results.RepeatRun{Verdict: "met"}
		for _, v := range evs {
			e := results.FaultEvent{Judged: v >= 0, Exercised: 1}
			if v > 0 {
				e.Violations, e.DataLost = v, v
				r.Violations += v
			}
			r.FaultEvents = append(r.FaultEvents, e)
		}
		out = append(out, r)
	}
	return out
}

// Each judged event is one trial: 14 clean events of 3 runs settle clean
// at 20% (0 of 14: ≤ 19%) where 3 runs alone would not (≤ 63%); an event
// that met no holder does not count; one broken event settles it broken.
func TestOutcomesCountJudgedEvents(t *testing.T) {
	clean := eventRuns([]int64{0, 0, 0, 0, 0}, []int64{0, 0, 0, 0, 0}, []int64{0, 0, 0, 0, -1, -1})
	ov, lo, _, _ := outcomes(clean)
	if ov.Runs != 14 || ov.Broken != 0 || ov.Unit != "events" || lo.Runs != 14 {
		t.Fatalf("overlap %+v, lost %+v; want 0 of 14 events", ov, lo)
	}
	if got := ov.text("overlap"); got != "overlap 0 of 14 events: ≤ 19%" {
		t.Errorf("text %q", got)
	}
	if s, judged := Settles(clean, DefaultMaxRate); !s || !judged {
		t.Errorf("14 clean events: settled %v judged %v; want settled", s, judged)
	}
	if s, _ := Settles(clean[:2], DefaultMaxRate); s {
		t.Errorf("10 clean events settled at 20%% (0 of 10 bounds it only at 26%%)")
	}
	broken := eventRuns([]int64{0, 3, 0, 0, 0})
	ov, _, _, _ = outcomes(broken)
	if ov.Broken != 1 || ov.Runs != 5 || !strings.HasPrefix(ov.text("overlap"), "overlap 1 of 5 events: ") {
		t.Errorf("broken: %+v %q", ov, ov.text("overlap"))
	}
	if s, _ := Settles(broken, DefaultMaxRate); !s {
		t.Errorf("a broken event did not settle the cell broken")
	}
	old := []results.RepeatRun{{Verdict: "met"}, {Verdict: "met", Violations: 2}} // results before events: by run
	if ov, _, _, _ = outcomes(old); ov.Runs != 2 || ov.Broken != 1 || ov.Unit != "" || !strings.Contains(ov.text("overlap"), "1 of 2: ") {
		t.Errorf("old runs: %+v %q", ov, ov.text("overlap"))
	}
	// A run that exercised no hold yet lost data (a replica promoted
	// without the writes acknowledged before): broken, never hidden.
	nx := []results.RepeatRun{{Verdict: results.NotExercised, Violations: 3, LostUpdates: 3}, {Verdict: results.NotExercised}}
	if ov, lo, _, _ = outcomes(nx); ov == nil || ov.Broken != 1 || ov.Runs != 1 || lo.Broken != 1 {
		t.Errorf("a not-exercised run that lost data: overlap %+v lost %+v; want 1 of 1 broken", ov, lo)
	}
	none := eventRuns([]int64{-1, -1})
	if _, judged := Settles(none, DefaultMaxRate); judged {
		t.Errorf("a run whose events met no holder judged something")
	}
}
