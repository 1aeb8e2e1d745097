package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lockbench/results"
)

// The which-lock matrix tells a cell that judged nothing, a pair the
// design cannot take and a pair with no result apart from a safe cell and
// an unsafe one, and a need excludes a design with the measured reason.
// LOCKBENCH_WHICHLOCK_EXAMPLE_DIR keeps its pages (render-check.sh).
func TestWhichLockMatrix(t *testing.T) {
	p := &WhichLockPlan{Designs: []string{"single", "etcd-fencing"}, Faults: []string{"none", "crash", "leader-kill"},
		Unsupported: map[string]map[string]string{"single": {"leader-kill": "role: needs a cluster whose members have roles"}},
		Needs:       Needs{SafeUnder: []string{"crash"}}}
	checked := func(label string, lost int64, verdict, notJudged string) CellSummary {
		return CellSummary{Label: label, CyclesPerSec: 100, Acquire: results.Latency{P50: 90, P99: 900},
			Safety: results.Safety{ResourceChecked: true, LostUpdates: lost, Verdict: verdict, NotJudged: notJudged}}
	}
	cells := []CellSummary{checked("single.none", 0, results.Met, ""), checked("single.crash", 0, results.NotJudged, "3 acquisitions, fewer than min_acquisitions 10"),
		checked("etcd-fencing.none", 0, results.Met, ""), checked("etcd-fencing.crash", 3, results.NotMet, "")}
	loaded := make([]*cell, len(cells))
	for i := range loaded {
		cells[i].Index, loaded[i] = i, &cell{}
	}
	w := buildWhichLock(p, loaded, cells)
	want := [][]string{{"lost 0, viol 0", "not judged: too few locks", "not supported"}, {"lost 0, viol 0", "lost 3, viol 0; unsafe 1/1", "not measured"}}
	classes := [][]string{{"ok", "nj", "na"}, {"ok", "bad", "nj"}}
	for r, row := range w.Rows {
		for f, c := range row.Faults {
			if c.Text() != want[r][f] || c.Class() != classes[r][f] {
				t.Errorf("%s × %s: %q (%s); want %q (%s)", row.Design, p.Faults[f], c.Text(), c.Class(), want[r][f], classes[r][f])
			}
		}
	}
	if w.Rows[0].Meets || !strings.Contains(w.Rows[0].Excluded, "crash: not judged") {
		t.Errorf("single: meets %v, %q; want excluded: its crash cell judged nothing", w.Rows[0].Meets, w.Rows[0].Excluded)
	}
	if w.Rows[1].Meets || !strings.Contains(w.Rows[1].Excluded, "lost updates in 1 of 1 runs") {
		t.Errorf("etcd-fencing: meets %v, %q; want excluded by its lost updates", w.Rows[1].Meets, w.Rows[1].Excluded)
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
		if !strings.Contains(b.String(), "not judged") || !strings.Contains(b.String(), "not supported") {
			t.Errorf("%s does not show the cell that judged nothing and the unsupported pair", name)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
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
