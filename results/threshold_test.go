package results

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestThresholds(t *testing.T) {
	good := map[string]Threshold{
		"acquire.p99<10ms":       {Metric: "acquire.p99", Op: "<", Value: 10000},
		"acquire.p50<=500us":     {Metric: "acquire.p50", Op: "<=", Value: 500},
		"acquire.p50 <= 500µs":   {Metric: "acquire.p50", Op: "<=", Value: 500},
		"release.p999<50ms":      {Metric: "release.p999", Op: "<", Value: 50000},
		"failed.max<1.5s":        {Metric: "failed.max", Op: "<", Value: 1.5e6},
		"acquire.mean<250000ns":  {Metric: "acquire.mean", Op: "<", Value: 250},
		"success>=0.99":          {Metric: "success", Op: ">=", Value: 0.99},
		"success>=99.5%":         {Metric: "success", Op: ">=", Value: 0.995},
		"throughput>=10000":      {Metric: "throughput", Op: ">=", Value: 10000},
		"violations==0":          {Metric: "violations", Op: "==", Value: 0},
		"errors<=5":              {Metric: "errors", Op: "<=", Value: 5},
		"  acquire.p90 > 100us ": {Metric: "acquire.p90", Op: ">", Value: 100},
	}
	for in, want := range good {
		got, err := ParseThreshold(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if got.Metric != want.Metric || got.Op != want.Op || math.Abs(got.Value-want.Value) > 1e-9 {
			t.Errorf("%q parsed as %+v, want %+v", in, got, want)
		}
	}
	for _, in := range []string{"", "acquire.p99", "acquire.p99<10", "acquire.p98<10ms", "lock.p99<10ms", "acquire.p99<10xs",
		"success>=high", "throughput>=10k", "violations=0", "acquire.p99=<10ms", "latency<10ms", "success>=0.99ms"} {
		_, err := ParseThreshold(in)
		if err == nil {
			t.Errorf("%q: no error", in)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "threshold: ") || !strings.Contains(msg, fmt.Sprintf("%q", in)) || !strings.Contains(msg, "accepted: METRIC OP VALUE") || strings.Contains(msg, "\n") {
			t.Errorf("%q: error %q should be one line naming threshold, the expression and the accepted form", in, msg)
		}
	}

	run := func(label string, p99ms float64, acquired, notAcquired int64) Run {
		return Run{Cell: &CellInfo{Label: label}, AcquireLatency: Latency{P99: p99ms * 1000, Count: acquired},
			Outcomes: Outcomes{Acquired: acquired, NotAcquired: notAcquired}, Throughput: Throughput{CyclesPerSec: 12000}}
	}
	runs := []Run{run("slow", 12, 990, 10), run("fast", 8, 980, 20)}
	broken := CheckThresholds(runs, []Threshold{mustThreshold(t, "acquire.p99<10ms"), mustThreshold(t, "success>=0.99"),
		mustThreshold(t, "throughput>=10000"), mustThreshold(t, "violations==0")})
	if len(broken) != 2 {
		t.Fatalf("broken %+v, want slow's p99 and fast's success", broken)
	}
	if b := broken[0]; b.Cell != "slow" || b.Threshold != "acquire.p99<10ms" || b.Actual != 12000 || b.ActualText != "12 ms" {
		t.Errorf("first broken %+v", b)
	}
	if b := broken[1]; b.Cell != "fast" || b.Threshold != "success>=0.99" || b.Actual != 0.98 {
		t.Errorf("second broken %+v", b)
	}
	if !strings.Contains(broken[0].String(), "acquire.p99<10ms") || !strings.Contains(broken[0].String(), "slow") {
		t.Errorf("message %q should name the threshold and the cell", broken[0])
	}
	// A run whose probe judged nothing never meets a safety threshold.
	unjudged := run("hold0", 1, 1000, 0)
	unjudged.Safety.NotJudged = "hold 0"
	if b := CheckThresholds([]Run{unjudged}, []Threshold{mustThreshold(t, "violations==0")}); len(b) != 1 || b[0].ActualText != "not judged (hold 0)" {
		t.Errorf("not judged: %+v, want violations==0 broken as not judged", b)
	}
	// A run without a cell (lockbench run) is named plainly.
	if b := CheckThresholds([]Run{{AcquireLatency: Latency{P99: 20000}}}, []Threshold{mustThreshold(t, "acquire.p99<=10ms")}); len(b) != 1 || b[0].Cell != "run" {
		t.Errorf("single run: %+v", b)
	}
}

func mustThreshold(t *testing.T, s string) Threshold {
	t.Helper()
	th, err := ParseThreshold(s)
	if err != nil {
		t.Fatal(err)
	}
	return th
}
