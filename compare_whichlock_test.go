package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lockbench/report"
)

// matrixRun writes a which-lock run's matrix with one design under one
// fault whose data was lost in broken of n runs.
func matrixRun(t *testing.T, broken, n int) string {
	t.Helper()
	o := &report.Outcome{Broken: broken, Runs: n}
	w := report.WhichLock{Faults: []string{"crash"}, MaxRate: report.DefaultMaxRate,
		Rows: []report.MatrixRow{{Design: "a", Faults: []report.MatrixCell{{State: "measured", Overlap: o, Lost: o}}}}}
	dir := t.TempDir()
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, report.WhichLockMatrixFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// compare of two which-lock runs: a verdict settled clean in one run (0 of
// 14) and unsettled in the other (0 of 3) is no reversal; 0 of 14 beside 9
// of 14 is, and exits 3 only under --fail-on reversal, which exits 1 when
// no outcome is settled clean in either run (it judged nothing). A
// figure's --fail-on does not apply to which-lock runs, nor reversal to
// others.
func TestCompareWhichLockReversal(t *testing.T) {
	settled, unsettled, broken := matrixRun(t, 0, 14), matrixRun(t, 0, 3), matrixRun(t, 9, 14)
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{settled, unsettled, "--fail-on", "reversal"}, 0, "no reversal in 2 outcomes measured in both runs"},
		{[]string{settled, broken}, 0, "2 reversed in 2 outcomes"},
		{[]string{settled, broken, "--fail-on", "reversal"}, 3, "REVERSED a × crash: data lost 0 of 14"},
		{[]string{settled, broken, "--fail-on", "cycles_per_sec<-5%"}, 2, ""},
		{[]string{unsettled, unsettled}, 0, "no reversal in 2 outcomes measured in both runs (0 settled clean"},
		{[]string{unsettled, unsettled, "--fail-on", "reversal"}, 1, "(0 settled clean"},
		{[]string{t.TempDir(), t.TempDir(), "--fail-on", "reversal"}, 2, ""},
	} {
		stdout, stderr, code := lockbench(t, append([]string{"compare"}, c.args...)...)
		if code != c.code || !strings.Contains(stdout, c.says) {
			t.Errorf("compare %v: exit %d, want %d; stdout %q (want %q); stderr %q", c.args[2:], code, c.code, stdout, c.says, stderr)
		}
		if c.code == 2 && !strings.Contains(stderr, "--fail-on") {
			t.Errorf("compare %v: bad input not named: %q", c.args[2:], stderr)
		}
	}
}
