package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lockbench/internal/bound"
	"lockbench/internal/cli"
	"lockbench/internal/ports"
	"lockbench/internal/redistest"
	"lockbench/results"
)

// freePort is a loopback port for a server a test starts: internal/ports'
// (never the same one twice, below the ephemeral range). Two ports of the
// kernel's :0 pick came back equal once, Prometheus' and its target's,
// and the test read Prometheus' own metrics as lockbench's.
func freePort(t *testing.T) int {
	t.Helper()
	p, err := ports.Free()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startPrometheus runs the real prometheus server scraping target every
// second, with its storage in a temp dir; it is stopped by its pid.
func startPrometheus(t *testing.T, target string) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		err = errors.New("prometheus not installed (apt-get install prometheus)")
	}
	redistest.RequireTool(t, err)
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n  - job_name: lockbench\n    static_configs:\n      - targets: [%q]\n", target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logf.Close()
	})
	base := "http://" + addr
	// Ready, and the target in its scrape pool (Prometheus applies target
	// updates every 5 s): from then on it scrapes every second.
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/api/v1/targets")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 && strings.Contains(string(b), target) {
				return base
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logf.Name())
			t.Fatalf("prometheus did not list target %s after 30s: %v\n%s", target, err, b)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// promResult is the part of a /api/v1/query answer the test reads.
type promResult struct {
	Status string `json:"status"`
	Error  string `json:"error"`
	Data   struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Value  []any             `json:"value"`  // instant vector: [ts, "v"]
			Values [][]any           `json:"values"` // range vector: [[ts, "v"], ...]
		} `json:"result"`
	} `json:"data"`
}

func promQuery(t *testing.T, base, q string, at float64) promResult {
	t.Helper()
	v := url.Values{"query": {q}}
	if at > 0 {
		v.Set("time", strconv.FormatFloat(at, 'f', 3, 64))
	}
	resp, err := http.Get(base + "/api/v1/query?" + v.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var r promResult
	if err := json.Unmarshal(b, &r); err != nil || r.Status != "success" {
		t.Fatalf("query %s: %v %s\n%s", q, err, r.Error, b)
	}
	return r
}

// sample turns a [ts, "value"] pair into numbers.
func sample(t *testing.T, p []any) (ts, v float64) {
	t.Helper()
	ts, _ = p[0].(float64)
	v, err := strconv.ParseFloat(fmt.Sprint(p[1]), 64)
	if err != nil {
		t.Fatalf("sample %v: %v", p, err)
	}
	return ts, v
}

// A real Prometheus scrapes a running `lockbench run`; what it stored must
// agree with the run's own JSON within the scrape's resolution.
func TestLiveMetricsScrapedByRealPrometheus(t *testing.T) {
	redistest.Require(t)
	target := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	base := startPrometheus(t, target)
	out := filepath.Join(t.TempDir(), "run.json")
	cmd := exec.Command(binary, "run", "--local", "3", "--duration", "6s", "--warmup", "1s", "--workers", "4", "--keys", "1000",
		"--metrics-addr", target, "--json-out", out)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	promtoolCheck(t, "http://"+target+"/metrics")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("lockbench run: %v\n%s", err, stderr.String())
	}
	ended := float64(time.Now().UnixNano()) / 1e9 // no earlier than the run's end
	if resp, err := http.Get("http://" + target + "/metrics"); err == nil {
		resp.Body.Close()
		t.Fatal("the metrics endpoint still answers after the run ended")
	}
	var run results.Run
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	if run.Outcomes.Acquired == 0 {
		t.Fatal("the run acquired nothing: nothing to compare")
	}
	// Every stored sample of the counter (Prometheus keeps what it scraped).
	raw := promQuery(t, base, `lockbench_cycles_total{job="lockbench",scenario="run"}[5m]`, 0)
	if len(raw.Data.Result) != 1 || len(raw.Data.Result[0].Values) < 2 {
		t.Fatalf("want at least two scrapes of one lockbench_cycles_total series, got %+v", raw.Data.Result)
	}
	vals := raw.Data.Result[0].Values
	var ts, vs []float64
	for _, p := range vals {
		a, v := sample(t, p)
		ts, vs = append(ts, a), append(vs, v)
	}
	if !sort.Float64sAreSorted(vs) {
		t.Fatalf("the counter went down between scrapes: %v", vs)
	}
	// The cycles after the last scrape are those of the time from its
	// start to the run's end, measured (a scrape that timed out on a
	// loaded machine leaves two intervals, not one): at most 1.5× the
	// run's mean rate over that gap, for the rate's own swings.
	last, gap := vs[len(vs)-1], ended-ts[len(ts)-1]
	after := float64(run.Outcomes.Acquired) - last
	if limit := run.Throughput.CyclesPerSec*1.5*gap + 1; last > float64(run.Outcomes.Acquired) || !bound.Max(t, "metrics.cycles_after_last_scrape", after, limit) {
		t.Fatalf("last scraped cycles %v, %.2f s before the run ended; the run's JSON says %d acquired (%.0f/s): want the difference within that gap",
			last, gap, run.Outcomes.Acquired, run.Throughput.CyclesPerSec)
	}
	// rate() over the measured window, where the counter grew.
	from, to := -1, -1
	for i := 1; i < len(vs); i++ {
		if vs[i] > vs[i-1] {
			if from < 0 {
				from = i - 1
			}
			to = i
		}
	}
	if to-from < 3 {
		t.Fatalf("the counter grew over only %d scrapes: %v", to-from, vs)
	}
	window := ts[to] - ts[from]
	rate := promQuery(t, base, fmt.Sprintf(`rate(lockbench_cycles_total{scenario="run"}[%.0fs])`, math.Ceil(window)), ts[to])
	if len(rate.Data.Result) != 1 {
		t.Fatalf("rate: %+v", rate.Data.Result)
	}
	_, r := sample(t, rate.Data.Result[0].Value)
	t.Logf("cycles: JSON %d (%.0f/s), last scrape %v; Prometheus rate over %.1fs: %.0f/s", run.Outcomes.Acquired, run.Throughput.CyclesPerSec, last, window, r)
	// The JSON rate is over the whole window; Prometheus' over the scrapes
	// that saw it grow, extrapolated: they agree to within a scrape in
	// the window's seconds.
	if tol := 1.5 / window; math.Abs(r-run.Throughput.CyclesPerSec) > run.Throughput.CyclesPerSec*tol+1 {
		t.Errorf("rate %.0f/s vs the JSON's %.0f/s: more than %.0f%% apart", r, run.Throughput.CyclesPerSec, 100*tol)
	}
	// The p99 over everything scraped, from the buckets: it must fall in
	// the bucket step (≤ 1.5×) around the HDR p99 of the JSON.
	q := promQuery(t, base, `histogram_quantile(0.99, sum by (le) (lockbench_acquire_seconds_bucket{scenario="run"}))`, ts[len(ts)-1])
	if len(q.Data.Result) != 1 {
		t.Fatalf("histogram_quantile: %+v", q.Data.Result)
	}
	_, p99 := sample(t, q.Data.Result[0].Value)
	want := run.AcquireLatency.P99 / 1e6
	t.Logf("acquire p99: JSON %.0f µs, Prometheus %.0f µs", run.AcquireLatency.P99, p99*1e6)
	if math.IsNaN(p99) || p99 < want/1.5*0.99 || p99 > want*1.5*1.01 {
		t.Errorf("histogram_quantile(0.99) = %v s, JSON p99 = %v s: not within one bucket step", p99, want)
	}
	checkDashboardQueries(t, base, ts[len(ts)-1])
}

// checkDashboardQueries runs every query of the shipped Grafana dashboard
// on the Prometheus that scraped the run, with Grafana's variables filled
// in: each must parse, and return series when its metrics were scraped.
func checkDashboardQueries(t *testing.T, base string, at float64) {
	t.Helper()
	b, err := os.ReadFile("deploy/grafana/lockbench.json")
	if err != nil {
		t.Fatal(err)
	}
	exprs := regexp.MustCompile(`"expr": "((?:[^"\\]|\\.)*)"`).FindAllStringSubmatch(string(b), -1)
	if len(exprs) == 0 {
		t.Fatal("no queries in the dashboard")
	}
	fill := strings.NewReplacer("$__rate_interval", "5s", "$scenario", ".*", "$segment", ".*")
	for _, m := range exprs {
		var q string
		if err := json.Unmarshal([]byte(`"`+m[1]+`"`), &q); err != nil {
			t.Fatal(err)
		}
		r := promQuery(t, base, fill.Replace(q), at)      // fails the test unless it parses and runs
		uncorrected := strings.Contains(q, "uncorrected") // closed loop: that histogram has no data
		if len(r.Data.Result) == 0 && !uncorrected {
			t.Errorf("dashboard query returned nothing after a run: %s", q)
		}
	}
}

// promtoolCheck scrapes a live endpoint once the run's cells are counting
// and has promtool lint what it serves.
func promtoolCheck(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var body []byte
	for !strings.Contains(string(body), "lockbench_cycles_total{") {
		if time.Now().After(deadline) {
			t.Fatalf("%s served no cycles counter within 30s:\n%s", url, body)
		}
		time.Sleep(200 * time.Millisecond)
		resp, err := http.Get(url)
		if err != nil {
			continue
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	cmd := exec.Command("promtool", "check", "metrics")
	cmd.Stdin = strings.NewReader(string(body))
	if out, err := cmd.CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("promtool check metrics on a live run: %v\n%s", err, out)
	}
}

func TestMetricsAddrBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--metrics-addr", "9464"},
		{"sweep", "-f", "quickstart", "--metrics-addr", "localhost"},
		{"chaos", "-f", "crash", "--metrics-addr", "x:y"},
		{"masters", "--metrics-addr", "1.2.3.4:99999"},
	} {
		_, stderr, code := lockbench(t, args...)
		if code != cli.Usage || !strings.Contains(stderr, "metrics-addr: ") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line naming metrics-addr", args, code, stderr)
		}
	}
}

// The YAML key of sweep and chaos scenarios: checked like the flag, and
// the flag overrides it.
func TestMetricsAddrYAMLKey(t *testing.T) {
	dir := t.TempDir()
	sweepFile := filepath.Join(dir, "s.yaml")
	chaosFile := filepath.Join(dir, "c.yaml")
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(sweepFile, []byte("name: s\nmetrics_addr: nope\nsettings: {duration: 1s}\n"), 0o644))
	must(os.WriteFile(chaosFile, []byte("name: c\nmetrics_addr: nope\nsettings: {duration: 1s}\n"), 0o644))
	for _, cmd := range [][]string{{"sweep", "-f", sweepFile, "--dry-run"}, {"chaos", "-f", chaosFile, "--dry-run"}} {
		if _, stderr, code := lockbench(t, cmd...); code != cli.Usage || !strings.Contains(stderr, `metrics-addr: "nope" is not accepted`) {
			t.Errorf("%v with metrics_addr: nope: exit %d, %q; want exit 2 naming metrics-addr", cmd, code, stderr)
		}
		if _, stderr, code := lockbench(t, append(cmd, "--metrics-addr", "127.0.0.1:0")...); code != 0 {
			t.Errorf("%v: the flag must override the file's key: exit %d, %q", cmd, code, stderr)
		}
	}
}
