package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lockbench/internal/redistest"
	"lockbench/results"
)

// The overloaded open loop, as a new user runs it: it must show
// what was offered and served and say loudly that the lock could not keep
// up (before: 0 cycles/s, offered 0, exit 0 and no warning).
func TestRunOpenLoopOverloadedSaysSo(t *testing.T) {
	redistest.Require(t)
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, code := lockbench(t, "run", "--local", "1", "--load", "open", "--rate", "5000", "--workers", "4",
		"--hold", "5ms", "--duration", "1s", "--warmup", "300ms", "--json-out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := readRun(t, out)
	ol := r.OpenLoop
	// 50 served: a sample, a sixteenth of what 4 workers holding 5 ms
	// can serve; load only deepens the overload.
	if ol == nil || ol.Offered != 5000 || ol.Served < 50 || ol.Unserved != ol.Offered-ol.Served || !ol.Overloaded {
		t.Fatalf("open_loop %+v; want 5000 offered, some served, unserved = offered − served, overloaded", ol)
	}
	for _, want := range []string{"open loop: offered 5000/s (5000 starts)", "OVERLOADED", "safety: 0 violations in "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "WARNING: open loop OVERLOADED") {
		t.Errorf("stderr lacks the overload warning:\n%s", stderr)
	}
}

// With hold 0 (the default) the probe has no critical section to judge: it
// says so instead of printing a green 0. (--out, run's old name for
// --json-out, still writes the file, with a one-line note.)
func TestRunSafetyNotJudgedWithHoldZero(t *testing.T) {
	redistest.Require(t)
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, code := lockbench(t, "run", "--local", "3", "--workers", "4", "--duration", "500ms", "--warmup", "100ms", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "use --json-out FILE") {
		t.Errorf("run --out: no note of its new name on stderr:\n%s", stderr)
	}
	if !strings.Contains(stdout, "safety: not judged (hold 0)") || strings.Contains(stdout, "0 violations") {
		t.Fatalf("stdout must say the probe judged nothing:\n%s", stdout)
	}
	if sf := readRun(t, out).Safety; sf.JudgedHolds != 0 || sf.NotJudged != "hold 0" {
		t.Fatalf("safety %+v; want judged_holds 0, not_judged \"hold 0\"", sf)
	}
}

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
