package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"lockbench/internal/redistest"
	"lockbench/report"
	"lockbench/results"
)

func TestRunRepeatJSON(t *testing.T) {
	redistest.Require(t)
	stdout, stderr, code := lockbench(t, "run", "--local", "3", "--duration", "1s", "--warmup", "200ms", "--workers", "4", "--keys", "1000", "--repeat", "3", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r results.Run
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	if r.Repeats == nil || r.Repeats.Count != 3 || len(r.Repeats.Runs) != 3 {
		t.Fatalf("repeats block: %+v", r.Repeats)
	}
	sp := r.Repeats.Spread["cycles_per_sec"]
	if sp.N != 3 || r.Throughput.CyclesPerSec != sp.Median || sp.Min > sp.Median || sp.Max < sp.Median {
		t.Errorf("headline %v is not the median of %+v", r.Throughput.CyclesPerSec, sp)
	}
	var sum int64
	for _, rr := range r.Repeats.Runs {
		sum += rr.Acquired
	}
	if sum != r.Outcomes.Acquired || sum == 0 {
		t.Errorf("acquired %d, repeats add to %d", r.Outcomes.Acquired, sum)
	}
	// Without persistence the masters are kept between repeats.
	if n := strings.Count(stderr, "localmasters: started"); n != 1 {
		t.Errorf("masters started %d times, want once:\n%s", n, stderr)
	}
	if _, stderr, code := lockbench(t, "run", "--repeat", "0"); code != 2 || !strings.Contains(stderr, "repeat: 0 is not accepted") {
		t.Errorf("--repeat 0: exit %d: %s", code, stderr)
	}
}

// Repeats are interleaved, AOF masters are fresh for every repeat, and
// the cell's interval logs hold every repeat's intervals.
func TestSweepRepeatInterleavedFreshAOF(t *testing.T) {
	redistest.Require(t)
	dir := t.TempDir()
	cfg := writeFile(t, dir, "r.yaml", "name: r\nsettings:\n  local: 3\n  warmup: 200ms\n  duration: 1s\n  workers: 4\n  keys: 1000\n  persistence: aof-everysec\nmatrix:\n  mode: [sequential, multiplexed]\n")
	out := filepath.Join(dir, "out")
	_, stderr, code := lockbench(t, "sweep", "-f", cfg, "--repeat", "2", "--out", out, "--no-report")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	order := regexpAll(stderr, `cell (\d)/2 \(repeat (\d)/2\) mode=\w+: warm-up`)
	if strings.Join(order, " ") != "1,1 2,1 1,2 2,2" {
		t.Errorf("order of cells and repeats %v, want interleaved", order)
	}
	// Both modes share one master set, whose AOF files grow: round 2 starts
	// a fresh set, so every repeat of each cell meets the same master state
	// as its first (sequential on new masters, multiplexed after it).
	if n := strings.Count(stderr, "localmasters: started"); n != 2 {
		t.Errorf("masters started %d times, want 2:\n%s", n, stderr)
	}
	var r results.Run
	b, err := os.ReadFile(filepath.Join(out, "cells", "000-mode=sequential.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if r.Repeats == nil || r.Repeats.Count != 2 || !r.Repeats.FreshMasters {
		t.Fatalf("repeats %+v", r.Repeats)
	}
	var parts int
	for rep := 1; rep <= 2; rep++ {
		parts += intervals(t, filepath.Join(out, "cells", "repeats", "000-mode=sequential.r"+string(rune('0'+rep))+".acquire.hlog"))
	}
	if all := intervals(t, filepath.Join(out, "cells", "000-mode=sequential.acquire.hlog")); all != parts || all < 2 {
		t.Errorf("combined log has %d intervals, repeats %d", all, parts)
	}
}

func intervals(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	hs, err := results.ReadIntervalLog(f)
	if err != nil {
		t.Fatal(err)
	}
	return len(hs)
}

// regexpAll lists the submatches of every match, joined by commas.
func regexpAll(s, expr string) []string {
	var out []string
	for _, m := range regexp.MustCompile(expr).FindAllStringSubmatch(s, -1) {
		out = append(out, strings.Join(m[1:], ","))
	}
	return out
}

// The done-when: one cell swept twice with 5 repeats shows no
// throughput difference (~); 1 vs 64 workers matched with --ignore
// workers does, and --fail-on turns it into exit 3.
func TestCompareRealSweeps(t *testing.T) {
	redistest.Require(t)
	dir := t.TempDir()
	sweep := func(name string, workers string) string {
		cfg := writeFile(t, dir, name+".yaml", "name: "+name+"\nsettings:\n  local: 3\n  warmup: 100ms\n  duration: 500ms\n  keys: 1000\n  workers: "+workers+"\nrepeat: 5\n")
		out := filepath.Join(dir, name)
		if _, stderr, code := lockbench(t, "sweep", "-f", cfg, "--out", out, "--no-report"); code != 0 {
			t.Fatalf("sweep %s: exit %d: %s", name, code, stderr)
		}
		return out
	}
	a, b, c := sweep("a", "1"), sweep("b", "1"), sweep("c", "64")
	stdout, stderr, code := lockbench(t, "compare", a, b, "--format", "json")
	if code != 0 {
		t.Fatalf("compare a b: exit %d: %s", code, stderr)
	}
	var same report.Comparison
	if err := json.Unmarshal([]byte(stdout), &same); err != nil {
		t.Fatal(err)
	}
	if same.Matched != 1 || len(same.Rows) == 0 || same.Rows[0].Figure != "cycles_per_sec" || same.Rows[0].Old.N != 5 || same.Rows[0].New.N != 5 {
		t.Fatalf("same cell: %+v", same)
	}
	// Two sweeps one after another on a shared machine may drift; the
	// verdict is logged, the statistics are checked on synthetic data.
	t.Logf("same cell, two sweeps: cycles/s %+.1f%% %s (p=%.3f)", same.Rows[0].Delta, same.Rows[0].Verdict, same.Rows[0].P)
	if same.Rows[0].Verdict == "too few repeats" {
		t.Error("5 vs 5 repeats can show a difference")
	}

	if _, stderr, code := lockbench(t, "compare", a, c); code != 1 || !strings.Contains(stderr, "--ignore") {
		t.Errorf("1 vs 64 workers without --ignore: exit %d: %s", code, stderr)
	}
	// a and c ran one after the other; 64 workers against 1 is many times
	// the throughput, more than a load changing between them can undo.
	stdout, stderr, code = lockbench(t, "compare", a, c, "--ignore", "workers", "--fail-on", "cycles_per_sec<-5%")
	if code != 0 {
		t.Fatalf("1 → 64 workers is no regression: exit %d: %s\n%s", code, stderr, stdout)
	}
	if !regexp.MustCompile(`cycles/s\s.*\+\d+\.\d%`).MatchString(stdout) || !strings.Contains(stdout, "workers 1 → 64") {
		t.Errorf("1 → 64 workers: throughput change not significant:\n%s", stdout)
	}
	_, stderr, code = lockbench(t, "compare", c, a, "--ignore", "workers", "--fail-on", "cycles_per_sec<-5%")
	if code != 3 || !strings.Contains(stderr, "regression") {
		t.Errorf("64 → 1 workers with --fail-on: exit %d, want 3: %s", code, stderr)
	}
}

// An interrupt in a later round keeps every finished repeat: each cell's
// file combines the repeats it has, the one cut short marked and left out
// of the spread.
func TestSweepRepeatInterruptKeepsRepeats(t *testing.T) {
	redistest.Require(t)
	dir := filepath.Join(t.TempDir(), "res")
	sw := writeFile(t, t.TempDir(), "s.yaml", "settings:\n  local: 3\n  workers: 4\n  keys: 1000\n  warmup: 0s\n  duration: 4s\nmatrix:\n  mode: [sequential, multiplexed]\nrepeat: 4\n")
	cmd := exec.Command(binary, "sweep", "-f", sw, "--out", dir, "--no-report")
	var e lockedBuffer
	cmd.Stderr = &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) && !strings.Contains(e.String(), "cell 1/2 (repeat 3/4) mode=sequential: warm-up") {
		time.Sleep(50 * time.Millisecond)
	}
	// Past the baseline, into the measured 4 s: the repeat's acquire log
	// holds a first interval (not a fixed time after the line above).
	waitMeasuring(t, dir, "000-", time.Until(deadline))
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("want exit 130, got %v; %s", err, e.String())
	}
	var first, second results.Run
	for id, r := range map[string]*results.Run{"000-mode=sequential": &first, "001-mode=multiplexed": &second} {
		b, err := os.ReadFile(filepath.Join(dir, "cells", id+".json"))
		if err != nil || json.Unmarshal(b, r) != nil || r.Repeats == nil {
			t.Fatalf("%s: %v %+v", id, err, r.Repeats)
		}
	}
	if first.Repeats.Count != 3 || !first.Repeats.Runs[2].Interrupted || !first.Interrupted || first.Repeats.Spread["cycles_per_sec"].N != 2 {
		t.Errorf("cell cut short in repeat 3: %d repeats, last interrupted %v, spread over %d", first.Repeats.Count, first.Repeats.Runs[2].Interrupted, first.Repeats.Spread["cycles_per_sec"].N)
	}
	if second.Repeats.Count != 2 || second.Interrupted {
		t.Errorf("cell not reached in round 3: %d repeats, interrupted %v", second.Repeats.Count, second.Interrupted)
	}
	for _, pat := range []string{"cells/.*", "cells/repeats/.*"} {
		if tmp, _ := filepath.Glob(filepath.Join(dir, pat)); len(tmp) > 0 {
			t.Errorf("temp files left: %v", tmp)
		}
	}
}

// waitMeasuring waits until the acquire log of the cell whose file stem
// starts with prefix, a temp file under dir/cells until the measurement is
// kept, has grown past its header by a first one-second interval: the
// cell is inside its measured window. It fails the test after limit.
func waitMeasuring(t *testing.T, dir, prefix string, limit time.Duration) {
	t.Helper()
	header := int64(-1)
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		size := int64(-1)
		_ = filepath.WalkDir(filepath.Join(dir, "cells"), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if name := d.Name(); strings.HasPrefix(name, "."+prefix) && strings.HasSuffix(name, ".acquire.hlog.tmp") {
				if st, err := os.Stat(p); err == nil {
					size = st.Size()
				}
			}
			return nil
		})
		switch {
		case size > 0 && header < 0: // created empty, then its header
			header = size
		case size > header && header >= 0:
			return
		}
	}
	t.Fatalf("no interval logged for cell %s* within %v", prefix, limit)
}
