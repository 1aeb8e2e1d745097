package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lockbench/internal/adaptertest"
	"lockbench/internal/redistest"
)

var binary string

func TestMain(m *testing.M) {
	if mode := os.Getenv(adaptertest.Env); mode != "" { // this binary is a fake adapter (adapter_cmd_test.go)
		adaptertest.Serve(mode)
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "lockbench-bin-*")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "lockbench")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		panic("build: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func lockbench(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// Every field the --json contract promises, as dotted paths.
var jsonFields = []string{
	"config.mode", "config.wait", "config.workers", "config.masters", "config.ttl", "config.timeout", "config.persistence",
	"throughput.cycles_per_sec", "throughput.acquires_per_sec",
	"outcomes.acquired", "outcomes.not_acquired", "outcomes.errors", "outcomes.per_master",
	"safety.violations", "safety.max_concurrent_holders",
	"client.cpu_seconds", "client.cpu_us_per_cycle",
}

func lookup(m map[string]any, path string) (any, bool) {
	var cur any = m
	for _, p := range strings.Split(path, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func TestRunJSONHasEveryField(t *testing.T) {
	redistest.Require(t)
	stdout, stderr, code := lockbench(t, "run", "--local", "3", "--duration", "1s", "--warmup", "200ms", "--workers", "4", "--keys", "1000", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	if dec.More() {
		t.Fatal("stdout holds more than one JSON object")
	}
	for _, f := range jsonFields {
		if _, ok := lookup(m, f); !ok {
			t.Errorf("missing %s", f)
		}
	}
	for _, h := range []string{"acquire_latency_us", "acquire_failed_latency_us", "release_latency_us"} {
		for _, f := range []string{"p50", "p90", "p99", "p999", "max", "mean", "count"} {
			if _, ok := lookup(m, h+"."+f); !ok {
				t.Errorf("missing %s.%s", h, f)
			}
		}
	}
	pm, _ := lookup(m, "outcomes.per_master")
	if masters, _ := pm.(map[string]any); len(masters) != 3 {
		t.Fatalf("per_master has %d masters, want 3", len(masters))
	}
	for addr, v := range pm.(map[string]any) {
		for _, f := range []string{"ok", "taken", "timeout", "error"} {
			if _, ok := v.(map[string]any)[f]; !ok {
				t.Errorf("per_master[%s] missing %s", addr, f)
			}
		}
	}
	// A sample floor, not a speed: the run must have judged something
	// (thousands a second here; a loaded machine's few hundred pass).
	if c, _ := lookup(m, "outcomes.acquired"); c.(float64) < 100 {
		t.Fatalf("only %v acquired in 1s", c)
	}
	if v, _ := lookup(m, "safety.violations"); v.(float64) != 0 {
		t.Fatalf("violations %v", v)
	}
}

func TestRunBadInputExits2(t *testing.T) {
	cases := map[string][]string{
		"timeout":      {"--timeout", "10s", "--ttl", "10s"},
		"mode":         {"--mode", "parallel"},
		"workers":      {"--workers", "0"},
		"duration":     {"--duration", "0s"},
		"persistence":  {"--persistence", "fsync"},
		"masters":      {"--masters", "not-an-address"},
		"wait":         {"--wait", "most"},
		"keys":         {"--keys", "0"},
		"distribution": {"--distribution", "gauss"},
	}
	for field, args := range cases {
		_, stderr, code := lockbench(t, append([]string{"run"}, args...)...)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2 (%s)", field, code, stderr)
		}
		if !strings.Contains(stderr, field) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%s: want one line naming the field, got %q", field, stderr)
		}
		if strings.Contains(stderr, "started") {
			t.Errorf("%s: masters were started before the input was checked: %q", field, stderr)
		}
	}
}

func TestRunInterruptKeepsPartialResult(t *testing.T) {
	redistest.Require(t)
	out := filepath.Join(t.TempDir(), "r.json")
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cmd := exec.Command(binary, "run", "--local", "3", "--duration", "30s", "--warmup", "0s", "--workers", "4", "--json", "--json-out", out,
		"--metrics-addr", metricsAddr)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Once a measured cycle is counted (the masters' start-up and the
	// baseline take what they take), not 1.5 s after the process started.
	waitFirstCycle(t, metricsAddr, 30*time.Second)
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("want exit 130 after SIGINT, got %v; stderr %s", err, e.String())
	}
	// The masters it started must be gone: their ports no longer answer.
	var addrs []string
	for _, a := range regexp.MustCompile(`127\.0\.0\.1:\d+`).FindAllString(e.String(), -1) {
		if a != metricsAddr { // the live metrics' line names it too
			addrs = append(addrs, a)
		}
	}
	if len(addrs) != 3 {
		t.Fatalf("want the 3 master addresses announced on stderr, got %q", e.String())
	}
	for _, a := range addrs {
		if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			c.Close()
			t.Fatalf("master %s still listening after the interrupt", a)
		}
	}
	for _, src := range []string{o.String(), mustRead(t, out)} {
		var m map[string]any
		if err := json.Unmarshal([]byte(src), &m); err != nil {
			t.Fatalf("partial result is not JSON: %v", err)
		}
		if m["interrupted"] != true {
			t.Fatalf("result not marked interrupted: %v", m["interrupted"])
		}
		if acq, _ := lookup(m, "outcomes.acquired"); acq.(float64) == 0 {
			t.Fatal("partial result has no acquires")
		}
	}
}

// waitFirstCycle polls the live metrics a run serves on addr until its
// lock cycles counter, which counts the measured window only, is above 0:
// the run is inside its window. It fails the test after limit.
func waitFirstCycle(t *testing.T, addr string, limit time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, line := range strings.Split(string(body), "\n") {
			if f := strings.Fields(line); len(f) == 2 && strings.HasPrefix(f[0], "lockbench_cycles_total{") {
				if v, err := strconv.ParseFloat(f[1], 64); err == nil && v > 0 {
					return
				}
			}
		}
	}
	t.Fatalf("no measured lock cycle counted on %s within %v", addr, limit)
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// SIGTERM ends a run as SIGINT does, with the shells' code for it: 143
// (128 + 15), not SIGINT's 130.
func TestRunSIGTERMExits143(t *testing.T) {
	redistest.Require(t)
	cmd := exec.Command(binary, "run", "--local", "1", "--duration", "30s", "--warmup", "0s", "--workers", "2", "--json-out", filepath.Join(t.TempDir(), "r.json"))
	var e lockedBuffer
	cmd.Stderr = &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Waits on the event, not a clock: the master announced is started
	// inside the run, after its signal handling is in place.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(e.String(), "127.0.0.1:") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 143 {
		t.Fatalf("want exit 143 after SIGTERM, got %v; stderr %s", err, e.String())
	}
}
