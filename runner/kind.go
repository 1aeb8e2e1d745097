package runner

import (
	"fmt"
	"io"
	"time"

	"lockbench/plan"
	"lockbench/results"
)

// cellKind is what the runner says and records differently for a fault
// cell and a benchmark cell. It is looked up by the kind plan gives
// (cellKinds), so that no code here asks which kind a cell is; the
// settings' part of the difference is plan's (plan/kind.go).
type cellKind struct {
	// plan lists the cells for --dry-run.
	plan func(w io.Writer, sc *plan.Scenario, cells []plan.Cell)
	// manifest adds the kind's part of the run's manifest.
	manifest func(cfg map[string]any, cells []plan.Cell)
	// started and ended are the progress lines as a cell starts and ends
	// (a fault cell's runner says its own end).
	started func(p *progress, c plan.Cell)
	ended   func(p *progress, c plan.Cell, r *results.Run)
	// metricsCell is the cell's label in live metrics: a fault cell's
	// repeats, each on servers of its own, share its name.
	metricsCell func(c plan.Cell) string
}

var (
	benchmarkKind = &cellKind{plan: printBenchmarkPlan, manifest: func(map[string]any, []plan.Cell) {},
		started: benchmarkStarted, ended: benchmarkEnded, metricsCell: func(c plan.Cell) string { return c.ID }}
	faultKind = &cellKind{plan: printFaultPlan, manifest: faultManifest,
		started: faultStarted, ended: func(*progress, plan.Cell, *results.Run) {}, metricsCell: func(c plan.Cell) string { return c.Name }}
)

// cellKinds are the runner's differences of each kind of cell, looked up
// by plan's one answer (plan.Cell.Kind); a scenario's cells are all of its
// kind.
var cellKinds = [...]*cellKind{plan.Benchmark: benchmarkKind, plan.FaultScenario: faultKind}

func kindOf(c plan.Cell) *cellKind             { return cellKinds[c.Kind()] }
func scenarioKind(sc *plan.Scenario) *cellKind { return cellKinds[sc.Kind()] }

// faultManifest records the fault cells' settings, faults and expectations.
func faultManifest(cfg map[string]any, cells []plan.Cell) {
	cfg["kind"] = "chaos"
	cfg["cells"] = faultCellsConfig(cells)
}

func benchmarkStarted(p *progress, c plan.Cell) {
	if !p.tty {
		p.printf("cell %d/%d%s %s: warm-up %s, measuring %s", p.position(c), len(p.cells), p.repeatTag(), c.Label, c.Settings.Warmup, c.Settings.Duration)
	}
}

func faultStarted(p *progress, c plan.Cell) {
	p.println(fmt.Sprintf("cell %d/%d%s %s: %d s; faults: %s", p.position(c), len(p.cells), p.repeatTag(), c.Label,
		int(time.Duration(c.Settings.Duration).Seconds()), faultSummary(c)))
	for _, warn := range c.Warnings() {
		p.println("WARNING: " + warn)
	}
}

func benchmarkEnded(p *progress, c plan.Cell, r *results.Run) {
	p.println(fmt.Sprintf("cell %d/%d%s %s: %.0f cycles/s, acquire p50 %.0fµs p99 %.0fµs, %d violations",
		p.position(c), len(p.cells), p.repeatTag(), c.Label, r.Throughput.CyclesPerSec, r.AcquireLatency.P50, r.AcquireLatency.P99, r.Safety.Violations))
}
