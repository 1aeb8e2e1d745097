package runner

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"lockbench/plan"
	"lockbench/results"
)

// Value is the measured figure a metric of the table names (NaN: not
// measured).
func (r *CellResult) Value(metric string) float64 {
	if m, ok := results.LookupMetric(metric); ok {
		return m.Read(&r.Run)
	}
	return math.NaN()
}

// judge weighs a fault cell's result against its expectations, given why
// it could not be judged (notJudged), and records the verdict. A figure
// the cell did not measure judges nothing: it is a reason, not a pass.
func (r *CellResult) judge(c plan.Cell, interrupted bool, notJudged []string) {
	notJudged = slices.Clip(notJudged) // appended to: not the caller's array
	for _, j := range results.JudgeAll(&r.Run, c.Expect) {
		switch j.Status {
		case results.NotMet:
			msg := fmt.Sprintf("expectation not met: %s (measured %s)", j.Rule, j.Text)
			r.Failed = append(r.Failed, msg)
			r.Run.Warnings = append(r.Run.Warnings, msg)
		case results.NotJudged:
			notJudged = append(notJudged, fmt.Sprintf("%s: %s", j.Rule, j.Text))
		}
	}
	if !interrupted {
		r.NotJudged = notJudged
	}
	for _, m := range r.NotJudged {
		r.Run.Warnings = append(r.Run.Warnings, "not judged: "+m)
	}
	r.Disagree = r.Run.Safety.Disagreement
	r.Verdict = verdict(interrupted, r.Disagree, r.NotJudged, r.Failed, len(c.Expect))
	r.Run.Interrupted = interrupted
	r.Run.Safety.Verdict, r.Run.Safety.NotJudged = r.Verdict, strings.Join(r.NotJudged, "; ")
	if r.NotExercised != "" && r.Verdict != results.NotMet && r.Verdict != "interrupted" && r.Verdict != results.NotJudged {
		// A broken expectation stays broken; anything else judged nothing.
		r.Verdict, r.Run.Safety.Verdict, r.Run.Safety.NotJudged = results.NotExercised, results.NotExercised, r.NotExercised
		r.Run.Warnings = append(r.Run.Warnings, r.NotExercised)
	}
	if cc := r.Run.Config; cc != nil {
		cc.ExpectFailed = r.Failed
	}
}

// verdict sums a cell up; only "met" is a pass that means something.
func verdict(interrupted bool, disagree string, notJudged, unmet []string, expectations int) string {
	switch {
	case interrupted:
		return "interrupted"
	case len(notJudged) > 0: // a disagreement on too little is its symptom
		return results.NotJudged
	case disagree != "":
		return "checkers disagree"
	case expectations == 0:
		return "unchecked"
	case len(unmet) > 0:
		return results.NotMet
	}
	return results.Met
}
