package results

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// A rule's judgement on one result.
const (
	Met       = "met"
	NotMet    = "not met"
	NotJudged = "not judged" // the figure was not measured: never a pass
	// NotExercised: no fault of the cell met a holder inside its critical
	// section when its lock could be handed on; never a pass.
	NotExercised = "not exercised"
)

// Judged is one rule weighed on one result.
type Judged struct {
	Rule   Rule
	Actual float64 // NaN: not measured
	Status string  // Met, NotMet or NotJudged
	Text   string  // the figure with its unit, or why it was not judged
}

// Judge weighs r against the rule.
func (rule Rule) Judge(r *Run) Judged {
	j := Judged{Rule: rule, Actual: math.NaN(), Status: NotJudged}
	m, ok := LookupMetric(rule.Metric)
	switch {
	case !ok:
		j.Text = "not a metric of this version"
	case m.Probe && r.Safety.NotJudged != "":
		// The probe judged no hold: its 0 violations prove nothing.
		j.Text = "not judged (" + r.Safety.NotJudged + ")"
	default:
		j.Actual = m.Read(r)
		j.Text = m.Format(j.Actual)
		if !math.IsNaN(j.Actual) {
			j.Status = map[bool]string{true: Met, false: NotMet}[rule.Holds(j.Actual)]
		}
	}
	return j
}

// Effective is the rules a cell answers to: its own, and the
// scenario-wide ones on the metrics its own do not name.
func Effective(global, own []Rule) []Rule {
	var out []Rule
	for _, g := range global {
		if !slices.ContainsFunc(own, func(o Rule) bool { return o.Metric == g.Metric }) {
			out = append(out, g)
		}
	}
	return append(out, own...)
}

// JudgeAll weighs r against every rule, in order.
func JudgeAll(r *Run, rules []Rule) []Judged {
	out := make([]Judged, len(rules))
	for i, rule := range rules {
		out[i] = rule.Judge(r)
	}
	return out
}

// OwnRules are the expectations a fault cell recorded (its expect:, in
// metric order), read back with the one parser.
func OwnRules(r *Run) ([]Rule, error) {
	if r.Config == nil {
		return nil, nil
	}
	ex := r.Config.Expect
	keys := make([]string, 0, len(ex))
	for k := range ex {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []Rule
	for _, k := range keys {
		rule, err := ParseCondition(ScopeExpect, k, ex[k])
		if err != nil {
			return nil, err
		}
		out = append(out, rule)
	}
	return out, nil
}

// JudgeRun weighs a result against the scenario-wide rules and its own
// recorded expectations. A fault cell that could judge nothing (a fault
// that did not happen, an interrupt) judged none of its own rules,
// whatever its figures say.
func JudgeRun(r *Run, global []Rule) []Judged {
	own, err := OwnRules(r)
	if err != nil {
		return []Judged{{Rule: Rule{Expr: "expect", Scope: ScopeExpect}, Actual: math.NaN(), Status: NotJudged, Text: err.Error()}}
	}
	js := JudgeAll(r, Effective(global, own))
	why := cellNotJudged(r)
	for i := range js {
		if why != "" && js[i].Rule.Scope == ScopeExpect {
			js[i].Actual, js[i].Status, js[i].Text = math.NaN(), NotJudged, "not judged ("+why+")"
		}
	}
	return js
}

// cellNotJudged is why a fault cell's recorded verdict judged nothing
// ("" : it judged).
func cellNotJudged(r *Run) string {
	switch r.Safety.Verdict {
	case NotJudged:
		return r.Safety.NotJudged
	case "interrupted":
		return "interrupted"
	}
	return ""
}

// Broken is one rule that one cell did not meet, or could not be judged
// on.
type Broken struct {
	Cell string `json:"cell"`
	// Rule as written; the key keeps its name from when only thresholds
	// were checked here.
	Rule  string `json:"threshold"`
	Scope string `json:"scope,omitempty"` // threshold or expect
	// Actual is the figure (µs for latencies); 0 when not judged.
	Actual float64 `json:"actual"`
	// ActualText is Actual with its unit, or why it was not judged.
	ActualText string `json:"actual_text"`
	NotJudged  bool   `json:"not_judged,omitempty"`
}

func (b Broken) String() string {
	return fmt.Sprintf("%s %s %s cell %q: actual %s", b.Kind(), b.Rule, b.Verb(), b.Cell, b.ActualText)
}

// Kind is what the rule is called in messages: its scope's name.
func (b Broken) Kind() string {
	if b.Scope == ScopeExpect {
		return "expectation"
	}
	return "threshold"
}

// Verb says how the cell failed the rule.
func (b Broken) Verb() string {
	switch {
	case b.NotJudged:
		return "not judged in"
	case b.Scope == ScopeExpect:
		return "not met by"
	}
	return "broken by"
}

// CheckRules judges every run on the scenario-wide rules and its own, and
// lists what was not met or not judged, run by run.
func CheckRules(runs []Run, global []Rule) []Broken {
	var out []Broken
	for i := range runs {
		out = append(out, BrokenIn(RunLabel(runs[i], i, len(runs)), JudgeRun(&runs[i], global))...)
	}
	return out
}

// BrokenIn lists the judgements of one cell that are not a pass.
func BrokenIn(cell string, js []Judged) []Broken {
	var out []Broken
	for _, j := range js {
		if j.Status == Met {
			continue
		}
		b := Broken{Cell: cell, Rule: j.Rule.Expr, Scope: j.Rule.Scope, ActualText: j.Text, NotJudged: j.Status == NotJudged}
		if !b.NotJudged {
			b.Actual = j.Actual // NaN cannot be written as JSON
		}
		out = append(out, b)
	}
	return out
}

// RunLabel names run i of n in messages: its cell's label or id, else
// "run" or "run N".
func RunLabel(r Run, i, n int) string {
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
