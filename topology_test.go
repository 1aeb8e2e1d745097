package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lockbench/internal/bound"
	"lockbench/internal/redistest"
	"lockbench/redislock/localmasters"
)

// announcedPids are the pids a replicated set's start-up line names.
func announcedPids(t *testing.T, stderr string) []int {
	t.Helper()
	var pids []int
	for _, m := range pidsRE.FindAllStringSubmatch(stderr, -1) {
		for _, f := range strings.Fields(m[1]) {
			p, _ := strconv.Atoi(f)
			pids = append(pids, p)
		}
	}
	if len(pids) == 0 {
		t.Fatalf("no pids announced on stderr: %s", stderr)
	}
	return pids
}

// assertGone: no announced process runs and no announced address listens.
func assertGone(t *testing.T, stderr string, pids int) {
	t.Helper()
	got := announcedPids(t, stderr)
	if len(got) != pids {
		t.Errorf("%d pids announced, want %d: %s", len(got), pids, stderr)
	}
	for _, p := range got {
		if !errors.Is(syscall.Kill(p, 0), syscall.ESRCH) {
			t.Errorf("pid %d still running after lockbench exited", p)
		}
	}
	for _, a := range addrRE.FindAllString(stderr, -1) {
		if c, err := net.DialTimeout("tcp", a, 200*time.Millisecond); err == nil {
			c.Close()
			t.Errorf("%s still listening after lockbench exited", a)
		}
	}
}

// A replicated run locks through Sentinel end to end: the result records
// its topology, every acquire's lock is released, and the master, its
// replica and the Sentinels are gone afterwards.
//
// The per-master timeout is 1 s, not 50 ms, so that an error is
// Sentinel's or the engine's, not the load's (a loaded machine once had 2
// of 50 ms), and the window 2 s; what is judged (each lock released, none
// an error) needs one lock, not a rate (100 in 1 s once failed under load).
func TestRunReplicatedThroughSentinel(t *testing.T) {
	redistest.Require(t)
	stdout, stderr, code := lockbench(t, "run", "--topology", "replicated", "--replicas", "1", "--sentinels", "2",
		"--duration", "2s", "--timeout", "1s", "--warmup", "0s", "--workers", "4", "--keys", "1000", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r struct {
		Config struct {
			Topology      string   `json:"topology"`
			Replicas      int      `json:"replicas"`
			Sentinels     int      `json:"sentinels"`
			SentinelAddrs []string `json:"sentinel_addrs"`
			MasterSet     string   `json:"master_set"`
			WaitReplicas  *int     `json:"wait_replicas"`
			Masters       []string `json:"masters"`
			Quorum        int      `json:"quorum"`
		} `json:"config"`
		Outcomes struct{ Acquired, Errors int64 } `json:"outcomes"`
		Release  struct{ Count int64 }            `json:"release_latency_us"`
		Servers  struct {
			Replica  float64 `json:"replica_cpu_seconds"`
			Topology float64 `json:"topology_cpu_us_per_cycle"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	c := r.Config
	if c.Topology != "replicated" || c.Replicas != 1 || c.Sentinels != 2 || len(c.SentinelAddrs) != 2 || c.MasterSet != "lockbench" ||
		c.WaitReplicas == nil || *c.WaitReplicas != 0 || len(c.Masters) != 1 || c.Quorum != 1 {
		t.Errorf("config does not record the replicated topology: %+v", c)
	}
	if !bound.Min(t, "sentinel.acquired", r.Outcomes.Acquired, 1) || r.Outcomes.Errors != 0 || r.Release.Count != r.Outcomes.Acquired {
		t.Errorf("%d acquired, %d errors, %d released: want every acquire through Sentinel released", r.Outcomes.Acquired, r.Outcomes.Errors, r.Release.Count)
	}
	if r.Servers.Replica <= 0 || r.Servers.Topology <= 0 {
		t.Errorf("the replica's CPU is not the topology's: %+v", r.Servers)
	}
	assertGone(t, stderr, 1+1+2)
}

// Ctrl-C while a replicated cell runs: exit 130 and no process of the
// set (master, replicas, Sentinels) left.
func TestRunReplicatedInterruptStopsTheSet(t *testing.T) {
	redistest.Require(t)
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cmd := exec.Command(binary, "run", "--topology", "replicated", "--duration", "60s", "--warmup", "0s", "--workers", "4", "--json",
		"--metrics-addr", metricsAddr)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Into the measured window: once a cycle in it is counted, not a fixed
	// 1.5 s after the set started (the baseline may take longer).
	waitFirstCycle(t, metricsAddr, 30*time.Second)
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("want exit 130 after SIGINT, got %v; stderr %s", err, e.String())
	}
	if !strings.Contains(o.String(), `"interrupted": true`) {
		t.Errorf("the partial result is not marked interrupted: %s", o.String())
	}
	assertGone(t, e.String(), 1+2+3)
}

// Bad topology input is one line naming the setting, exit 2, nothing
// started.
func TestTopologyBadInputExits2(t *testing.T) {
	cases := []struct {
		field string
		args  []string
	}{
		{"topology", []string{"--topology", "sharded"}},
		{"replicas", []string{"--replicas", "3"}},
		{"sentinels", []string{"--topology", "single", "--local", "1", "--sentinels", "5"}},
		{"wait-replicas", []string{"--wait-replicas", "1"}},
		{"wait-replicas", []string{"--topology", "replicated", "--wait-replicas", "3"}},
		{"sentinels", []string{"--topology", "replicated", "--sentinels", "0"}},
		{"local", []string{"--topology", "single"}},
		{"masters", []string{"--topology", "single", "--masters", "127.0.0.1:1,127.0.0.1:2"}},
		{"driver", []string{"--topology", "replicated", "--driver", "redsync"}},
		{"master-set", []string{"--topology", "replicated", "--sentinel-addrs", "127.0.0.1:1"}},
		{"replica-priority", []string{"--topology", "replicated", "--replica-priority", "1,2,3"}},
		{"min-replicas-to-write", []string{"--topology", "replicated", "--min-replicas-to-write", "3"}},
		{"down-after", []string{"--topology", "replicated", "--down-after", "0s"}},
	}
	for _, tc := range cases {
		_, stderr, code := lockbench(t, append([]string{"run"}, tc.args...)...)
		field := tc.field
		if code != 2 || !strings.Contains(stderr, field+":") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || strings.Contains(stderr, "started") {
			t.Errorf("%s: exit %d, %q; want exit 2 and one line naming %s, nothing started", field, code, stderr, field)
		}
	}
}

// An external replicated set (--sentinel-addrs, --master-set) is dialled,
// not started; an unknown set or an unreachable Sentinel is exit 1 naming
// it.
func TestRunExternalReplicatedSet(t *testing.T) {
	r := redistest.StartReplicated(t, localmasters.ReplicatedOptions{Replicas: 1, Sentinels: 1})
	sentinels := strings.Join(r.SentinelAddrs(), ",")
	run := func(set string, extra ...string) (string, string, int) {
		args := append([]string{"run", "--topology", "replicated", "--sentinel-addrs", sentinels, "--master-set", set,
			"--duration", "500ms", "--warmup", "0s", "--workers", "2", "--json"}, extra...)
		return lockbench(t, args...)
	}
	stdout, stderr, code := run(r.MasterSet(), "--wait-replicas", "1")
	if code != 0 || !strings.Contains(stdout, `"sentinel_addrs": [`) || strings.Contains(stdout, `"replicas":`) || strings.Contains(stderr, "started") {
		t.Errorf("external set: exit %d, stderr %q; want a run that starts nothing and records the Sentinels", code, stderr)
	}
	if _, stderr, code = run("nope"); code != 1 || !strings.Contains(stderr, `"nope"`) || !strings.Contains(stderr, r.SentinelAddrs()[0]) {
		t.Errorf("unknown master set: exit %d, %q; want exit 1 naming the set and the Sentinel", code, stderr)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	sentinels = dead
	if _, stderr, code = run("lockbench"); code != 1 || !strings.Contains(stderr, dead) {
		t.Errorf("unreachable Sentinel: exit %d, %q; want exit 1 naming %s", code, stderr, dead)
	}
}

// cellWaits is a sweep cell's locks and the WAIT commands it sent.
func cellWaits(t *testing.T, out, name string) (acquired, waits int64) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(out, "cells", "*-"+name+".json"))
	if len(files) != 1 {
		t.Fatalf("cell %s: files %v, want one", name, files)
	}
	var r struct {
		Outcomes   struct{ Acquired int64 }
		Contention *struct {
			Commands *struct{ Waits int64 }
		}
	}
	if err := json.Unmarshal([]byte(mustRead(t, files[0])), &r); err != nil || r.Contention == nil || r.Contention.Commands == nil {
		t.Fatalf("cell %s: no commands counted (%v)", name, err)
	}
	return r.Outcomes.Acquired, r.Contention.Commands.Waits
}

// A tiny topologies sweep: the WAIT 1 cell sends a WAIT after every batch
// of SETs and the WAIT 0 cell none, every result records its topology, and
// report.md has the price table with the ratios to the single master.
// What WAIT costs in time is engine's TestReplicatedWaitCost's to bound
// (acquires interleaved in one process): these cells run one after the
// other, so a load that changes between them decides their p50s.
func TestTopologiesSweepPriceTable(t *testing.T) {
	redistest.Require(t)
	dir := t.TempDir()
	scenario := filepath.Join(dir, "topo.yaml")
	os.WriteFile(scenario, []byte(`
settings: {workers: 4, keys: 1000, warmup: 500ms, duration: 2s}
cells:
  - {name: redlock, settings: {topology: redlock, local: 3}}
  - {name: single, settings: {topology: single, local: 1}}
  - {name: wait0, settings: {topology: replicated, replicas: 1, sentinels: 1, wait_replicas: 0}}
  - {name: wait1, settings: {topology: replicated, replicas: 1, sentinels: 1, wait_replicas: 1}}
`), 0o644)
	out := filepath.Join(dir, "res")
	if _, stderr, code := lockbench(t, "sweep", "-f", scenario, "--out", out); code != 0 {
		t.Fatalf("sweep: exit %d\n%s", code, stderr)
	}
	var sum struct {
		Price []struct {
			Label        string
			Topology     string
			WaitReplicas int     `json:"wait_replicas"`
			P50          float64 `json:"acquire_p50_us"`
			Single       *int    `json:"single_cell"`
			Ratios       *struct {
				P50 float64 `json:"acquire_p50"`
			} `json:"ratios_to_single"`
		}
	}
	if err := json.Unmarshal([]byte(mustRead(t, filepath.Join(out, "summary.json"))), &sum); err != nil || len(sum.Price) != 4 {
		t.Fatalf("summary.json price: %d rows (%v)", len(sum.Price), err)
	}
	wait0, wait1 := sum.Price[2], sum.Price[3]
	t.Logf("acquire p50: single %.0f µs, redlock N=3 %.0f µs, WAIT 0 %.0f µs, WAIT 1 %.0f µs",
		sum.Price[1].P50, sum.Price[0].P50, wait0.P50, wait1.P50)
	if wait0.Topology != "replicated" || wait1.WaitReplicas != 1 {
		t.Errorf("WAIT cells: topology %q, wait_replicas %d", wait0.Topology, wait1.WaitReplicas)
	}
	// One WAIT a batch, a batch at most one SET a worker: at least a
	// quarter WAIT a lock with 4 workers (the window's edges may cut one
	// acquire a worker from its WAIT); none without wait_replicas.
	if acquired, waits := cellWaits(t, out, "wait1"); acquired < 100 || !bound.Min(t, "topology.wait1_waits", waits, (acquired-4)/4) {
		t.Errorf("wait1: %d WAITs for %d locks; want one a batch, at least one for 4 locks", waits, acquired)
	}
	if acquired, waits := cellWaits(t, out, "wait0"); acquired < 100 || waits != 0 {
		t.Errorf("wait0: %d WAITs for %d locks; want none", waits, acquired)
	}
	for _, r := range sum.Price {
		if r.Single == nil || *r.Single != 1 || r.Ratios == nil || r.Ratios.P50 <= 0 {
			t.Errorf("%s: no ratio to the single cell: %+v", r.Label, r)
		}
	}
	md := mustRead(t, filepath.Join(out, "report.md"))
	if !strings.Contains(md, "## Topologies: price and safety") || !strings.Contains(md, "| replicated, WAIT 1 |") || !strings.Contains(md, "1.00×") {
		t.Errorf("report.md lacks the price table")
	}
	if _, err := os.Stat(filepath.Join(out, "topology-latency.png")); err != nil {
		t.Errorf("no topology latency plot: %v", err)
	}
}
