package main

import (
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lockbench/faults"
	"lockbench/internal/bound"
	"lockbench/internal/proc"
	"lockbench/internal/redistest"
)

func TestChaosBadInputExits2(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("settings:\n  masters: 3\n  wokers: 4\n"), 0o644)
	cases := map[string][]string{
		"nope.yaml":   {"-f", "nope.yaml"},
		"wokers":      {"-f", bad},
		"kind":        {"--fault", "explode at=1s"},
		"cell":        {"-f", "crash", "--cell", "nope"},
		"workers":     {"--workers", "0"},
		"client_mode": {"--client-mode", "threads"},
		"expect":      {"--expect", "happiness>1"},
		"masters":     {"-f", "clock", "--masters", "1"},
		"local":       {"--local", "2", "--masters", "3"},
	}
	for field, args := range cases {
		_, stderr, code := lockbench(t, append([]string{"chaos"}, args...)...)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2 (%s)", field, code, stderr)
		}
		if !strings.Contains(stderr, field) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%s: want one line naming the field, got %q", field, stderr)
		}
	}
	stdout, _, code := lockbench(t, "chaos", "-f", "crash", "--dry-run")
	if code != 0 || !strings.Contains(stdout, "none-delayed") || !strings.Contains(stdout, "restart after 2.5s") {
		t.Fatalf("dry run: exit %d\n%s", code, stdout)
	}
	// The count of masters chaos starts is headed by its setting's name.
	if !regexp.MustCompile(`(?m)^#\s+cell\s+local\s+persistence\s`).MatchString(stdout) {
		t.Errorf("dry run: the table's heading does not name the count \"local\":\n%s", stdout)
	}
}

// A cell that does not show what it claims exits 3, after writing its
// results in the sweep layout.
func TestChaosWritesResultsAndChecksExpectations(t *testing.T) {
	redistest.Require(t)
	out := filepath.Join(t.TempDir(), "res")
	stdout, stderr, code := lockbench(t, "chaos", "--duration", "1s", "--masters", "3", "--keys", "4", "--hold", "5ms",
		"--fault", "latency at=200ms clients=1 masters=0 latency=5ms", "--expect", "violations>0", "--no-report", "--out", out)
	if code != 3 {
		t.Fatalf("exit %d, want 3 (expectation violations>0 not met)\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "NOT SHOWN") || !strings.Contains(stdout, "NOT MET") {
		t.Fatalf("the unmet expectation is not reported:\n%s\n%s", stdout, stderr)
	}
	var man struct {
		Cells []struct{ ID, File string }
	}
	if err := json.Unmarshal([]byte(mustRead(t, filepath.Join(out, "manifest.json"))), &man); err != nil || len(man.Cells) != 1 {
		t.Fatalf("manifest: %v %+v", err, man)
	}
	var run struct {
		Safety map[string]any
		Events []map[string]any
		Cell   map[string]any
		Config map[string]any
	}
	if err := json.Unmarshal([]byte(mustRead(t, filepath.Join(out, man.Cells[0].File))), &run); err != nil {
		t.Fatal(err)
	}
	if run.Safety["resource_checked"] != true || run.Safety["acknowledged_writes"].(float64) == 0 || run.Cell["id"] != man.Cells[0].ID {
		t.Fatalf("cell result: %+v", run)
	}
	if len(run.Events) != 2 || run.Events[0]["kind"] != "latency" || run.Events[1]["kind"] != "latency_end" {
		t.Fatalf("events: %+v", run.Events)
	}
	for _, m := range []string{"acquire", "failed", "release"} {
		if _, err := os.Stat(filepath.Join(out, "cells", man.Cells[0].ID+"."+m+".hlog")); err != nil {
			t.Error(err)
		}
	}
}

var (
	pidsRE = regexp.MustCompile(`\(pids? ([0-9 ]+)\)`)
	pidRE  = regexp.MustCompile(`pid (\d+)`)
	addrRE = regexp.MustCompile(`127\.0\.0\.1:\d+`)
)

// Ctrl-C in the middle of a scenario (a client process stopped, a master
// restarted after a crash, one under a fake clock): exit 130, the partial
// cell written, and nothing left running or on disk.
func TestChaosInterruptCleansUp(t *testing.T) {
	redistest.Require(t)
	redistest.RequireTool(t, faults.FaketimeAvailable())
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	os.Mkdir(tmp, 0o755)
	scenario := filepath.Join(dir, "s.yaml")
	os.WriteFile(scenario, []byte(`
settings: {masters: 3, clients: 2, client_mode: processes, workers: 4, keys: 8, ttl: 1s, hold: 50ms, duration: 30s}
faults:
  - {at: 0s, kind: partition, clients: [0], masters: [2]}
  - {at: 500ms, kind: crash, masters: [0], restart: immediate}
  - {at: 700ms, kind: clock_jump, masters: [1], by: 3s}
  - {at: 1s, kind: pause, clients: [1], for: 60s}
cells: [{name: a}, {name: b}]
`), 0o644)
	out := filepath.Join(dir, "res")
	cmd := exec.Command(binary, "chaos", "-f", scenario, "--out", out)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var o, e lockedBuffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once client 1 is stopped (its pause, the last fault, is
	// in place), not after a fixed time from before the servers started.
	waitClientStopped(t, &e, 1, 60*time.Second)
	_ = cmd.Process.Signal(syscall.SIGINT)
	start := time.Now()
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("want exit 130 after SIGINT, got %v; stderr %s", err, e.String())
	}
	// 15 s: below what a wind-down that waited out the cell (30 s) or the
	// paused client (60 s) would take; an upper bound, not a timing.
	if d := time.Since(start); !bound.Max(t, "chaos.interrupt_wind_down", d, 15*time.Second) {
		t.Errorf("took %v to stop after SIGINT", d)
	}
	var man struct {
		Interrupted bool
		Cells       []struct{ File string }
	}
	if err := json.Unmarshal([]byte(mustRead(t, filepath.Join(out, "manifest.json"))), &man); err != nil || !man.Interrupted || len(man.Cells) != 1 {
		t.Fatalf("manifest: interrupted %v, %d cells (%v)", man.Interrupted, len(man.Cells), err)
	}
	cell := mustRead(t, filepath.Join(out, man.Cells[0].File))
	if !strings.Contains(cell, `"interrupted": true`) || !strings.Contains(cell, `"resource_checked": true`) {
		t.Fatal("the partial cell is not marked interrupted or was not checked")
	}
	var pids []int
	for _, m := range pidsRE.FindAllStringSubmatch(e.String(), -1) {
		for _, f := range strings.Fields(m[1]) {
			p, _ := strconv.Atoi(f)
			pids = append(pids, p)
		}
	}
	for _, m := range pidRE.FindAllStringSubmatch(e.String()+cell, -1) {
		p, _ := strconv.Atoi(m[1])
		pids = append(pids, p)
	}
	if len(pids) < 7 { // 3 masters, the resource, 2 clients, the restarted master
		t.Fatalf("want the pids announced, got %v in %s", pids, e.String())
	}
	for _, p := range pids {
		if !errors.Is(syscall.Kill(p, 0), syscall.ESRCH) {
			t.Errorf("pid %d still running after the interrupt", p)
		}
	}
	for _, a := range addrRE.FindAllString(e.String(), -1) {
		if c, err := net.DialTimeout("tcp", a, 200*time.Millisecond); err == nil {
			c.Close()
			t.Errorf("%s still listening after the interrupt", a)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
		t.Errorf("temp files left: %v", left)
	}
}

// waitClientStopped waits until client i's process, as the cell's
// start-up line names it, is stopped (SIGSTOP); it fails the test after
// limit.
func waitClientStopped(t *testing.T, stderr *lockedBuffer, i int, limit time.Duration) {
	t.Helper()
	clients := regexp.MustCompile(`chaos: cell .* clients \(pids ([0-9 ]+)\)`)
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		m := clients.FindStringSubmatch(stderr.String())
		if m == nil {
			continue
		}
		f := strings.Fields(m[1])
		if i >= len(f) {
			t.Fatalf("client %d: the start-up line names %d client pids: %s", i, len(f), m[0])
		}
		if pid, _ := strconv.Atoi(f[i]); proc.Stopped(pid) {
			return
		}
	}
	t.Fatalf("client %d not stopped within %v; stderr:\n%s", i, limit, stderr.String())
}

// Cells that judged nothing fail (exit 3) whatever their figures: a fault
// that never happened, clients that reach no master (with violations: 0
// expected, which holds vacuously), no acknowledged write, a crash of a
// master that held no lock. A cell without expectations is "unchecked".
// The report of a chaos directory has no capacity section.
func TestChaosCellsThatJudgedNothingFail(t *testing.T) {
	redistest.Require(t)
	dir := t.TempDir()
	scenario := filepath.Join(dir, "s.yaml")
	os.WriteFile(scenario, []byte(`
settings: {masters: 3, clients: 2, workers: 4, keys: 8, ttl: 1s, hold: 5ms, duration: 1500ms}
cells:
  - name: missed-fault
    settings: {acquisitions: 40, duration: 10s}
    faults: [{at: 8s, kind: crash, masters: [0]}]
  - name: unreachable
    faults: [{at: 0s, kind: partition}]
    expect: {violations: 0}
  - name: no-acks
    settings: {ttl: 200ms, timeout: 20ms, hold: 300ms, hold_distribution: fixed, check_validity: true}
  - name: empty-crash
    faults: [{at: 0s, kind: crash, masters: [0]}]
  - name: plain
`), 0o644)
	out := filepath.Join(dir, "res")
	stdout, stderr, code := lockbench(t, "chaos", "-f", scenario, "--out", out)
	if code != 3 {
		t.Fatalf("exit %d, want 3\n%s\n%s", code, stdout, stderr)
	}
	want := map[string]string{
		"missed-fault": `fault "crash at 8s masters 0 restart immediate" did not happen`,
		// A partition at 0 s is set before the clients start, but toxiproxy
		// swaps a link's toxics asynchronously: on a starved machine a first
		// acquire or two can still get through. Too few either way.
		"unreachable": " acquisitions, fewer than min_acquisitions 10",
		"no-acks":     "0 acknowledged writes, fewer than min_acquisitions 10",
		"empty-crash": "hit a master that held no lock key",
	}
	var man struct {
		Cells []struct{ Label, File string }
	}
	if err := json.Unmarshal([]byte(mustRead(t, filepath.Join(out, "manifest.json"))), &man); err != nil || len(man.Cells) != 5 {
		t.Fatalf("manifest: %v %+v", err, man)
	}
	for _, c := range man.Cells {
		var run struct {
			Safety struct {
				Verdict   string
				NotJudged string `json:"not_judged"`
			}
		}
		if err := json.Unmarshal([]byte(mustRead(t, filepath.Join(out, c.File))), &run); err != nil {
			t.Fatal(err)
		}
		reasons := run.Safety.NotJudged
		if w, ok := want[c.Label]; ok && (run.Safety.Verdict != "not judged" || !strings.Contains(reasons, w)) {
			t.Errorf("%s: verdict %q (%s); want not judged: %s", c.Label, run.Safety.Verdict, reasons, w)
		}
		if c.Label == "plain" && run.Safety.Verdict != "unchecked" {
			t.Errorf("plain: verdict %q (%s); want unchecked", run.Safety.Verdict, reasons)
		}
	}
	if n := strings.Count(stdout, "NOT JUDGED"); n != 4 || !strings.Contains(stdout, "unchecked") {
		t.Errorf("table: %d cells NOT JUDGED, want 4, and plain unchecked:\n%s", n, stdout)
	}
	if strings.Contains(strings.ToLower(stdout), "capacity") {
		t.Errorf("chaos printed a capacity section:\n%s", stdout)
	}
}

// A master address with a password where a count is taken (chaos'
// --masters N, --local N) is bad input in one line that names the flag,
// says what it takes, and hides the password.
func TestBadFlagValueHidesPassword(t *testing.T) {
	for _, args := range [][]string{
		{"chaos", "--masters", "redis://u:hunter2@127.0.0.1:6379", "--dry-run"},
		{"chaos", "--local", "redis://u:hunter2@127.0.0.1:6379", "--dry-run"},
		{"run", "--local", "redis://u:hunter2@127.0.0.1:6379"},
	} {
		_, stderr, code := lockbench(t, args...)
		if code != 2 || strings.Contains(stderr, "hunter2") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 ||
			!strings.Contains(stderr, "--"+strings.TrimPrefix(args[1], "--")) {
			t.Errorf("%v: exit %d, want 2 with one line naming the flag and no password: %q", args, code, stderr)
		}
	}
	_, stderr, _ := lockbench(t, "chaos", "--masters", "127.0.0.1:6379")
	if !strings.Contains(stderr, "--local") {
		t.Errorf("chaos --masters ADDRESS does not say --local N is what it takes: %q", stderr)
	}
}
