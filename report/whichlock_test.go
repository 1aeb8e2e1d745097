package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lockbench/results"
)

// run is one repeat of a fault cell: its overlaps (as used and within the
// promise), lost updates and outage; verdict "" is judged.
type run struct {
	overlap, inPromise, lost int64
	down                     float64
	toEnd                    bool
	verdict                  string
	exercised                *int64
}

// matrixOf builds a matrix from cells given as their repeats, keyed by
// design.fault.
func matrixOf(p *WhichLockPlan, byCell map[string][]run) *WhichLock {
	var cells []CellSummary
	var loaded []*cell
	for _, d := range p.Designs {
		for _, f := range p.Faults {
			runs, ok := byCell[CellName(d, f)]
			if !ok {
				continue
			}
			r := results.Run{Safety: results.Safety{ResourceChecked: true}, Repeats: &results.Repeats{Count: len(runs)}}
			verdict := results.Met
			for i, x := range runs {
				ip := x.inPromise
				v := x.verdict
				if v == "" {
					v = results.Met
				} else {
					verdict = v
					r.Safety.NotJudged = fmt.Sprintf("repeat %d: the failover of m: no acquire won after it", i+1)
				}
				r.Repeats.Runs = append(r.Repeats.Runs, results.RepeatRun{Repeat: i + 1, Violations: x.overlap, ViolationsInPromise: &ip,
					LostUpdates: x.lost, UnavailableSeconds: x.down, UnavailableToEnd: x.toEnd, Verdict: v, ExercisedHolds: x.exercised})
			}
			r.Safety.Verdict = verdict
			cells = append(cells, CellSummary{Index: len(cells), Label: CellName(d, f), CyclesPerSec: 100, Acquire: results.Latency{P50: 90, P99: 900},
				Tally: results.Tally{Acquired: 10}, Safety: r.Safety})
			loaded = append(loaded, &cell{Run: r, Info: results.CellInfo{File: "cells/" + CellName(d, f) + ".json"}})
		}
	}
	return buildWhichLock(p, results.Manifest{}, loaded, cells)
}

// The which-lock matrix tells a cell that judged nothing, a pair the
// design has no part for, one lockbench cannot make yet and a pair with no
// result apart from a safe cell and an unsafe one; an outage to the end is
// measured; a need excludes a design with every measured reason.
// LOCKBENCH_WHICHLOCK_EXAMPLE_DIR keeps its pages (render-check.sh).
func TestWhichLockMatrix(t *testing.T) {
	p := &WhichLockPlan{Designs: []string{"single", "etcd-fencing", "replicated-wait2"}, Faults: []string{"none", "crash", "leader-kill", "pause-holder"},
		NotApplicable: map[string]map[string]string{"single": {"leader-kill": "one master, no replica: no leader to lose over"}},
		Unsupported:   map[string]map[string]string{"replicated-wait2": {"pause-holder": "a reason in words"}},
		Defined:       map[string]string{"crash": "kill -9 of the first server"},
		Needs:         Needs{Under: []Need{{NoLostUpdate, "crash", 0}, {NoOverlap, "pause-holder", 0}}}}
	quiet := []run{{}, {}, {}}
	w := matrixOf(p, map[string][]run{
		"single.none": quiet, "single.crash": {{verdict: results.NotJudged}}, "single.pause-holder": {{overlap: 4, lost: 2}, {overlap: 7, lost: 3}, {overlap: 5, lost: 0}},
		"etcd-fencing.none": quiet, "etcd-fencing.crash": {{lost: 3, overlap: 1, inPromise: 1, down: 1.2}, {down: 0.9}, {down: 1}},
		"etcd-fencing.leader-kill": {{down: 1.1}, {down: 1.3}, {down: 1.2}}, "etcd-fencing.pause-holder": {{overlap: 9}, {overlap: 11}, {overlap: 14}},
		"replicated-wait2.none": quiet, "replicated-wait2.crash": quiet,
		"replicated-wait2.leader-kill": {{down: 5.2, toEnd: true, verdict: results.NotJudged}, {down: 5.3, toEnd: true, verdict: results.NotJudged}},
	})
	q3 := "overlap 0 of 3: ≤ 63% · lost 0 of 3: ≤ 63%"
	want := [][]string{
		{q3, "not judged: no lock won after the failover", "not applicable", "overlap 3 of 3: ≥ 37%; 5 (4–7) · in promise 0 of 3: ≤ 63% · lost 2 of 3: 9.4%–99%; 2 (0–3)"},
		{q3, "overlap 1 of 3: 0.8%–91%; 0 (0–1) · lost 1 of 3: 0.8%–91%; 0 (0–3) · down 1.00 s (0.90–1.20)", q3 + " · down 1.20 s (1.10–1.30)", "overlap 3 of 3: ≥ 37%; 11 (9–14) · in promise 0 of 3: ≤ 63% · lost 0 of 3: ≤ 63%"},
		{q3, q3, "safety not judged · never granted again after the fault (the cell ended 5.20–5.30 s later)", "not supported yet"},
	}
	// Nothing broke in 3 runs: not settled (pale), never safe (green).
	classes := [][]string{{"us", "nj", "na", "bad"}, {"us", "bad", "us", "warn"}, {"us", "us", "down", "ns"}}
	for r, row := range w.Rows {
		for f, c := range row.Faults {
			if c.Text() != want[r][f] || c.Class() != classes[r][f] {
				t.Errorf("%s × %s: %q (%s); want %q (%s)", row.Design, p.Faults[f], c.Text(), c.Class(), want[r][f], classes[r][f])
			}
		}
	}
	reasons := func(r MatrixRow) string { return strings.Join(r.Reasons, "; ") }
	if r := w.Rows[0]; r.Meets || !strings.Contains(reasons(r), "no lost update under crash: not judged") || !strings.Contains(reasons(r), "no overlap under pause-holder: exclusion broken in 3 of 3 runs") {
		t.Errorf("single: meets %v, %q; want excluded for both needs: its crash cell judged nothing, its pause cell overlapped", r.Meets, reasons(r))
	}
	if r := w.Rows[1]; r.Meets || len(r.Reasons) != 2 || !strings.Contains(reasons(r), "updates lost in 1 of 3 runs") {
		t.Errorf("etcd-fencing: meets %v, %q; want excluded by its lost updates and its overlaps", r.Meets, reasons(r))
	}
	if r := w.Rows[2]; r.Survived != 1 || r.Judged != 1 {
		t.Errorf("replicated-wait2: survived %d of %d faults judged; want 1 of 1 (the outage judged no safety)", r.Survived, r.Judged)
	}
	// Each cell states the holds its faults exercised, over its runs.
	ex := func(n int64) *int64 { return &n }
	counted := matrixOf(&WhichLockPlan{Designs: []string{"etcd"}, Faults: []string{"crash"}},
		map[string][]run{"etcd.crash": {{exercised: ex(2)}, {exercised: ex(3)}, {exercised: ex(4)}}})
	if got := counted.Rows[0].Faults[0].Text(); !strings.HasSuffix(got, " · exercised 3 (2–4)") {
		t.Errorf("a cell's exercised holds: %q; want them stated", got)
	}
	// 14 quiet runs settle it at the default 20%: green, and a need on it met.
	settled := matrixOf(&WhichLockPlan{Designs: []string{"etcd"}, Faults: []string{"crash"}, Needs: Needs{Under: []Need{{NoOverlap, "crash", 0}}}},
		map[string][]run{"etcd.crash": make([]run, 14)})
	if c := settled.Rows[0].Faults[0]; c.Class() != "ok" || !settled.Rows[0].Meets || c.Overlap.Settled != "clean" {
		t.Errorf("0 of 14: %q (%s), meets %v %q; want safe, settled, the need met", c.Text(), c.Class(), settled.Rows[0].Meets, settled.Rows[0].Reasons)
	}
	if r := w.Rows[2]; len(r.Reasons) != 2 || !strings.Contains(r.Reasons[0], "no lost update under crash: not settled: updates lost in 0 of 3 runs, which bounds its rate only at 63%, above the max rate 20% (0 of 14 would settle it)") {
		t.Errorf("replicated-wait2: %q; want excluded as not settled, with its bound", r.Reasons)
	}
	up := Needs{Under: []Need{{"up-in", "leader-kill", 2 * time.Second}}}
	if got := up.judge(w.Rows[1], p.Faults); len(got) != 0 {
		t.Errorf("etcd-fencing, up within 2s after leader-kill: %q; want met (1.30 s at most)", got)
	}
	if got := up.judge(w.Rows[2], p.Faults); len(got) != 1 || !strings.Contains(got[0], "never granted again after the fault (the cell ended 5.20–5.30 s later)") {
		t.Errorf("replicated-wait2, up within 2s after leader-kill: %q; want refused: nothing granted to the end", got)
	}
	dir := os.Getenv("LOCKBENCH_WHICHLOCK_EXAMPLE_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	for name, write := range map[string]func(*strings.Builder) error{
		"which-lock.md": func(b *strings.Builder) error { return w.writeMarkdown(b) }, "which-lock.html": func(b *strings.Builder) error { return w.writeHTML(b) }} {
		var b strings.Builder
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"not judged", "not supported yet", "not applicable", "one master, no replica", "kill -9 of the first server", "exclusion broken"} {
			if !strings.Contains(b.String(), s) {
				t.Errorf("%s does not say %q", name, s)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.writePicture(dir); err != nil {
		t.Fatal(err)
	}
}

// Needs read as the flag says them, and bad ones are refused naming what
// is accepted.
func TestParseNeeds(t *testing.T) {
	faults := []string{"none", "crash", "leader-kill"}
	n, err := ParseNeeds([]string{"fencing", "leader-kill", "no-overlap:crash", "up-in-5s:leader-kill"}, 10*time.Millisecond, faults)
	if err != nil {
		t.Fatal(err)
	}
	if got := n.String(); got != "a fencing token or guarded write, no lost update under leader-kill, no overlap under crash, available again within 5s after leader-kill, acquire p99 ≤ 10ms" {
		t.Errorf("needs in words: %q", got)
	}
	for _, bad := range []string{"none", "no-overlap:partition", "up-in-x:crash", "safe:crash"} {
		if _, err := ParseNeeds([]string{bad}, 0, faults); err == nil || !strings.Contains(err.Error(), "need: ") {
			t.Errorf("need %q: %v; want refused naming the field", bad, err)
		}
	}
}

// A not-judged cell says in a few words what its repeats' reasons come to
// (a replicated set's WAIT 2 that granted nothing after the failover is
// not a cell that saw too little), and in how many runs when not in all.
func TestShortWhy(t *testing.T) {
	failover := func(k int) string {
		return fmt.Sprintf("repeat %d: no granted lock was still valid at the failover of master (127.0.0.1:1%d): nothing for it to lose; the failover of master (127.0.0.1:1%d): no acquire won after it", k, k, k)
	}
	for _, c := range []struct {
		why     string
		repeats int
		want    string
	}{
		{failover(1) + "; " + failover(2) + "; " + failover(3), 3, "no lock won after the failover"},
		{"repeat 1: no granted lock was still valid at the failover of master (127.0.0.1:9): nothing for it to lose", 1, "no lock held at the failover"},
		{"repeat 2: 7 acknowledged writes, fewer than min_acquisitions 10", 3, "too few writes acknowledged in 1 of 3 runs"},
		{"3 acquisitions, fewer than min_acquisitions 10", 1, "too few locks"},
		{"the checker saw 9 holds for 10 acquisitions", 1, ""},
		// the reason most repeats give, not the first in the table
		{"repeat 1: 3 acquisitions, fewer than min_acquisitions 10; repeat 2: the failover of m: no acquire won after it; repeat 3: 4 acquisitions, fewer than min_acquisitions 10", 3, "too few locks in 2 of 3 runs"},
	} {
		if got := shortWhy(c.why, c.repeats); got != c.want {
			t.Errorf("shortWhy(%q, %d) = %q, want %q", c.why, c.repeats, got, c.want)
		}
	}
}

// A reversal is one run's settled-clean outcome (0 of 14: ≤ 19%, within
// the 20% max rate) whose interval in the other run lies wholly above the
// max rate (9 of 14: 35–87%). A verdict settled in one run and unsettled in
// the other (0 of 14, then 0 of 3) is none, nor is 1 of 14 beside 0 of 14
// (chance gives that), nor 3 of 3 beside 0 of 3 (neither settled clean).
func TestAgreeMatrices(t *testing.T) {
	p := &WhichLockPlan{Designs: []string{"a"}, Faults: []string{"none", "crash"}}
	runs := func(n, broken int) map[string][]run {
		rs := make([]run, n)
		for i := range broken {
			rs[i] = run{overlap: 1, lost: 1}
		}
		return map[string][]run{"a.crash": rs}
	}
	for _, c := range []struct {
		name              string
		a, b              map[string][]run
		reversed, settled int
		differ            int
		says              string
	}{
		{"settled, then unsettled", runs(14, 0), runs(3, 0), 0, 2, 0, "which-lock: no reversal in 2 outcomes measured in both runs (2 settled clean in one of them at the max rate 20%)"},
		{"a rare event once", runs(14, 0), runs(14, 1), 0, 2, 2, "differs  a × crash: data lost 0 of 14: ≤ 19%, then 1 of 14: 0.2%–34%"},
		{"neither settled", runs(3, 3), runs(3, 0), 0, 0, 2, "no reversal in 2 outcomes"},
		{"reversed", runs(14, 0), runs(14, 9), 2, 2, 0, "REVERSED a × crash: data lost 0 of 14: ≤ 19%, then 9 of 14: 35%–87% (settled clean at 20% in the first run; the second's interval lies wholly above it)"},
		{"reversed the other way", runs(14, 9), runs(14, 0), 2, 2, 0, "(settled clean at 20% in the second run; the first's interval lies wholly above it)"},
	} {
		m := AgreeMatrices(matrixOf(p, c.a), matrixOf(p, c.b))
		var out strings.Builder
		if err := m.Write(&out); err != nil {
			t.Fatal(err)
		}
		if len(m.Reversed) != c.reversed || m.Settled != c.settled || len(m.Differ) != c.differ || m.Compared != 2 || !strings.Contains(out.String(), c.says) {
			t.Errorf("%s: %+v; want %d reversed, %d settled, %d differ of 2 compared, saying %q:\n%s", c.name, m, c.reversed, c.settled, c.differ, c.says, out.String())
		}
	}
}

// A capacity is the best step within the SLO, a lower bound when no
// heavier step broke it, limited by what stopped the next step; a hot
// key's time to lock is read against (workers − 1) × its period.
func TestCapacityAndHotKey(t *testing.T) {
	step := func(name string, workers int, cps, p99 float64, by string) (CellSummary, *cell) {
		return CellSummary{Label: name, Workers: workers, CyclesPerSec: cps, Acquire: results.Latency{P99: p99}, SuccessRatio: 1,
			Tally: results.Tally{Acquired: 100}, Limit: &results.Limit{By: by}}, &cell{Info: results.CellInfo{File: name + ".json"}}
	}
	cells := map[string][2]any{}
	add := func(name string, workers int, cps, p99 float64, by string) {
		c, l := step(name, workers, cps, p99, by)
		cells[name] = [2]any{c, l}
	}
	find := func(n string) (CellSummary, *cell, bool) {
		x, ok := cells[n]
		if !ok {
			return CellSummary{}, nil, false
		}
		return x[0].(CellSummary), x[1].(*cell), true
	}
	add("a1", 1, 1000, 2000, "latency")
	add("a4", 4, 3500, 6000, "latency")
	add("a16", 16, 5000, 25000, "server")
	add("b1", 1, 100, 12000, "server")
	add("c1", 1, 9000, 500, "latency")
	add("c4", 4, 30000, 900, "machine")
	slo := 10 * time.Millisecond
	if cp := capacityOf([]string{"a1", "a4", "a16"}, slo, find); cp.CyclesPerSec != 3500 || cp.LowerBound || cp.Limiter != "server" {
		t.Errorf("a: %+v; want 3500 cycles/s at 4 workers, the next step limited by the server", cp)
	}
	if cp := capacityOf([]string{"b1"}, slo, find); cp.CyclesPerSec != 0 || cp.LightestP99 != 12000 {
		t.Errorf("b: %+v; want none within the SLO, 12 ms at its lightest", cp)
	}
	if cp := capacityOf([]string{"c1", "c4"}, slo, find); cp.CyclesPerSec != 30000 || !cp.LowerBound {
		t.Errorf("c: %+v; want a lower bound of 30000 (no step broke the SLO)", cp)
	}
	r := MatrixRow{Capacity: capacityOf([]string{"c1", "c4"}, slo, find)}
	if got := r.CapacityText(); got != "≥ 30000, machine" {
		t.Errorf("capacity text %q", got)
	}
}
