package report

import (
	"fmt"

	"lockbench/results"
)

// maxFindings bounds the sentences at the top of a report: the rest is in
// the tables.
const maxFindings = 12

// findings say in sentences what a benchmark run's cells show: for each
// swept setting, each value against the first, within cells that share
// every other setting, as ratios of cycles/s and acquire p99, each with
// what limited the two cells (so that a ratio the machine set is not read
// as the lock's). Fault cells say theirs in the safety table.
func findings(cells []*cell, sums []CellSummary) []string {
	byCell := summariesByCell(cells, sums)
	var out []string
	for _, axis := range allAxes(cells) {
		if axis == "cell" || distinct(cells, axis) < 2 {
			continue
		}
		for _, g := range groupBy(cells, map[string]bool{axis: true}) {
			base := g.Cells[0]
			for _, c := range g.Cells[1:] {
				if s := finding(axis, base, c, byCell[base], byCell[c], g.Label); s != "" {
					out = append(out, s)
				}
			}
		}
	}
	if len(out) > maxFindings {
		out = append(out[:maxFindings], fmt.Sprintf("… and %d more comparisons in the tables below.", len(out)-maxFindings))
	}
	return out
}

// finding is one comparison in a sentence, "" when either cell measured
// nothing to compare.
func finding(axis string, base, c *cell, b, x CellSummary, context string) string {
	if b.Safety.ResourceChecked || x.Safety.ResourceChecked || b.CyclesPerSec <= 0 || x.CyclesPerSec <= 0 || b.Acquire.P99 <= 0 {
		return ""
	}
	where := ""
	if context != "all cells" {
		where = " (" + context + ")"
	}
	return fmt.Sprintf("%s=%s against %s=%s%s: %s the cycles/s (%s against %s), acquire p99 %s (%s against %s); limited by %s and %s.",
		axis, c.Axes[axis], axis, base.Axes[axis], where,
		ratioText(x.CyclesPerSec/b.CyclesPerSec), results.Rate(x.CyclesPerSec), results.Rate(b.CyclesPerSec),
		ratioText(x.Acquire.P99/b.Acquire.P99), results.FormatMicros(x.Acquire.P99), results.FormatMicros(b.Acquire.P99),
		limitBy(x), limitBy(b))
}

func limitBy(c CellSummary) string {
	if c.Limit == nil || c.Limit.By == "" {
		return "an unknown limit"
	}
	return c.Limit.By
}
