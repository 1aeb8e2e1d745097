package results

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// A rule's scope: where it was written, and so which cells it binds.
const (
	// ScopeThreshold: scenario-wide (--threshold, report.thresholds),
	// binding every cell.
	ScopeThreshold = "threshold"
	// ScopeExpect: a cell's own (expect:, --expect). It replaces a
	// scenario-wide rule on the same metric: a global violations==0 does
	// not fail a cell that expects violations>0.
	ScopeExpect = "expect"
)

// Rule is one judgement on one metric of the table, such as
// acquire.p99<10ms or violations>0: a threshold or an expectation, the
// one grammar of both. Latency values are held in µs, ratios as 0..1.
type Rule struct {
	Expr   string  `json:"expr"`   // as given, trimmed
	Metric string  `json:"metric"` // a name of the metric table
	Op     string  `json:"op"`     // < <= > >= ==
	Value  float64 `json:"value"`  // in the metric's unit
	Scope  string  `json:"scope,omitempty"`
}

// ruleRE is METRIC OP VALUE[UNIT]; = is ==, as expect: always took it.
var ruleRE = regexp.MustCompile(`^([a-z_][a-z0-9_]*(?:\.[a-z0-9]+)?)\s*(<=|>=|==|=|<|>)\s*([-+0-9.eE]+)\s*([a-zA-Zµμ%]*)$`)

// ruleForm and condForm are what errors offer as the accepted forms.
func ruleForm() string {
	return "METRIC OP VALUE, e.g. acquire.p99<10ms, success>=0.99, throughput>=10000, violations==0; ops: < <= > >= == =; " +
		"metrics: " + metricsText() + "; success and availability take a ratio 0..1 or a percentage"
}

func condForm() string {
	return `a condition OP VALUE such as ">0", "0" (==), ">=100000" or "<10ms" (ops: < <= > >= == =) on one of ` + metricsText()
}

// ParseRule parses METRIC OP VALUE; scope (ScopeThreshold, ScopeExpect)
// is the field its errors name, on one line with the accepted form.
func ParseRule(scope, s string) (Rule, error) {
	r, why := parseRule(s)
	if why != "" {
		return Rule{}, &InputError{Field: scope, Value: s, Problem: why, Accepted: ruleForm()}
	}
	r.Scope = scope
	return r, nil
}

// ParseCondition parses expect:'s map form, metric: ">0"; a condition
// without an operator is ==.
func ParseCondition(scope, metric, cond string) (Rule, error) {
	c := strings.TrimSpace(cond)
	if c != "" && !strings.ContainsAny(c[:1], "<>=") {
		c = "==" + c
	}
	r, why := parseRule(metric + c)
	if why == notRuleForm {
		why = "not a condition OP VALUE"
	}
	if why != "" {
		return Rule{}, &InputError{Field: scope + ": " + metric, Value: cond, Problem: why, Accepted: condForm()}
	}
	r.Scope = scope
	r.Expr = r.String()
	return r, nil
}

const notRuleForm = "not of the form METRIC OP VALUE"

// parseRule reads a rule, or says why it is not one.
func parseRule(s string) (Rule, string) {
	expr := strings.TrimSpace(s)
	m := ruleRE.FindStringSubmatch(expr)
	if m == nil {
		return Rule{}, notRuleForm
	}
	name, op, num, unit := m[1], m[2], m[3], m[4]
	if op == "=" {
		op = "=="
	}
	metric, ok := LookupMetric(name)
	if !ok {
		return Rule{}, fmt.Sprintf("%q is not a metric", name)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return Rule{}, fmt.Sprintf("%q is not a number", num)
	}
	v, why := scaled(metric, unit, v)
	if why != "" {
		return Rule{}, why
	}
	return Rule{Expr: expr, Metric: metric.Name, Op: op, Value: v}, "" // one name, however it was spelt
}

// durations are the units a latency or a time takes, in µs.
var durations = map[string]float64{"ns": 1e-3, "us": 1, "µs": 1, "μs": 1, "ms": 1e3, "s": 1e6}

// scaled is v in the metric's unit, or why its unit is not accepted.
func scaled(m Metric, unit string, v float64) (float64, string) {
	switch m.Unit {
	case UnitMicros:
		if scale, ok := durations[unit]; ok {
			return v * scale, ""
		}
		if unit == "" {
			return 0, "a latency needs a unit (ns, us, µs, ms, s)"
		}
		return 0, fmt.Sprintf("%q is not a duration unit (ns, us, µs, ms, s)", unit)
	case UnitSeconds:
		if unit == "" {
			return v, ""
		}
		if scale, ok := durations[unit]; ok {
			return v * scale / 1e6, ""
		}
		return 0, fmt.Sprintf("%s takes seconds or a duration unit (ns, us, µs, ms, s), not %q", m.Name, unit)
	case UnitRatio:
		switch unit {
		case "":
			return v, ""
		case "%":
			return v / 100, ""
		}
		return 0, fmt.Sprintf("%s takes a ratio or a percentage, not %q", m.Name, unit)
	}
	if unit != "" {
		return 0, fmt.Sprintf("%s takes a plain number, not %q", m.Name, unit)
	}
	return v, ""
}

// String is the rule in a canonical form: metric, space, condition.
func (r Rule) String() string { return r.Metric + " " + r.Cond() }

// Cond is the condition alone, as expect:'s map form takes it back:
// ">0", "==0", "<10000us".
func (r Rule) Cond() string {
	s := r.Op + strconv.FormatFloat(r.Value, 'g', -1, 64)
	if m, _ := LookupMetric(r.Metric); m.Unit == UnitMicros {
		s += "us"
	}
	return s
}

// Holds reports whether v meets the rule; NaN (not measured) never does.
func (r Rule) Holds(v float64) bool {
	switch r.Op {
	case "<":
		return v < r.Value
	case "<=":
		return v <= r.Value
	case ">":
		return v > r.Value
	case ">=":
		return v >= r.Value
	}
	return math.Abs(v-r.Value) < 1e-9
}

// ParseThresholds reads scenario-wide rules; the first bad one is the
// error.
func ParseThresholds(exprs []string) ([]Rule, error) {
	var out []Rule
	for _, e := range exprs {
		r, err := ParseRule(ScopeThreshold, e)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
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
