package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lockbench/internal/cli"
	"lockbench/internal/redistest"
	"lockbench/plan"
	"lockbench/report"
	"lockbench/whichlock"
)

// lockbench choose crosses designs and faults on the same work: a pair a
// design has no part for is marked not applicable, in words, every fault
// cell's events are judged apart (the quiet cell's runs), and the matrix
// names a need's winners.
func TestChooseWritesTheMatrix(t *testing.T) {
	redistest.Require(t)
	out := filepath.Join(t.TempDir(), "which")
	_, stderr, code := lockbench(t, "choose", "--design", "single", "--fault", "none", "--fault", "pause-holder", "--fault", "leader-kill",
		"--repeat", "2", "--events", "2", "--duration", "3s", "--need", "pause-holder", "--out", out)
	if code != 0 && code != cli.Threshold {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	md, err := os.ReadFile(filepath.Join(out, "which-lock.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := ""
	for _, l := range strings.Split(string(md), "\n") {
		if strings.HasPrefix(l, "| single |") {
			row = l
		}
	}
	switch {
	case row == "":
		t.Fatalf("no row for the design:\n%s", md)
	case !strings.Contains(row, "not applicable"):
		t.Errorf("single × leader-kill is not marked not applicable: %s", row)
	case strings.Count(row, " of 2: ") < 2:
		t.Errorf("the quiet cell does not say in how many of its 2 runs each outcome broke: %s", row)
	case strings.Count(row, " events: ") < 2:
		t.Errorf("the fault cell does not say in how many of its events each outcome broke: %s", row)
	case !strings.Contains(string(md), "single × leader-kill (not applicable): one master, no replica"):
		t.Errorf("no reason in words for the pair not applicable:\n%s", md)
	case !strings.Contains(string(md), "## Your needs: no lost update under pause-holder"):
		t.Errorf("the needs are not judged:\n%s", md)
	}
	// The price is the price cells', the lock alone: a capacity of
	// thousands of cycles/s on one master (where the quiet cell's 200 ms
	// holds on 8 keys give tens), and a hot key's time to lock beside its
	// FIFO ideal. Three digits, not four: a hundred already tells the
	// sweep's figure from the quiet cell's tens, and a loaded machine
	// lowers the sweep's.
	if f := strings.Split(row, "|"); len(f) < 6 || len(strings.Trim(strings.TrimSpace(f[2]), "≥ ")) < 3 || !strings.Contains(f[5], "× FIFO") {
		t.Errorf("single's capacity is not its sweep's (want ≥ 100 cycles/s), or no hot key's time to lock: %s", row)
	}
	if !strings.Contains(string(md), "capacity, the highest cycles/s whose acquire p99 stayed within") {
		t.Errorf("the page does not say where its price comes from:\n%s", md)
	}
	wantPriced(t, out)
	if _, stderr, code := lockbench(t, "choose", "--design", "nope", "--dry-run"); code != 2 || !strings.Contains(stderr, `design: "nope" is not a design`) {
		t.Errorf("a bad design: exit %d, %q; want 2 naming the field", code, stderr)
	}
}

// Every pair of the shipped matrix that runs no cell says why in words:
// none falls back to the settings check's reason.
func TestMatrixAbsencesInWords(t *testing.T) {
	_, _, wl, err := whichlock.Build(whichlock.Ask{Repeat: 1, Duration: whichlock.QuickDuration})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range []map[string]map[string]string{wl.NotApplicable, wl.Unsupported} {
		for d, byFault := range m {
			for f, why := range byFault {
				n++
				if strings.Contains(why, "settings check") || strings.Contains(why, "faults[") {
					t.Errorf("%s × %s: %q is the settings check's reason, not words", d, f, why)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no pair without a cell: the check judged nothing")
	}
}

// wantPriced: one design's price cells fill every price column of
// the matrix (capacity from each sweep step with its limiter, the common
// rate's p99, the hot key beside its FIFO ideal with its wait strategy),
// bounding no figure. (It shares TestChooseWritesTheMatrix's run: a run
// of its own cost CI 40 s.)
func wantPriced(t *testing.T, out string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, report.WhichLockMatrixFile))
	if err != nil {
		t.Fatal(err)
	}
	var m report.WhichLock
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Rows) != 1 {
		t.Fatalf("%d rows; want single's alone", len(m.Rows))
	}
	r := m.Rows[0]
	switch cp, h := r.Capacity, r.Hot; {
	case cp == nil || cp.Steps != len(plan.LadderSteps):
		t.Errorf("single's capacity is not from its %d sweep steps: %+v", len(plan.LadderSteps), cp)
	case cp.CyclesPerSec > 0 && (cp.Limiter == "" || cp.Result == ""):
		t.Errorf("a capacity with no limiter or no cell: %+v", cp)
	case !r.Priced || r.P99 <= 0:
		t.Errorf("no acquire p99 at the common rate: %+v", r)
	case h == nil || h.FIFOIdeal <= 0 || h.Ratio <= 0 || h.Strategy != "retry":
		t.Errorf("no hot key beside its FIFO ideal, or not single's retry: %+v", h)
	}
	md, err := os.ReadFile(filepath.Join(out, "which-lock.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(md), "\n") {
		if strings.HasPrefix(l, "| single |") && (strings.Count(l, "—") > 0 || !strings.Contains(l, "× FIFO, retry")) {
			t.Errorf("single's row leaves a price figure unmeasured: %s", l)
		}
	}
}
