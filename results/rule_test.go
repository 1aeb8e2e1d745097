package results

import (
	"math"
	"strings"
	"testing"
)

// The one parser: a threshold's METRIC OP VALUE and expect:'s map form
// read into the same rule.
func TestParseRule(t *testing.T) {
	cases := []struct {
		metric string // "": the expression form
		in     string
		want   Rule
	}{
		{"", "acquire.p99<10ms", Rule{Metric: "acquire.p99", Op: "<", Value: 10000}},
		{"", "acquire.p50 <= 500µs", Rule{Metric: "acquire.p50", Op: "<=", Value: 500}},
		{"", "release.p999<50ms", Rule{Metric: "release.p999", Op: "<", Value: 50000}},
		{"", "failed.max<1.5s", Rule{Metric: "failed.max", Op: "<", Value: 1.5e6}},
		{"", "acquire.mean<250000ns", Rule{Metric: "acquire.mean", Op: "<", Value: 250}},
		{"", "time_to_lock.p99<20ms", Rule{Metric: "time_to_lock.p99", Op: "<", Value: 20000}},
		{"", "success>=99.5%", Rule{Metric: "success", Op: ">=", Value: 0.995}},
		{"", "throughput>=10000", Rule{Metric: "throughput", Op: ">=", Value: 10000}},
		{"", "violations==0", Rule{Metric: "violations", Op: "==", Value: 0}},
		{"", "lost_updates=0", Rule{Metric: "lost_updates", Op: "==", Value: 0}},
		{"", "  gave_up > 0 ", Rule{Metric: "gave_up", Op: ">", Value: 0}},
		{"violations", ">0", Rule{Metric: "violations", Op: ">", Value: 0}},
		{"violations", "0", Rule{Metric: "violations", Op: "==", Value: 0}},
		{"acquisitions", ">=100000", Rule{Metric: "acquisitions", Op: ">=", Value: 100000}},
		{"lost_updates", "=2", Rule{Metric: "lost_updates", Op: "==", Value: 2}},
		{"unavailable_s", "<5", Rule{Metric: "unavailable_s", Op: "<", Value: 5}},
		{"unavailable_s", "<500ms", Rule{Metric: "unavailable_s", Op: "<", Value: 0.5}},
		{"acquire.p99", "<10ms", Rule{Metric: "acquire.p99", Op: "<", Value: 10000}},
	}
	for _, c := range cases {
		got, err := parseEither(c.metric, c.in)
		if err != nil {
			t.Errorf("%s %q: %v", c.metric, c.in, err)
			continue
		}
		if got.Metric != c.want.Metric || got.Op != c.want.Op || math.Abs(got.Value-c.want.Value) > 1e-9 {
			t.Errorf("%s %q parsed as %+v, want %+v", c.metric, c.in, got, c.want)
		}
		// The recorded condition reads back as the same rule.
		back, err := ParseCondition(ScopeExpect, got.Metric, got.Cond())
		if err != nil || back.Op != got.Op || math.Abs(back.Value-got.Value) > 1e-9 {
			t.Errorf("%s %q: condition %q reads back as %+v, %v", c.metric, c.in, got.Cond(), back, err)
		}
	}
}

// Bad input is one line naming the field, the value and the accepted form.
func TestParseRuleBad(t *testing.T) {
	cases := []struct{ metric, in, want string }{
		{"", "", "threshold: "},
		{"", "acquire.p99", "threshold: "},
		{"", "acquire.p99<10", "needs a unit"},
		{"", "acquire.p98<10ms", `"acquire.p98" is not a metric`},
		{"", "lock.p99<10ms", "is not a metric"},
		{"", "acquire.p99<10xs", "not a duration unit"},
		{"", "success>=high", "threshold: "},
		{"", "throughput>=10k", "plain number"},
		{"", "acquire.p99=<10ms", "threshold: "},
		{"", "success>=0.99ms", "ratio or a percentage"},
		{"violations", "lots", `expect: violations: "lots": not a condition OP VALUE`},
		{"happiness", "1", `"happiness" is not a metric`},
		{"violations", ">", "expect: violations: "},
		{"unavailable_s", "<5m", "takes seconds"},
	}
	for _, c := range cases {
		_, err := parseEither(c.metric, c.in)
		if err == nil {
			t.Errorf("%s %q: no error", c.metric, c.in)
			continue
		}
		msg := err.Error()
		field, form := "threshold: ", "accepted: METRIC OP VALUE"
		if c.metric != "" {
			field, form = "expect: "+c.metric+": ", "accepted: a condition OP VALUE"
		}
		if !strings.HasPrefix(msg, field) || !strings.Contains(msg, c.want) || !strings.Contains(msg, form) ||
			!strings.Contains(msg, "violations") || strings.Contains(msg, "\n") {
			t.Errorf("%s %q: error %q: want one line starting %q with %q and the accepted form", c.metric, c.in, msg, field, c.want)
		}
	}
}

func parseEither(metric, in string) (Rule, error) {
	if metric == "" {
		return ParseRule(ScopeThreshold, in)
	}
	return ParseCondition(ScopeExpect, metric, in)
}

func mustRules(t *testing.T, exprs ...string) []Rule {
	t.Helper()
	rs, err := ParseThresholds(exprs)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// faultRun is a fault cell's result that recorded its expectations.
func faultRun(label string, violations int64, expect map[string]string) Run {
	return Run{Cell: &CellInfo{Label: label}, Outcomes: Outcomes{Tally: Tally{Acquired: 100}},
		Safety: Safety{Violations: violations, ResourceChecked: true, Verdict: Met},
		Config: &CellConfig{Expect: expect, ChaosConfig: &ChaosConfig{}}}
}

// A cell's own expectation replaces a scenario-wide rule on its metric;
// the scenario's rule still binds the other cells.
func TestRuleScope(t *testing.T) {
	runs := []Run{faultRun("expects-red", 3, map[string]string{"violations": ">0"}), faultRun("plain", 3, nil)}
	broken := CheckRules(runs, mustRules(t, "violations==0"))
	if len(broken) != 1 || broken[0].Cell != "plain" || broken[0].Scope != ScopeThreshold || broken[0].Actual != 3 {
		t.Fatalf("broken %+v; want only plain's violations==0 (expects-red expects violations>0)", broken)
	}
	runs[0].Safety.Violations = 0
	broken = CheckRules(runs[:1], mustRules(t, "violations==0"))
	if len(broken) != 1 || broken[0].Scope != ScopeExpect || !strings.Contains(broken[0].String(), `expectation violations >0 not met by cell "expects-red"`) {
		t.Fatalf("broken %+v; want the cell's own expectation not met", broken)
	}
}

// A figure the result did not measure is not judged, never a pass.
func TestNotMeasuredNotJudged(t *testing.T) {
	bench := Run{AcquireLatency: Latency{P99: 800, Count: 10}, Outcomes: Outcomes{Tally: Tally{Acquired: 10}}}
	for _, expr := range []string{"time_to_lock.p99<10ms", "lost_updates==0", "unavailable_s<5", "linearizable==1", "gave_up==0", "failed.p99<10ms"} {
		j := mustRules(t, expr)[0].Judge(&bench)
		if j.Status != NotJudged || j.Text != "not measured" {
			t.Errorf("%s on a benchmark cell: %+v, want not judged (not measured)", expr, j)
		}
	}
	if j := mustRules(t, "success>=0.99")[0].Judge(&Run{}); j.Status != NotJudged {
		t.Errorf("success on an idle cell: %+v, want not judged", j)
	}
	hold0 := bench
	hold0.Safety.NotJudged = "hold 0"
	b := CheckRules([]Run{hold0}, mustRules(t, "violations==0", "acquire.p99<1ms"))
	if len(b) != 1 || !b[0].NotJudged || b[0].ActualText != "not judged (hold 0)" || b[0].Cell != "run" || b[0].Actual != 0 {
		t.Errorf("hold 0: %+v, want violations==0 not judged and p99 met", b)
	}
	// A fault cell that judged nothing judged none of its own rules.
	r := faultRun("no-fault", 3, map[string]string{"violations": ">0"})
	r.Safety.Verdict, r.Safety.NotJudged = NotJudged, "the fault did not happen"
	if b := CheckRules([]Run{r}, nil); len(b) != 1 || !b[0].NotJudged || !strings.Contains(b[0].ActualText, "did not happen") {
		t.Errorf("a cell not judged: %+v", b)
	}
}

// Every metric the table names reads a figure from a full result.
func TestMetricTable(t *testing.T) {
	left, un, inPromise, exercised, held := int64(5), 1.5, int64(0), int64(2), int64(3)
	r := Run{AcquireLatency: Latency{P50: 1, P90: 2, P99: 3, P999: 4, Max: 5, Mean: 1, Count: 9},
		AcquireFailedLatency: Latency{P99: 1, Count: 1}, ReleaseLatency: Latency{P99: 1, Count: 1},
		Contention: &Contention{TimeToLock: Latency{P99: 7, Count: 3}, GaveUp: 1, GaveUpWait: &Latency{P99: 9, Count: 1}},
		Outcomes:   Outcomes{Tally: Tally{Acquired: 9, NotAcquired: 1}}, Throughput: Throughput{CyclesPerSec: 10},
		Safety: Safety{ResourceChecked: true, StockLeft: &left, ViolationsInPromise: &inPromise, Linearizability: &Linearizability{Verdict: Linearizable},
			ExercisedHolds: &exercised, HeldAtFaults: &held},
		Failovers: []Failover{{Unavailable: &un}}, Config: &CellConfig{ChaosConfig: &ChaosConfig{}}}
	for _, m := range Metrics {
		if v := m.Read(&r); math.IsNaN(v) {
			t.Errorf("%s: not measured in a full result", m.Name)
		}
	}
	if got, _ := LookupMetric("time_to_lock.p99"); got.Read(&r) != 7 {
		t.Errorf("time_to_lock.p99 = %v, want 7", got.Read(&r))
	}
}

// One name per figure across rules and compare's --fail-on: a rule takes
// compare's spelling (cycles_per_sec, acquire_p99) and compare the rules'
// (throughput, acquire.p99), each read as the same figure.
func TestRulesAndFiguresShareNames(t *testing.T) {
	for alias, want := range map[string]string{"cycles_per_sec>=1": "throughput", "acquire_p99<10ms": "acquire.p99", "time_to_lock_p50<1s": "time_to_lock.p50"} {
		rs, err := ParseThresholds([]string{alias})
		if err != nil || len(rs) != 1 || rs[0].Metric != want {
			t.Errorf("rule %q: %+v, %v; want metric %s", alias, rs, err, want)
		}
	}
	for alias, want := range map[string]string{"throughput": "cycles_per_sec", "acquire.p99": "acquire_p99", "time_to_lock.p99": "time_to_lock_p99"} {
		if f, ok := FigureByName(alias); !ok || f.Name != want {
			t.Errorf("figure %q: %q, %v; want %s", alias, f.Name, ok, want)
		}
	}
	if _, ok := LookupMetric("acquire_p42"); ok {
		t.Error("acquire_p42 accepted as a metric")
	}
}
