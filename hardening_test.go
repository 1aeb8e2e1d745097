package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"lockbench/internal/bound"
	"lockbench/internal/redistest"
	"lockbench/redislock/localmasters"
	"lockbench/results"
)

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Every class of bad input: exit 2, one line naming the field, nothing
// started and nothing written.
func TestBadInputClasses(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	cases := []struct {
		field string
		args  []string
	}{
		{"wokers", []string{"sweep", "-f", writeFile(t, dir, "unknown.yaml", "settings:\n  wokers: 3\n"), "--out", out}},
		{"workers", []string{"sweep", "-f", writeFile(t, dir, "type.yaml", "settings:\n  workers: lots\n"), "--out", out}},
		{"duration", []string{"sweep", "-f", writeFile(t, dir, "zero.yaml", "settings:\n  duration: 0s\n"), "--out", out}},
		{"duration", []string{"run", "--duration", "-5s"}},
		{"timeout", []string{"run", "--ttl", "50ms", "--timeout", "50ms"}},
		{"workers", []string{"run", "--workers", "0"}},
		{"masters", []string{"run", "--masters", "127.0.0.1:7001,127.0.0.1:7001,127.0.0.1:7002"}},
		{"masters", []string{"run", "--masters", "redis://[::1"}},
		{"masters", []string{"run", "--masters", "127.0.0.1:99999"}},
		{"config", []string{"sweep", "-f", filepath.Join(dir, "missing.yaml"), "--out", out}},
		{"segment", []string{"run", "--segment", "3/2"}},
		{"start-at", []string{"run", "--start-at", "tomorrow"}},
		{"rate", []string{"run", "--load", "open"}},
		{"tls-ca", []string{"run", "--masters", "rediss://127.0.0.1:7000", "--tls-ca", filepath.Join(dir, "nope.pem")}},
	}
	for _, tc := range cases {
		_, stderr, code := lockbench(t, tc.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", tc.args, code, stderr)
			continue
		}
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if len(lines) != 1 || !strings.Contains(lines[0], tc.field) {
			t.Errorf("%v: want one line naming %q, got %q", tc.args, tc.field, stderr)
		}
		if strings.Contains(stderr, "started") {
			t.Errorf("%v: something was started: %q", tc.args, stderr)
		}
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("bad input left a results directory behind: %v", err)
	}
	// Warnings (not errors): even N, hold >= ttl.
	_, stderr, code := lockbench(t, "sweep", "-f", "quickstart", "--local", "4", "--hold", "20s", "--dry-run")
	if code != 0 || !strings.Contains(stderr, "WARNING: hold 20s >= ttl") || !strings.Contains(stderr, "WARNING: 4 masters: an even N") {
		t.Errorf("dry run with warnings: exit %d, want both warnings: %q", code, stderr)
	}
}

func TestUnreachableAndWrongServers(t *testing.T) {
	// A closed port.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := l.Addr().String()
	l.Close()
	// A port that is not Redis: answers with an HTTP error and closes.
	notRedis, _ := net.Listen("tcp", "127.0.0.1:0")
	defer notRedis.Close()
	go func() {
		for {
			c, err := notRedis.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
			c.Close()
		}
	}()
	for _, addr := range []string{closed, notRedis.Addr().String()} {
		t0 := time.Now()
		_, stderr, code := lockbench(t, "run", "--masters", addr, "--duration", "1s", "--warmup", "0s")
		if code != 1 || !strings.Contains(stderr, addr) {
			t.Errorf("%s: exit %d, want 1 and the address named: %q", addr, code, stderr)
		}
		// Failing fast, not after retrying to the end: a process start
		// and a dial are well under 10 s even on a loaded machine.
		if d := time.Since(t0); !bound.Max(t, "unreachable.fail_after", d, 10*time.Second) {
			t.Errorf("%s: took %v to fail", addr, d)
		}
	}
}

// Credentials never reach any output; a wrong password is an error that
// names the master without the password.
func TestAuthAndRedaction(t *testing.T) {
	set := redistest.StartMasters(t, 3, localmasters.PersistNone)
	var urls, bad []string
	for _, a := range set.Addrs() {
		if _, err := redistest.Do(a, "ACL", "SETUSER", "bench", "on", ">s3cretpw", "~*", "+@all"); err != nil {
			t.Fatal(err)
		}
		urls = append(urls, "redis://bench:s3cretpw@"+a)
		bad = append(bad, "redis://bench:wr0ngpw@"+a)
	}
	dir := t.TempDir()
	stdout, stderr, code := lockbench(t, "run", "--masters", strings.Join(urls, ","), "--duration", "1s", "--warmup", "0s",
		"--workers", "4", "--json", "--out", filepath.Join(dir, "r.json"))
	if code != 0 {
		t.Fatalf("ACL user run: exit %d %s", code, stderr)
	}
	file, _ := os.ReadFile(filepath.Join(dir, "r.json"))
	for name, text := range map[string]string{"stdout": stdout, "stderr": stderr, "out file": string(file)} {
		if strings.Contains(text, "s3cretpw") {
			t.Errorf("%s leaks the password", name)
		}
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatal(err)
	}
	if acq, _ := lookup(m, "outcomes.acquired"); acq.(float64) == 0 {
		t.Fatal("nothing acquired with ACL credentials")
	}
	// The sweep manifest too.
	sw := writeFile(t, dir, "s.yaml", "settings:\n  duration: 500ms\n  warmup: 0s\n  workers: 2\n")
	_, stderr, code = lockbench(t, "sweep", "-f", sw, "--masters", strings.Join(urls, ","), "--out", filepath.Join(dir, "sw"), "--no-report")
	if code != 0 {
		t.Fatalf("sweep: exit %d %s", code, stderr)
	}
	filepath.Walk(filepath.Join(dir, "sw"), func(p string, info os.FileInfo, err error) error {
		if b, _ := os.ReadFile(p); err == nil && !info.IsDir() && bytes.Contains(b, []byte("s3cretpw")) {
			t.Errorf("%s leaks the password", p)
		}
		return nil
	})
	_, stderr, code = lockbench(t, "run", "--masters", strings.Join(bad, ","), "--duration", "1s")
	if code != 1 || strings.Contains(stderr, "wr0ngpw") || !strings.Contains(stderr, set.Addrs()[0]) {
		t.Errorf("wrong password: exit %d, stderr %q (want 1, the address, no password)", code, stderr)
	}
}

// A run on masters shared with other data removes only its own keys, and
// refuses to start on a prefix that holds keys unless forced.
func TestKeyHygieneOnSharedMasters(t *testing.T) {
	set := redistest.StartMasters(t, 3, localmasters.PersistNone)
	addrs := strings.Join(set.Addrs(), ",")
	for _, a := range set.Addrs() {
		for k, v := range map[string]string{"app:user:1": "alice", "lockbench:shared:7": "not-a-lockbench-token", "other": "x"} {
			if _, err := redistest.Do(a, "SET", k, v); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := redistest.Do(a, "HSET", "lockbench:shared:h", "f", "v"); err != nil {
			t.Fatal(err)
		}
	}
	_, stderr, code := lockbench(t, "run", "--masters", addrs, "--key-prefix", "lockbench:shared:", "--duration", "1s", "--warmup", "0s")
	if code != 1 || !strings.Contains(stderr, "key-prefix") || !strings.Contains(stderr, "--force") || !strings.Contains(stderr, set.Addrs()[0]) {
		t.Fatalf("keys under the prefix: exit %d %q, want a refusal naming key-prefix, the servers that hold them and --force", code, stderr)
	}
	_, stderr, code = lockbench(t, "run", "--masters", addrs, "--key-prefix", "lockbench:shared:", "--keys", "20",
		"--workers", "8", "--hold", "1ms", "--duration", "1s", "--warmup", "0s", "--force")
	if code != 0 {
		t.Fatalf("forced run: exit %d %s", code, stderr)
	}
	for _, a := range set.Addrs() {
		for k, want := range map[string]string{"app:user:1": "alice", "lockbench:shared:7": "not-a-lockbench-token", "other": "x"} {
			if v, err := redistest.Do(a, "GET", k); err != nil || v != want {
				t.Errorf("%s on %s: %q %v, want %q untouched", k, a, v, err, want)
			}
		}
		if v, _ := redistest.Do(a, "EXISTS", "lockbench:shared:h"); v != "1" {
			t.Errorf("foreign hash under the prefix deleted on %s", a)
		}
		if v, _ := redistest.Do(a, "DBSIZE"); v != "4" {
			t.Errorf("%s holds %s keys after the run, want the 4 foreign ones", a, v)
		}
	}
}

func TestSweepInterruptKeepsPartialResults(t *testing.T) {
	redistest.Require(t)
	dir := filepath.Join(t.TempDir(), "res")
	sw := writeFile(t, t.TempDir(), "s.yaml", "settings:\n  local: 3\n  workers: 4\n  warmup: 0s\n  duration: 2s\nmatrix:\n  mode: [sequential, multiplexed]\n  workers: [2, 4, 8]\n")
	cmd := exec.Command(binary, "sweep", "-f", sw, "--out", dir, "--no-report")
	var e lockedBuffer
	cmd.Stderr = &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Let one cell finish, then interrupt the second inside its 2 s
	// window: once its acquire log (a temp file until the cell is kept)
	// has grown past its header by a first one-second interval.
	deadline := time.Now().Add(20 * time.Second)
	header := int64(-1)
	for time.Now().Before(deadline) {
		m, _ := filepath.Glob(filepath.Join(dir, "cells", ".001-*.acquire.hlog.tmp"))
		if len(m) == 1 {
			if st, err := os.Stat(m[0]); err == nil && header < 0 {
				header = st.Size()
			} else if err == nil && st.Size() > header {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("want exit 130, got %v; %s", err, e.String())
	}
	var man struct {
		Interrupted bool `json:"interrupted"`
		Cells       []struct {
			File string `json:"file"`
		} `json:"cells"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil || json.Unmarshal(b, &man) != nil {
		t.Fatalf("manifest: %v", err)
	}
	if !man.Interrupted || len(man.Cells) < 2 || len(man.Cells) == 6 {
		t.Fatalf("manifest: interrupted=%v with %d cells; want interrupted with the finished cells and the partial one", man.Interrupted, len(man.Cells))
	}
	last, _ := os.ReadFile(filepath.Join(dir, man.Cells[len(man.Cells)-1].File))
	var run map[string]any
	if err := json.Unmarshal(last, &run); err != nil || run["interrupted"] != true {
		t.Fatalf("the cell cut short must be written and marked interrupted: %v %v", err, run["interrupted"])
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, "cells", ".*")); len(tmp) > 0 {
		t.Fatalf("temp files left: %v", tmp)
	}
	for _, a := range regexp.MustCompile(`127\.0\.0\.1:\d+`).FindAllString(e.String(), -1) {
		if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			c.Close()
			t.Fatalf("master %s still up after the interrupt", a)
		}
	}
}

func TestRunThresholdExit3(t *testing.T) {
	redistest.Require(t)
	_, stderr, code := lockbench(t, "run", "--local", "3", "--duration", "500ms", "--warmup", "0s", "--workers", "2", "--hold", "1ms",
		"--threshold", "acquire.p99<1us", "--threshold", "violations==0")
	if code != 3 || !strings.Contains(stderr, "acquire.p99<1us") || strings.Contains(stderr, "violations==0") {
		t.Fatalf("exit %d, want 3 naming only the broken threshold: %q", code, stderr)
	}
	// With hold 0 the probe judges nothing: a safety threshold is not met.
	_, stderr, code = lockbench(t, "run", "--local", "3", "--duration", "300ms", "--warmup", "0s", "--workers", "2",
		"--threshold", "violations==0")
	if code != 3 || !strings.Contains(stderr, "violations==0") || !strings.Contains(stderr, "not judged (hold 0)") {
		t.Fatalf("hold 0: exit %d, want 3 with the safety threshold not judged: %q", code, stderr)
	}
	_, stderr, code = lockbench(t, "run", "--threshold", "acquire.p99<<1")
	if code != 2 || !strings.Contains(stderr, "threshold") {
		t.Fatalf("malformed threshold: exit %d %q", code, stderr)
	}
}

// Two processes as segments 1/2 and 2/2 against the same masters, merged by
// `lockbench report`, against one process with the whole load: counts add
// up and the merged percentiles come from the merged histograms.
func TestSegmentsMerge(t *testing.T) {
	set := redistest.StartMasters(t, 3, localmasters.PersistNone)
	dir := t.TempDir()
	sw := writeFile(t, dir, "seg.yaml", "settings:\n  workers: 8\n  keys: 10000\n  warmup: 0s\n  duration: 2s\n")
	masters := strings.Join(set.Addrs(), ",")
	startAt := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339)
	var procs []*exec.Cmd
	var errs []*bytes.Buffer
	for i := 1; i <= 2; i++ {
		cmd := exec.Command(binary, "sweep", "-f", sw, "--masters", masters, "--no-report",
			"--segment", strconv.Itoa(i)+"/2", "--start-at", startAt, "--out", filepath.Join(dir, "seg"+strconv.Itoa(i)))
		var e bytes.Buffer
		cmd.Stderr = &e
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs, errs = append(procs, cmd), append(errs, &e)
	}
	for i, p := range procs {
		if err := p.Wait(); err != nil {
			t.Fatalf("segment %d: %v\n%s", i+1, err, errs[i])
		}
	}
	if _, stderr, code := lockbench(t, "sweep", "-f", sw, "--masters", masters, "--no-report", "--out", filepath.Join(dir, "whole")); code != 0 {
		t.Fatalf("whole: %s", stderr)
	}
	merged := filepath.Join(dir, "merged")
	if _, stderr, code := lockbench(t, "report", filepath.Join(dir, "seg1"), filepath.Join(dir, "seg2"), "--out", merged); code != 0 {
		t.Fatalf("report merge: exit %d %s", code, stderr)
	}
	// --p99 is the capacity plan's SLO on any results, not only a
	// which-lock run's need (it refused a sweep's: no which-lock run).
	p99 := filepath.Join(dir, "p99")
	if _, stderr, code := lockbench(t, "report", filepath.Join(dir, "whole"), "--p99", "5ms", "--format", "md", "--out", p99); code != 0 {
		t.Fatalf("report --p99 of a sweep: exit %d %s", code, stderr)
	}
	if md, _ := os.ReadFile(filepath.Join(p99, "report.md")); !strings.Contains(string(md), "acquire p99 ≤ 5 ms") {
		t.Errorf("report --p99 5ms: the capacity plan does not name its SLO:\n%.2000s", md)
	}
	type cell struct {
		Config struct {
			Workers int    `json:"workers"`
			Segment string `json:"segment"`
			Keys    uint64 `json:"keys"`
		} `json:"config"`
		Throughput struct {
			Cycles float64 `json:"cycles_per_sec"`
		} `json:"throughput"`
		Acquire struct {
			P99   float64 `json:"p99"`
			Count int64   `json:"count"`
		} `json:"acquire_latency_us"`
		Outcomes struct {
			Acquired int64 `json:"acquired"`
		} `json:"outcomes"`
	}
	read := func(d string) (c cell, hlog string) {
		t.Helper()
		m, _ := filepath.Glob(filepath.Join(d, "cells", "000*.json"))
		if len(m) != 1 {
			t.Fatalf("%s: cells %v", d, m)
		}
		b, _ := os.ReadFile(m[0])
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		return c, strings.TrimSuffix(m[0], ".json") + ".acquire.hlog"
	}
	s1, h1 := read(filepath.Join(dir, "seg1"))
	s2, h2 := read(filepath.Join(dir, "seg2"))
	whole, _ := read(filepath.Join(dir, "whole"))
	mc, _ := read(merged)
	if s1.Config.Workers != 4 || s2.Config.Workers != 4 || s1.Config.Keys != 5000 || s1.Config.Segment != "1/2" {
		t.Fatalf("segments did not split the load: %+v %+v", s1.Config, s2.Config)
	}
	if mc.Outcomes.Acquired != s1.Outcomes.Acquired+s2.Outcomes.Acquired || mc.Acquire.Count != s1.Acquire.Count+s2.Acquire.Count {
		t.Fatalf("merged acquired %d (hist %d), want %d+%d", mc.Outcomes.Acquired, mc.Acquire.Count, s1.Outcomes.Acquired, s2.Outcomes.Acquired)
	}
	// The merged p99 is the p99 of the two segments' histograms added.
	all := results.NewHistogram()
	for _, p := range []string{h1, h2} {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		ivs, err := results.ReadIntervalLog(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, iv := range ivs {
			all.Merge(iv)
		}
	}
	if want := float64(all.ValueAtQuantile(99)); mc.Acquire.P99 != want {
		t.Fatalf("merged p99 %v, want %v from the added histograms", mc.Acquire.P99, want)
	}
	// Same total load in one process: same order of throughput. The two
	// ran one after the other, so only a wide band is robust to a load that
	// changed between them: it catches units or a window counted wrongly,
	// the merge itself is checked exactly above.
	if r := mc.Throughput.Cycles / whole.Throughput.Cycles; r < 0.33 || r > 3 {
		t.Fatalf("segments merged %.0f cycles/s vs one process %.0f: ratio %.2f", mc.Throughput.Cycles, whole.Throughput.Cycles, r)
	}
	t.Logf("segments %d+%d acquired, merged %.0f cycles/s p99 %.0fµs; one process %.0f cycles/s p99 %.0fµs",
		s1.Outcomes.Acquired, s2.Outcomes.Acquired, mc.Throughput.Cycles, mc.Acquire.P99, whole.Throughput.Cycles, whole.Acquire.P99)
}

// External masters: a sweep sets each cell's persistence with CONFIG SET
// and puts the original back; a master that refuses CONFIG is a clear error.
func TestExternalPersistenceIsRestored(t *testing.T) {
	set := redistest.StartMasters(t, 3, localmasters.PersistNone)
	dir := t.TempDir()
	sw := writeFile(t, dir, "p.yaml", "settings:\n  workers: 2\n  warmup: 0s\n  duration: 700ms\nmatrix:\n  persistence: [aof-always, aof-everysec]\n")
	cmd := exec.Command(binary, "sweep", "-f", sw, "--masters", strings.Join(set.Addrs(), ","), "--out", filepath.Join(dir, "r"), "--no-report")
	var e bytes.Buffer
	cmd.Stderr = &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// While the first cell runs, the master is in aof-always: polled until
	// seen or the sweep ends (not for a fixed 2.5 s, which a slow start
	// could outlast), for at most 60 s.
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	seen, err, done := "", error(nil), false
	for deadline := time.Now().Add(time.Minute); !done && seen != "always" && time.Now().Before(deadline); {
		select {
		case err = <-exited:
			done = true
		case <-time.After(50 * time.Millisecond):
			seen = configValue(t, set.Addrs()[0], "appendfsync")
		}
	}
	if !done {
		err = <-exited
	}
	if err != nil {
		t.Fatalf("sweep: %v\n%s", err, e.String())
	}
	if seen != "always" {
		t.Fatalf("appendfsync during the aof-always cell: %q", seen)
	}
	for _, a := range set.Addrs() {
		if ao, af := configValue(t, a, "appendonly"), configValue(t, a, "appendfsync"); ao != "no" || af != "everysec" {
			t.Fatalf("%s left with appendonly=%s appendfsync=%s; want the original no/everysec", a, ao, af)
		}
	}
	// A user without +config: refused, named, before any load.
	var urls []string
	for _, a := range set.Addrs() {
		if _, err := redistest.Do(a, "ACL", "SETUSER", "noconf", "on", ">pw12345", "~*", "+@all", "-config"); err != nil {
			t.Fatal(err)
		}
		urls = append(urls, "redis://noconf:pw12345@"+a)
	}
	_, stderr, code := lockbench(t, "sweep", "-f", sw, "--masters", strings.Join(urls, ","), "--out", filepath.Join(dir, "r2"), "--no-report")
	if code == 0 || !strings.Contains(stderr, "persistence") || !strings.Contains(stderr, "CONFIG") || strings.Contains(stderr, "pw12345") {
		t.Fatalf("CONFIG refused: exit %d %q", code, stderr)
	}
}

// configValue reads one CONFIG GET value with redis-cli-free raw RESP.
func configValue(t *testing.T, addr, name string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	req := "*3\r\n$6\r\nCONFIG\r\n$3\r\nGET\r\n$" + strconv.Itoa(len(name)) + "\r\n" + name + "\r\n"
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 512)
	n, _ := c.Read(buf)
	// *2 $len name $len value
	parts := strings.Split(string(buf[:n]), "\r\n")
	if len(parts) < 5 {
		t.Fatalf("CONFIG GET %s: %q", name, buf[:n])
	}
	return parts[4]
}

// Without redis-server: --embedded never is a clear error; auto falls back
// to embedded masters and says so loudly.
func TestMissingRedisServer(t *testing.T) {
	env := append(os.Environ(), "PATH="+t.TempDir())
	run := func(args ...string) (string, int) {
		cmd := exec.Command(binary, args...)
		cmd.Env = env
		var e bytes.Buffer
		cmd.Stderr = &e
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return e.String(), ee.ExitCode()
		}
		return e.String(), 0
	}
	stderr, code := run("run", "--local", "3", "--embedded", "never", "--duration", "300ms", "--warmup", "0s")
	if code != 1 || !strings.Contains(stderr, "redis-server") {
		t.Fatalf("--embedded never without redis-server: exit %d %q", code, stderr)
	}
	stderr, code = run("run", "--local", "3", "--persistence", "aof-always", "--duration", "300ms")
	if code != 2 || !strings.Contains(stderr, "persistence") {
		t.Fatalf("aof-always without redis-server: exit %d %q", code, stderr)
	}
	stderr, code = run("run", "--local", "3", "--duration", "300ms", "--warmup", "0s", "--workers", "2")
	if code != 0 || !strings.Contains(stderr, "WARNING") || !strings.Contains(stderr, "not Redis figures") {
		t.Fatalf("embedded fallback: exit %d %q", code, stderr)
	}
}

// --net-latency puts the masters behind a delaying proxy: the baselines and
// the acquires both pay it; a value the proxy cannot honour is bad input.
func TestNetLatency(t *testing.T) {
	redistest.Require(t)
	stdout, stderr, code := lockbench(t, "run", "--local", "3", "--net-latency", "2ms", "--duration", "500ms", "--warmup", "0s", "--workers", "1", "--json")
	if code != 0 {
		t.Fatalf("exit %d %s", code, stderr)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatal(err)
	}
	rtts, _ := m["baseline_rtt_us"].(map[string]any)
	for addr, v := range rtts {
		if p50 := v.(map[string]any)["p50"].(float64); p50 < 2000 {
			t.Errorf("SET round trip to %s %vµs, below the 2ms added", addr, p50)
		}
	}
	if p50, _ := lookup(m, "acquire_latency_us.p50"); p50.(float64) < 2000 {
		t.Errorf("acquire p50 %vµs, below the 2ms added", p50)
	}
	for _, bad := range [][]string{{"--net-latency", "500us"}, {"--net-latency", "60ms"}, {"--net-jitter", "1ms"},
		{"--net-latency", "1ms", "--masters", "redis://127.0.0.1:7000"}} {
		_, stderr, code := lockbench(t, append([]string{"run"}, bad...)...)
		if code != 2 || !strings.Contains(stderr, "net-") {
			t.Errorf("%v: exit %d %q", bad, code, stderr)
		}
	}
}

// lockedBuffer is a child's stderr, read while the child writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
