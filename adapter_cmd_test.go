package main

import (
	"encoding/json"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"lockbench/internal/adaptertest"
	"lockbench/internal/redistest"
)

var (
	refOnce sync.Once
	refPath string
	refErr  error
)

// referenceAdapter builds redislock/cmd/lockbench-adapter-redlock once.
func referenceAdapter(t *testing.T) string {
	t.Helper()
	refOnce.Do(func() {
		refPath = filepath.Join(filepath.Dir(binary), "lockbench-adapter-redlock")
		if out, err := exec.Command("go", "build", "-o", refPath, "./redislock/cmd/lockbench-adapter-redlock").CombinedOutput(); err != nil {
			refErr = &exec.Error{Name: "go build: " + string(out), Err: err}
		}
	})
	if refErr != nil {
		t.Fatal(refErr)
	}
	return refPath
}

// fakeAdapter is this test binary as a fake adapter broken as mode says.
func fakeAdapter(t *testing.T, mode string) string {
	t.Setenv(adaptertest.Env, mode)
	return os.Args[0]
}

// A client that is no program: one line naming the setting, exit 2,
// nothing started (no masters).
func TestRunClientNotExecutable(t *testing.T) {
	for _, cmd := range []string{"/nonexistent/adapter", "README.md"} {
		_, stderr, code := lockbench(t, "run", "--local", "3", "--duration", "1s", "--client", cmd)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(stderr, "client: \""+cmd+"\" is not an executable program") {
			t.Errorf("--client %s: exit %d, stderr %q; want exit 2 and one line naming client", cmd, code, stderr)
		}
	}
	_, stderr, code := lockbench(t, "run", "--topology", "replicated", "--client", os.Args[0])
	if code != 2 || !strings.Contains(stderr, "client: runs on topology redlock or single") {
		t.Errorf("--client on replicated: exit %d, %q", code, stderr)
	}
}

// The reference adapter runs a benchmark cell: its library in the
// result, locks acquired, exit 0.
func TestRunClientReference(t *testing.T) {
	redistest.Require(t)
	ref := referenceAdapter(t)
	stdout, stderr, code := lockbench(t, "run", "--local", "3", "--duration", "2s", "--warmup", "0s", "--workers", "4", "--json", "--client", ref)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	lib, _ := lookup(res, "config.adapter.library")
	acq, _ := lookup(res, "outcomes.acquired")
	if lib != "lockbench-engine" || acq.(float64) < 10 {
		t.Fatalf("adapter %v, acquired %v: %s", lib, acq, stdout)
	}
	checkAdapterCPU(t, res)
}

// checkAdapterCPU: the client CPU of a run with an adapter is
// lockbench's and the adapter's, both read and shown apart, in total and
// per cycle; the machine split counts the adapter as the client's. Sums,
// not magnitudes: the machine may be busy.
func checkAdapterCPU(t *testing.T, res map[string]any) {
	t.Helper()
	num := func(path string) float64 {
		v, _ := lookup(res, path)
		f, _ := v.(float64)
		return f
	}
	if inc, _ := lookup(res, "client.includes_adapter"); inc != true {
		t.Fatalf("client.includes_adapter %v, want true", inc)
	}
	own, ad, all := num("client.lockbench_cpu_seconds"), num("client.adapter_cpu_seconds"), num("client.cpu_seconds")
	if own <= 0 || ad <= 0 || math.Abs(own+ad-all) > 1e-9*all {
		t.Errorf("client CPU s: lockbench %v + adapter %v, total %v; want both > 0 and their sum", own, ad, all)
	}
	ownC, adC, allC := num("client.lockbench_cpu_us_per_cycle"), num("client.adapter_cpu_us_per_cycle"), num("client.cpu_us_per_cycle")
	if ownC <= 0 || adC <= 0 || math.Abs(ownC+adC-allC) > 1e-6*allC {
		t.Errorf("client CPU µs/cycle: lockbench %v + adapter %v, total %v; want both > 0 and their sum", ownC, adC, allC)
	}
	if share, ok := lookup(res, "machine.adapter_share"); !ok || (share.(float64) < 0 || share.(float64) > num("machine.client_share")) {
		t.Errorf("machine: adapter share %v, client share %v; want the adapter's within the client's", share, num("machine.client_share"))
	}
}

// A client that breaks mid-cell fails the run (exit 1) naming what it
// did, with its exit status and last stderr lines when it exited; the
// masters are stopped.
func TestRunClientBreaksMidCell(t *testing.T) {
	redistest.Require(t)
	for _, tc := range []struct{ mode, seen string }{
		{"crash-after:200", "exited (exit status 3); its last stderr lines: fake adapter: about to crash | panic: boom"},
		{"garbage-after:200", `malformed line "Traceback (most recent call last)`},
		{"unknown-id-after:200", "reply to id 999999, which no request is waiting for"},
		{"hang-after:200", "stopped answering: no reply to "},
		{"no-hello", "no hello_ok within 2s"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Setenv("LOCKBENCH_ADAPTER_REPLY_BOUND", "2s")
			_, stderr, code := lockbench(t, "run", "--local", "3", "--duration", "20s", "--warmup", "0s", "--workers", "4", "--ttl", "1s",
				"--client", fakeAdapter(t, tc.mode))
			if code != 1 || !strings.Contains(stderr, tc.seen) {
				t.Fatalf("exit %d, want 1 with %q; stderr:\n%s", code, tc.seen, stderr)
			}
			for _, addr := range startedMasters(stderr) {
				if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
					c.Close()
					t.Errorf("master %s still up after the run ended", addr)
				}
			}
		})
	}
}

// startedMasters are the masters' addresses the run's log names.
func startedMasters(stderr string) []string {
	_, after, ok := strings.Cut(stderr, "persistence none) on ")
	if !ok {
		return nil
	}
	line, _, _ := strings.Cut(after, "\n")
	return strings.Fields(line)
}

// An adapter in another language that breaks mid-cell (a shell script,
// honest for 200 requests, then it exits or writes garbage): the run
// fails (exit 1) with one line naming its command and what it did, and
// the result it writes keeps what was measured until then, interrupted
// and saying why.
func TestRunClientBrokenScriptKeepsPartial(t *testing.T) {
	redistest.Require(t)
	for _, tc := range []struct{ mode, seen string }{
		{"exit", "adapter 'sh testdata/broken-adapter.sh exit 200' exited (exit status 3); its last stderr lines: broken-adapter.sh: exiting after 200 requests"},
		{"garbage", `adapter 'sh testdata/broken-adapter.sh garbage 200': malformed line "Traceback (most recent call last): {\"type\":\"acquire\"`},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run.json")
			_, stderr, code := lockbench(t, "run", "--local", "3", "--duration", "20s", "--warmup", "0s", "--workers", "1", "--ttl", "1s",
				"--json-out", out, "--client", "sh testdata/broken-adapter.sh "+tc.mode+" 200")
			var reason []string
			for _, l := range strings.Split(stderr, "\n") {
				if strings.HasPrefix(l, "lockbench run: adapter") {
					reason = append(reason, l)
				}
			}
			if code != 1 || len(reason) != 1 || !strings.Contains(reason[0], tc.seen) {
				t.Fatalf("exit %d, want 1 and one line with %q; stderr:\n%s", code, tc.seen, stderr)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatalf("no partial result written: %v", err)
			}
			var res map[string]any
			if err := json.Unmarshal(b, &res); err != nil {
				t.Fatal(err)
			}
			// 200 honest requests from one worker: at most 100 acquires.
			acq, _ := lookup(res, "outcomes.acquired")
			broken, _ := res["broken"].(string)
			if n, _ := acq.(float64); n < 1 || n > 100 || res["interrupted"] != true || !strings.Contains(broken, tc.seen) {
				t.Fatalf("partial result: acquired %v (want 1..100), interrupted %v, broken %q (want %q)", acq, res["interrupted"], broken, tc.seen)
			}
		})
	}
}

// TestAdapterCheckReference: lockbench adapter check starts the design's
// servers through its service (service.CheckServers) and passes the
// reference adapter; its lost notice needs the key deleted on those
// servers behind the holder's back (DropKey). A topology whose service
// starts no such servers is refused with one line, exit 2.
func TestAdapterCheckReference(t *testing.T) {
	redistest.Require(t)
	stdout, stderr, code := lockbench(t, "adapter", "check", "--quiet", "--local", "1", "--topology", "single", referenceAdapter(t))
	if code != 0 || !strings.Contains(stdout, "PASS lost notice") || strings.Contains(stdout, "FAIL") {
		t.Fatalf("exit %d, want 0 and every check passed (lost notice too):\n%s\n%s", code, stdout, stderr)
	}
	_, stderr, code = lockbench(t, "adapter", "check", "--topology", "etcd", referenceAdapter(t))
	if code != 2 || !strings.HasPrefix(stderr, "lockbench adapter: topology:") {
		t.Fatalf("topology etcd: exit %d, %q; want 2 and one line naming topology", code, stderr)
	}
}
