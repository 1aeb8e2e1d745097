package metrics

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	"lockbench/internal/redistest"
	"lockbench/lock"
	"lockbench/redislock/engine"
	"lockbench/results"
	"lockbench/workloads"
)

var labels = Labels{Scenario: "s", Cell: "000-mode=multiplexed", Segment: "1/2", Mode: "multiplexed", Wait: "all", Persistence: "none", Driver: "lockbench"}

// exercise calls every Cell method once or more.
func exercise(c *Cell) {
	ok := []engine.Outcome{engine.OK, engine.OK, engine.Taken}
	c.SetWorkers(4)
	c.AcquireStarted()
	c.AcquireEnded()
	cycle(c, 800*time.Microsecond, 700*time.Microsecond, 300*time.Microsecond, ok)
	cycle(c, 2*time.Millisecond, -1, 400*time.Microsecond, ok)
	c.Fold(failedAcquire(5*time.Millisecond, []engine.Outcome{engine.Timeout, engine.Error, engine.Pending}))
	c.Fold(failedAcquire(time.Millisecond, []engine.Outcome{engine.Taken, engine.Taken, engine.OK}))
	c.Fold(&workloads.Record{Op: workloads.OpExtend, Measured: true, Reply: lock.OpResult{OK: true}})
	c.Fold(&workloads.Record{Op: workloads.OpExtend, Measured: true})
	c.Fold(&workloads.Record{Op: workloads.OpUse, Judged: true}) // an overlap the probe saw
	c.SetRate(500)
	c.Started(30 * time.Microsecond)
	c.Scheduled(10, 2)
	c.LostUpdates(3)
	c.LostUpdates(-1) // a negative deficit is not a counter decrease
	c.Fold(&workloads.Record{Op: workloads.OpUse, Clear: true, Rejected: true})
	c.SetLinearizable("not linearizable")
}

// cycle folds a won acquire of latency acquire (open loop when
// uncorrected ≥ 0) and its release.
func cycle(c *Cell, acquire, uncorrected, release time.Duration, outs []engine.Outcome) {
	won, rel := cycleRecords(acquire, uncorrected, release, outs)
	c.Fold(won)
	c.Fold(rel)
}

func cycleRecords(acquire, uncorrected, release time.Duration, outs []engine.Outcome) (won, rel *workloads.Record) {
	t := time.Unix(1000, 0)
	start := t
	if uncorrected >= 0 {
		start = t.Add(acquire - uncorrected)
	}
	return &workloads.Record{Op: workloads.OpAcquire, Measured: true, Intended: t, Start: start, End: t.Add(acquire), OpenLoop: uncorrected >= 0,
			Lock: &lock.Lock{}, Result: lock.Result{Acquired: true, PerMaster: outs}},
		&workloads.Record{Op: workloads.OpRelease, Measured: true, Reply: lock.OpResult{OK: true, Elapsed: release}}
}

// failedAcquire is a measured acquire that failed after latency, its
// servers' outcomes saying why.
func failedAcquire(latency time.Duration, outs []engine.Outcome) *workloads.Record {
	t := time.Unix(1000, 0)
	return &workloads.Record{Op: workloads.OpAcquire, Measured: true, Intended: t, Start: t, End: t.Add(latency),
		Result: lock.Result{Successes: 1, PerMaster: outs}}
}

func exposition(t *testing.T, e *Exporter) []byte {
	t.Helper()
	mfs, err := e.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&buf, mf); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// promtool's linter is the judge of the names, types, units and help.
func TestExpositionPassesPromtool(t *testing.T) {
	path, err := exec.LookPath("promtool")
	if err != nil {
		err = errors.New("promtool not installed (apt-get install prometheus)")
	}
	redistest.RequireTool(t, err)
	e := New(Options{Version: "test"})
	defer e.Close()
	exercise(e.Cell(labels, []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}))
	e.WatchMasters([]string{"127.0.0.1:1", "127.0.0.1:2"}, func(_ context.Context, addr string) (ServerReading, error) {
		if addr == "127.0.0.1:2" {
			return ServerReading{}, errors.New("down")
		}
		return ServerReading{CPUSeconds: 3.75, Clients: 3, Commands: 42}, nil
	})
	text := exposition(t, e)
	for _, want := range []string{`lockbench_master_up{master="127.0.0.1:2"} 0`, `lockbench_master_cpu_seconds_total{master="127.0.0.1:1"} 3.75`,
		`lockbench_master_commands_processed_total{master="127.0.0.1:1"} 42`} {
		if !bytes.Contains(text, []byte(want)) {
			t.Errorf("exposition lacks %s", want)
		}
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
	for _, name := range ExportedNames() {
		if !bytes.Contains(text, []byte("# TYPE "+name+" ")) {
			t.Errorf("%s is not in the exposition", name)
		}
	}
}

// A later cell's masters replace the earlier ones' (a sweep's cells each
// watch theirs); watching twice must not register twice.
func TestWatchMastersAgainWatchesTheNewOnes(t *testing.T) {
	e := New(Options{Version: "test"})
	defer e.Close()
	info := func(context.Context, string) (ServerReading, error) { return ServerReading{CPUSeconds: 1}, nil }
	e.WatchMasters([]string{"127.0.0.1:1"}, info)
	e.WatchMasters([]string{"127.0.0.1:2"}, info)
	text := exposition(t, e)
	if !bytes.Contains(text, []byte(`lockbench_master_up{master="127.0.0.1:2"} 1`)) || bytes.Contains(text, []byte(`master="127.0.0.1:1"`)) {
		t.Fatalf("exposition after the second watch:\n%s", text)
	}
}

// A cell shows a linearizability verdict only once one came: no 0 (not
// linearizable) that nothing judged.
func TestLinearizableOnlyWhenJudged(t *testing.T) {
	e := New(Options{Version: "test"})
	defer e.Close()
	c := e.Cell(labels, nil)
	if bytes.Contains(exposition(t, e), []byte("lockbench_linearizable{")) {
		t.Fatal("a cell that was never judged shows a linearizability verdict")
	}
	for verdict, want := range map[string]string{"linearizable": "} 1", "not linearizable": "} 0", "unknown": "} -1"} {
		c.SetLinearizable(verdict)
		text := exposition(t, e)
		i := bytes.Index(text, []byte("lockbench_linearizable{"))
		if i < 0 || !bytes.Contains(text[i:i+bytes.IndexByte(text[i:], '\n')], []byte(want)) {
			t.Errorf("%s: exposition lacks lockbench_linearizable ...%s", verdict, want)
		}
	}
}

func TestCellCounts(t *testing.T) {
	e := New(Options{})
	c := e.Cell(labels, []string{"m1", "m2", "m3"})
	exercise(c)
	lv := labels.values()
	with := func(extra ...string) []string { return append(append([]string(nil), lv...), extra...) }
	checks := []struct {
		name string
		got  float64
		want float64
	}{
		{"cycles", testutil.ToFloat64(e.vec.cycles.WithLabelValues(lv...)), 2},
		{"acquired", testutil.ToFloat64(e.vec.acquires.WithLabelValues(with("acquired")...)), 2},
		{"not_acquired", testutil.ToFloat64(e.vec.acquires.WithLabelValues(with("not_acquired")...)), 1},
		{"error", testutil.ToFloat64(e.vec.acquires.WithLabelValues(with("error")...)), 1},
		{"m1 ok", testutil.ToFloat64(e.vec.masterReplies.WithLabelValues(with("m1", "ok")...)), 2},
		{"m1 timeout", testutil.ToFloat64(e.vec.masterReplies.WithLabelValues(with("m1", "timeout")...)), 1},
		{"m3 taken", testutil.ToFloat64(e.vec.masterReplies.WithLabelValues(with("m3", "taken")...)), 2},
		{"m3 ok", testutil.ToFloat64(e.vec.masterReplies.WithLabelValues(with("m3", "ok")...)), 1},
		{"extend ok", testutil.ToFloat64(e.vec.extends.WithLabelValues(with("ok")...)), 1},
		{"lost", testutil.ToFloat64(e.vec.lostUpdates.WithLabelValues(lv...)), 3},
		{"unserved", testutil.ToFloat64(e.vec.unserved.WithLabelValues(lv...)), 2},
		{"in flight", testutil.ToFloat64(e.vec.inFlight.WithLabelValues(lv...)), 0},
		{"workers", testutil.ToFloat64(e.vec.workers.WithLabelValues(lv...)), 4},
		{"pacer lag", testutil.ToFloat64(e.vec.pacerLag.WithLabelValues(lv...)), 30e-6},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	if n := testutil.CollectAndCount(e.vec.masterReplies); n != 3*int(engine.NumOutcomes) {
		t.Errorf("%d per-master series, want 3 masters × %d outcomes", n, engine.NumOutcomes)
	}
	if got := testutil.ToFloat64(e.vec.masterReplies.WithLabelValues(with("m3", "pending")...)); got != 1 {
		t.Errorf("m3 pending: %v, want 1", got)
	}
}

// The cell is a label: a sweep's second cell leaves the first one's series
// as they were, so every counter only grows over the run.
func TestCountersMonotonicAcrossCells(t *testing.T) {
	e := New(Options{})
	a := e.Cell(labels, []string{"m1"})
	cycle(a, time.Millisecond, -1, time.Millisecond, []engine.Outcome{engine.OK})
	second := labels
	second.Cell = "001-mode=sequential"
	b := e.Cell(second, []string{"m1"})
	cycle(b, time.Millisecond, -1, time.Millisecond, []engine.Outcome{engine.OK})
	cycle(b, time.Millisecond, -1, time.Millisecond, []engine.Outcome{engine.OK})
	if got := testutil.ToFloat64(e.vec.cycles.WithLabelValues(labels.values()...)); got != 1 {
		t.Errorf("first cell's cycles = %v after the second ran, want 1", got)
	}
	if got := testutil.ToFloat64(e.vec.cycles.WithLabelValues(second.values()...)); got != 2 {
		t.Errorf("second cell's cycles = %v, want 2", got)
	}
	again := e.Cell(labels, []string{"m1"}) // a repeated cell id continues its series
	cycle(again, time.Millisecond, -1, time.Millisecond, []engine.Outcome{engine.OK})
	if got := testutil.ToFloat64(e.vec.cycles.WithLabelValues(labels.values()...)); got != 2 {
		t.Errorf("repeated cell's cycles = %v, want 2 (never reset)", got)
	}
}

func TestLatencyBucketsResolve100usTo10s(t *testing.T) {
	b := LatencyBuckets
	if b[0] != 1e-4 || b[len(b)-1] != 10 {
		t.Fatalf("buckets span %v..%v, want 0.0001..10", b[0], b[len(b)-1])
	}
	for i := 1; i < len(b); i++ {
		if r := b[i] / b[i-1]; r <= 1 || r > 1.5+1e-9 {
			t.Errorf("bucket %v → %v: step %.3f, want 1 < step ≤ 1.5", b[i-1], b[i], r)
		}
	}
}

// The workers call these on every cycle: they must not allocate.
func TestCellHotPathDoesNotAllocate(t *testing.T) {
	c := New(Options{}).Cell(labels, []string{"m1", "m2", "m3"})
	outs := []engine.Outcome{engine.OK, engine.OK, engine.Taken}
	won, rel := cycleRecords(2*time.Millisecond, time.Millisecond, time.Millisecond, outs) // open loop: its uncorrected latency too
	failed := failedAcquire(time.Millisecond, outs)
	n := testing.AllocsPerRun(1000, func() {
		c.AcquireStarted()
		c.AcquireEnded()
		c.Fold(won)
		c.Fold(rel)
		c.Fold(failed)
	})
	if n != 0 {
		t.Fatalf("%v allocations per cycle, want 0", n)
	}
}

func TestServeAndClose(t *testing.T) {
	e, err := Serve("127.0.0.1:0", Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + e.Addr() + "/metrics"
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `lockbench_build_info{version="test"} 1`) {
		t.Fatalf("GET /metrics: %d\n%s", resp.StatusCode, body)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(url); err == nil {
		t.Fatal("the endpoint still answers after Close; it must end with the run")
	}
	if _, err := Serve(e.Addr(), Options{}); err != nil {
		t.Logf("port reuse after close: %v", err) // not judged: the OS may hold the port
	}
}

func TestCheckAddr(t *testing.T) {
	for _, ok := range []string{"127.0.0.1:9464", ":9464", "[::1]:0", "localhost:9090"} {
		if err := CheckAddr(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "9464", "127.0.0.1", "host:port", "1.2.3.4:70000", "http://x:1"} {
		err := CheckAddr(bad)
		if err == nil || !strings.HasPrefix(err.Error(), "metrics-addr: ") {
			t.Errorf("%q: %v, want a metrics-addr error", bad, err)
		}
	}
}

func TestBusyAddrIsAnError(t *testing.T) {
	e, err := Serve("127.0.0.1:0", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := Serve(e.Addr(), Options{}); err == nil || !strings.HasPrefix(err.Error(), "metrics-addr: ") {
		t.Fatalf("second listener on %s: %v, want a metrics-addr error", e.Addr(), err)
	}
}

// BenchmarkCellCycle is a cycle's cost to the workers with metrics on: the
// in-flight bracket and a won acquire's and its release's records on 5
// masters, from many goroutines.
func BenchmarkCellCycle(b *testing.B) {
	c := New(Options{}).Cell(labels, []string{"m1", "m2", "m3", "m4", "m5"})
	outs := []engine.Outcome{engine.OK, engine.OK, engine.OK, engine.OK, engine.OK}
	won, rel := cycleRecords(800*time.Microsecond, -1, 300*time.Microsecond, outs)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c.AcquireStarted()
			c.AcquireEnded()
			c.Fold(won)
			c.Fold(rel)
		}
	})
}

// A chaos client process's counts arrive in bulk and land on the same series.
func TestCellAddTally(t *testing.T) {
	e := New(Options{})
	c := e.Cell(labels, []string{"m1", "m2"})
	pm := make([][engine.NumOutcomes]int64, 2)
	pm[1][engine.Timeout] = 4
	c.AddCounts(workloads.Counts{Tally: results.Tally{Acquired: 7, NotAcquired: 2, Errors: 1}, Violations: 3, LostUpdates: 5, StaleWritesRejected: 6, PerMaster: pm})
	c.AddCounts(workloads.Counts{LostUpdates: -1}) // a negative deficit is not a decrease
	lv := labels.values()
	with := func(extra ...string) []string { return append(append([]string(nil), lv...), extra...) }
	for name, c := range map[string]struct{ got, want float64 }{
		"cycles":       {testutil.ToFloat64(e.vec.cycles.WithLabelValues(lv...)), 7},
		"acquired":     {testutil.ToFloat64(e.vec.acquires.WithLabelValues(with("acquired")...)), 7},
		"not_acquired": {testutil.ToFloat64(e.vec.acquires.WithLabelValues(with("not_acquired")...)), 2},
		"violations":   {testutil.ToFloat64(e.vec.violations.WithLabelValues(lv...)), 3},
		"lost":         {testutil.ToFloat64(e.vec.lostUpdates.WithLabelValues(lv...)), 5},
		"rejected":     {testutil.ToFloat64(e.vec.staleWrites.WithLabelValues(lv...)), 6},
		"m2 timeout":   {testutil.ToFloat64(e.vec.masterReplies.WithLabelValues(with("m2", "timeout")...)), 4},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", name, c.got, c.want)
		}
	}
}
