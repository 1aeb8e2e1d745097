package results

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Threshold is a pass/fail condition on one metric of every cell, such as
// acquire.p99<10ms. Latency values are held in microseconds.
type Threshold struct {
	Expr   string  `json:"expr"`   // as given, trimmed
	Metric string  `json:"metric"` // acquire.p99, success, throughput, ...
	Op     string  `json:"op"`     // < <= > >= ==
	Value  float64 `json:"value"`  // µs for latency metrics, else plain
}

// Broken is one threshold that one cell did not meet.
type Broken struct {
	Cell      string  `json:"cell"`
	Threshold string  `json:"threshold"`
	Actual    float64 `json:"actual"` // µs for latency metrics
	// ActualText is Actual with its unit, for messages.
	ActualText string `json:"actual_text"`
}

func (b Broken) String() string {
	return fmt.Sprintf("threshold %s broken by cell %q: actual %s", b.Threshold, b.Cell, b.ActualText)
}

// thresholdForm is what an error message offers as the accepted form.
const thresholdForm = "METRIC OP VALUE, e.g. acquire.p99<10ms, success>=0.99, throughput>=10000, violations==0; " +
	"metrics: acquire|failed|release.p50|p90|p99|p999|max|mean (value with a unit: ns, us, µs, ms, s), " +
	"success (ratio 0..1 or a percentage), throughput (cycles/s), violations, errors; ops: < <= > >= =="

var thresholdRE = regexp.MustCompile(`^([a-z_]+(?:\.[a-z0-9]+)?)\s*(<=|>=|==|<|>)\s*([-+0-9.eE]+)\s*([a-zA-Zµμ%]*)$`)

var latencyStats = map[string]bool{"p50": true, "p90": true, "p99": true, "p999": true, "max": true, "mean": true}

// ParseThreshold parses METRIC OP VALUE. Its errors name "threshold", the
// expression and the accepted form, on one line.
func ParseThreshold(s string) (Threshold, error) {
	expr := strings.TrimSpace(s)
	bad := func(why string) (Threshold, error) {
		return Threshold{}, &InputError{Field: "threshold", Value: s, Problem: why, Accepted: thresholdForm}
	}
	m := thresholdRE.FindStringSubmatch(expr)
	if m == nil {
		return bad("not of the form METRIC OP VALUE")
	}
	metric, op, num, unit := m[1], m[2], m[3], m[4]
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return bad(fmt.Sprintf("%q is not a number", num))
	}
	t := Threshold{Expr: expr, Metric: metric, Op: op}
	var why string
	if kind, stat, ok := strings.Cut(metric, "."); ok {
		t.Value, why = latencyValue(kind, stat, unit, v)
	} else {
		t.Value, why = plainValue(metric, unit, v)
	}
	if why != "" {
		return bad(why)
	}
	return t, nil
}

// latencyValue is a latency threshold's value in µs, or why it is not
// accepted.
func latencyValue(kind, stat, unit string, v float64) (float64, string) {
	if kind != MetricAcquire && kind != MetricFailed && kind != MetricRelease {
		return 0, fmt.Sprintf("%q is not a latency (acquire, failed, release)", kind)
	}
	if !latencyStats[stat] {
		return 0, fmt.Sprintf("%q is not a statistic (p50, p90, p99, p999, max, mean)", stat)
	}
	scale, ok := map[string]float64{"ns": 1e-3, "us": 1, "µs": 1, "μs": 1, "ms": 1e3, "s": 1e6}[unit]
	if !ok {
		if unit == "" {
			return 0, "a latency needs a unit (ns, us, µs, ms, s)"
		}
		return 0, fmt.Sprintf("%q is not a duration unit (ns, us, µs, ms, s)", unit)
	}
	return v * scale, ""
}

// plainValue is the value of a threshold on a metric without a unit (a
// success percentage becomes a ratio), or why it is not accepted.
func plainValue(metric, unit string, v float64) (float64, string) {
	switch metric {
	case "success":
		switch unit {
		case "":
			return v, ""
		case "%":
			return v / 100, ""
		}
		return 0, fmt.Sprintf("success takes a ratio or a percentage, not %q", unit)
	case "throughput", "violations", "errors":
		if unit != "" {
			return 0, fmt.Sprintf("%s takes a plain number, not %q", metric, unit)
		}
		return v, ""
	}
	return 0, fmt.Sprintf("%q is not a metric", metric)
}

func (t Threshold) String() string { return t.Expr }

// latency reports whether the metric is a latency in µs.
func (t Threshold) latency() bool { return strings.Contains(t.Metric, ".") }

// Actual is the value of t's metric in r: µs for latencies, cycles/s for
// throughput, a ratio for success.
func (t Threshold) Actual(r Run) float64 {
	kind, stat, ok := strings.Cut(t.Metric, ".")
	if ok {
		var l Latency
		switch kind {
		case MetricAcquire:
			l = r.AcquireLatency
		case MetricFailed:
			l = r.AcquireFailedLatency
		case MetricRelease:
			l = r.ReleaseLatency
		}
		return map[string]float64{"p50": l.P50, "p90": l.P90, "p99": l.P99, "p999": l.P999, "max": l.Max, "mean": l.Mean}[stat]
	}
	switch t.Metric {
	case "success":
		return SuccessRatio(r.Outcomes)
	case "throughput":
		return r.Throughput.CyclesPerSec
	case "violations":
		return float64(r.Safety.Violations)
	case "errors":
		return float64(r.Outcomes.Errors)
	}
	return math.NaN()
}

// Met reports whether actual satisfies t.
func (t Threshold) Met(actual float64) bool {
	switch t.Op {
	case "<":
		return actual < t.Value
	case "<=":
		return actual <= t.Value
	case ">":
		return actual > t.Value
	case ">=":
		return actual >= t.Value
	case "==":
		return actual == t.Value
	}
	return false
}

func (t Threshold) format(v float64) string {
	switch {
	case t.latency():
		return FormatMicros(v)
	case t.Metric == "success":
		return strconv.FormatFloat(v, 'f', 4, 64)
	case t.Metric == "throughput":
		return strconv.FormatFloat(v, 'f', 0, 64) + " cycles/s"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// CheckThresholds checks every threshold against every run and lists the
// broken ones, run by run.
func CheckThresholds(runs []Run, ths []Threshold) []Broken {
	var out []Broken
	for i, r := range runs {
		for _, t := range ths {
			a := t.Actual(r)
			if t.Metric == "violations" && r.Safety.NotJudged != "" {
				// The probe judged no hold: 0 violations proves nothing, so
				// a safety threshold cannot be met.
				out = append(out, Broken{Cell: runLabel(r, i, len(runs)), Threshold: t.Expr, Actual: a,
					ActualText: "not judged (" + r.Safety.NotJudged + ")"})
				continue
			}
			if t.Met(a) {
				continue
			}
			out = append(out, Broken{Cell: runLabel(r, i, len(runs)), Threshold: t.Expr, Actual: a, ActualText: t.format(a)})
		}
	}
	return out
}

func runLabel(r Run, i, n int) string {
	if r.Cell != nil {
		if r.Cell.Label != "" {
			return r.Cell.Label
		}
		if r.Cell.ID != "" {
			return r.Cell.ID
		}
	}
	if n == 1 {
		return "run"
	}
	return fmt.Sprintf("run %d", i+1)
}

// SuccessRatio is acquired / attempts (acquired, not acquired, errors and
// few acks); 0 when nothing was attempted, so that an idle cell never
// passes an SLO.
func SuccessRatio(o Outcomes) float64 {
	n := o.Attempts()
	if n == 0 {
		return 0
	}
	return float64(o.Acquired) / float64(n)
}

// ParseThresholds reads every expression; the first bad one is the error.
func ParseThresholds(exprs []string) ([]Threshold, error) {
	var out []Threshold
	for _, e := range exprs {
		t, err := ParseThreshold(e)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}
