package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"lockbench/internal/redistest"
	"lockbench/report"
)

func TestRunRepeatJSON(t *testing.T) {
	redistest.Require(t)
	stdout, stderr, code := lockbench(t, "run", "--local", "3", "--duration", "1s", "--warmup", "200ms", "--workers", "4", "--keys", "1000", "--repeat", "3", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r report.Run
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
	var r report.Run
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
	hs, err := report.ReadIntervalLog(f)
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
