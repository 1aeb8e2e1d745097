package runner

import (
	"strings"
	"testing"

	"lockbench/plan"
)

// The terminal table never shows a cell without expectations as met, and
// paints violations red also there; a cell that failed is red.
func TestChaosSafetyTableVerdicts(t *testing.T) {
	cells := []plan.Cell{{Name: "plain"}, {Name: "empty", Expect: []plan.Expectation{{Metric: "violations", Op: "==", Value: 0}}}}
	plain := &CellResult{Verdict: "unchecked"}
	plain.Run.Safety.Violations = 3
	empty := &CellResult{Verdict: "not judged", NotJudged: []string{"0 acquisitions, fewer than min_acquisitions 10"}}
	var b strings.Builder
	printSafetyTable(&b, cells, []*CellResult{plain, empty}, true)
	out := b.String()
	const red = "\x1b[31m"
	for _, want := range []string{red + "3\x1b[0m", "unchecked", red + "NOT JUDGED (1)\x1b[0m"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "met") {
		t.Errorf("a cell was shown as met:\n%s", out)
	}
	b.Reset()
	printSafetyTable(&b, cells, []*CellResult{plain, empty}, false)
	if strings.Contains(b.String(), "\x1b") || !strings.Contains(b.String(), "NOT JUDGED (1)") {
		t.Errorf("without color:\n%s", b.String())
	}
}
