package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"lockbench/plan"
	"lockbench/report"
	"lockbench/results"
	"lockbench/runner"
)

// matrixWork is what every cell does: the same lease, holds, clients,
// workers and keys.
const matrixWork = "clients: 2, client_mode: processes, workers: 4, keys: 8, ttl: 2s, hold: 200ms, wait_time: 3s, min_acquisitions: 10"

// A design's price comes from benchmark cells of the lock alone (no
// resource, no fault), which the fault cells' holds and 8 keys would hide
// (their cycles/s is the holds' pace, their servers mostly idle):
//   - capacity: a short closed-loop sweep on many keys (ladderSteps
//     workers), whose highest cycles/s within the SLO is the capacity;
//   - commonWork: one open-loop rate every design serves, for latency and
//     server CPU per lock at the same load;
//   - hotWork: one hot key, for time to lock beside the FIFO ideal.
//
// A fencing token, a guarded write and a watchdog (which renews nothing
// without holds) are the fault cells' (priceUnset): designs that differ
// by one alone share the price cells of the design before them.
const (
	priceWork  = "keys: 10000, hold: 0, ttl: 2s, duration: 2s, warmup: 1s"
	commonWork = "load: open, rate: 200, workers: 16, keys: 10000, hold: 0, ttl: 2s, duration: 2s, warmup: 1s"
	hotWork    = "workers: 8, keys: 1, hold: 2ms, ttl: 2s, wait_time: 3s, duration: 2s, warmup: 1s"
	priceUnset = "fencing: unset, guarded_write: unset, watchdog: unset"
)

// ladderSteps are the capacity sweep's workers.
var ladderSteps = []int{1, 4, 16, 64}

type chooseArgs struct {
	scenarioArgs
	designs, faults, needs []string
	p99, duration          time.Duration
	quick                  bool
}

// quickDuration is each cell's measured time under --quick.
const quickDuration = 5 * time.Second

// quick narrows a run to a first answer: one repeat, shorter cells, the
// first design of each lock service (what --design or --repeat or
// --duration name stays theirs); gaveUp says what it gave up, for the page.
func (a *chooseArgs) quickly(fs *pflag.FlagSet) (gaveUp string) {
	var given []string
	if !fs.Changed("repeat") {
		a.repeat, given = 1, append(given, "one run of each cell instead of 3 (so no spread, and a rare failure may not show)")
	}
	if !fs.Changed("duration") {
		a.duration, given = quickDuration, append(given, fmt.Sprintf("%s cells instead of 8s", quickDuration))
	}
	if len(a.designs) == 0 {
		seen := map[string]bool{}
		for _, d := range plan.Designs() {
			if t := d.Topology(); !seen[t] {
				seen[t], a.designs = true, append(a.designs, d.Name)
			}
		}
		given = append(given, "the first design of each lock service only ("+strings.Join(a.designs, ", ")+")")
	}
	return strings.Join(given, "; ")
}

// chooseFlags are choose's flags, bound to a.
func chooseFlags(a *chooseArgs) *pflag.FlagSet {
	fs := pflag.NewFlagSet("choose", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: lockbench choose [flags]\n\n"+
			"Runs every lock design (Redis' Redlock, one master, a replicated master and rueidislock; etcd; ZooKeeper;\n"+
			"PostgreSQL) on the same work under the same faults, each fault cell repeated, and writes which-lock.md,\n"+
			"which-lock.html and which-lock-matrix.json: capacity beside safety, judged for your needs.\n\nflags:")
		fs.PrintDefaults()
	}
	fs.StringArrayVar(&a.designs, "design", nil, "only this design (repeatable): "+strings.Join(plan.DesignNames(), ", "))
	fs.StringArrayVar(&a.faults, "fault", nil, "only this fault (repeatable): "+strings.Join(plan.MatrixFaultNames(), ", "))
	fs.StringSliceVar(&a.needs, "need", nil, report.NeedHelp)
	fs.DurationVar(&a.p99, "p99", 0, "the acquire p99 you need: the capacity's SLO (10ms without it), and a need on each design's p99 at the common rate (0: none)")
	fs.BoolVar(&a.quick, "quick", false, "a first answer in minutes: one run of each cell, 5s cells, the first design of each lock service (the page says what it gave up)")
	fs.DurationVar(&a.duration, "duration", 8*time.Second, "each cell's measured time")
	fs.IntVar(&a.repeat, "repeat", 3, "measure every cell this many times (the fault cells' spread and how many runs were unsafe)")
	fs.StringVar(&a.out, "out", "", "results directory (default results/which-lock-YYYYMMDD-HHMMSS)")
	fs.BoolVar(&a.dryRun, "dry-run", false, "print the cells and the estimated duration, run nothing")
	return fs
}

func cmdChoose(args []string) error {
	var a chooseArgs
	fs := chooseFlags(&a)
	if err := fs.Parse(args); err != nil {
		return flagErr(err)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	gaveUp := ""
	if a.quick {
		gaveUp = a.quickly(fs)
	}
	sc, cells, wl, err := chooseScenario(a)
	if err != nil {
		return usageErr(err)
	}
	wl.Quick = gaveUp
	if a.dryRun {
		printUnsupported(os.Stdout, wl)
	}
	a.beforeReport = func(dir string) error { return writeWhichLockPlan(dir, wl) }
	return runScenario("choose", sc, cells, a.scenarioArgs)
}

// chooseScenario crosses the designs and faults asked for into one fault
// scenario; a pair plan refuses is unsupported, with plan's reason.
func chooseScenario(a chooseArgs) (*plan.Scenario, []plan.Cell, report.WhichLockPlan, error) {
	wl := report.WhichLockPlan{Unsupported: map[string]map[string]string{}, NotApplicable: map[string]map[string]string{}, NotMeasured: map[string]map[string]string{}}
	ds, fs, err := chosen(a)
	if err != nil {
		return nil, nil, wl, err
	}
	if wl.Needs, err = needsOf(a, fs); err != nil {
		return nil, nil, wl, err
	}
	if err := plan.ValidateRepeat(a.repeat); err != nil {
		return nil, nil, wl, err
	}
	var cells []string
	for _, d := range ds {
		wl.Designs = append(wl.Designs, d.Name)
		for _, f := range fs {
			cell, absent, why, missing := matrixCell(d, f, a.duration)
			switch {
			case absent == plan.NotApplicable:
				note(wl.NotApplicable, d.Name, f.Name, why)
			case absent != "":
				note(wl.Unsupported, d.Name, f.Name, why)
			case missing != "":
				note(wl.NotMeasured, d.Name, f.Name, missing)
			default:
				cells = append(cells, cell)
			}
		}
	}
	wl.Defined = map[string]string{}
	for _, f := range fs {
		wl.Faults = append(wl.Faults, f.Name)
		wl.Defined[f.Name] = f.Defined
	}
	if len(cells) == 0 {
		return nil, nil, wl, fmt.Errorf("design/fault: no design takes any of these faults (%s)", unsupportedText(wl))
	}
	doc := "name: which-lock\ndescription: every lock design on the same work under the same faults (lockbench choose)\ncells:\n" + strings.Join(cells, "")
	sc, err := plan.Parse("which-lock", []byte(doc), true)
	if err != nil {
		return nil, nil, wl, err
	}
	sc.Repeat = a.repeat
	expanded, err := sc.Cells()
	if err != nil {
		return nil, nil, wl, err
	}
	prices, pc, err := priceCells(ds)
	pc.SLO = report.CapacitySLO(a.p99)
	pc.LadderWork, pc.CommonWork, pc.HotWork = fmt.Sprintf("%s, workers: %v", priceWork, ladderSteps), commonWork, hotWork
	wl.PriceCells, wl.Work = &pc, matrixWork
	for i := range prices {
		prices[i].Renumber(len(expanded) + i)
	}
	return sc, append(expanded, prices...), wl, err
}

// priceCells are the designs' benchmark cells (one set for each set of
// settings plan and this machine can run) and which of them each design's
// price reads.
func priceCells(ds []plan.Design) ([]plan.Cell, report.PriceCells, error) {
	var cells []string
	pc := report.PriceCells{Ladder: map[string][]string{}, Common: map[string]string{}, Hot: map[string]string{}}
	bySettings := map[string]string{} // a design's own settings → the design whose cells it shares
	for _, d := range ds {
		own := layered(d.Settings, priceUnset)
		if first, ok := bySettings[own]; ok {
			pc.Ladder[d.Name], pc.Common[d.Name], pc.Hot[d.Name] = pc.Ladder[first], pc.Common[first], pc.Hot[first]
			continue
		}
		bySettings[own] = d.Name
		for _, w := range ladderSteps {
			name := report.CellName(d.Name, fmt.Sprintf("%s-%d", report.PriceCell, w))
			if cell, ok := priceCell(name, priceWork, d.Settings, fmt.Sprintf("workers: %d", w)); ok {
				cells, pc.Ladder[d.Name] = append(cells, cell), append(pc.Ladder[d.Name], name)
			}
		}
		if cell, ok := priceCell(report.CellName(d.Name, report.CommonCell), commonWork, d.Settings); ok {
			cells, pc.Common[d.Name] = append(cells, cell), report.CellName(d.Name, report.CommonCell)
		}
		if cell, ok := priceCell(report.CellName(d.Name, report.HotCell), hotWork, d.Settings); ok {
			cells, pc.Hot[d.Name] = append(cells, cell), report.CellName(d.Name, report.HotCell)
		}
	}
	if len(cells) == 0 {
		return nil, pc, nil
	}
	out, err := checkedCells(strings.Join(cells, ""), false)
	return out, pc, err
}

// priceCell is one benchmark cell of a design's price (YAML), false when
// plan refuses it.
func priceCell(name, work, design string, more ...string) (string, bool) {
	settings := layered(append([]string{work, design, priceUnset}, more...)...)
	cell := fmt.Sprintf("  - name: %s\n    settings: %s\n", name, settings)
	_, err := checkedCells(cell, false)
	return cell, err == nil
}

// checkedCells are a scenario's cells (YAML), checked as the runner will.
func checkedCells(cells string, faulty bool) ([]plan.Cell, error) {
	sc, err := plan.Parse("which-lock", []byte("cells:\n"+cells), faulty)
	if err != nil {
		return nil, err
	}
	out, err := sc.Cells()
	if err != nil {
		return nil, err
	}
	return out, runner.Check(out)
}

// matrixCell is design d under fault f as a scenario's cell (YAML), or
// why it takes none (absent: not applicable or not supported yet, in
// words), or the program this machine lacks for it.
func matrixCell(d plan.Design, f plan.MatrixFault, duration time.Duration) (cell, absent, why, missing string) {
	if f.LongHold && d.FixedTTL {
		absent, why, _ = plan.MatrixAbsence(d, f)
		return "", absent, why, ""
	}
	settings := layered(matrixWork, "duration: "+duration.String(), d.Settings, f.Settings)
	refused := ""
	for _, faults := range f.Forms {
		cell = fmt.Sprintf("  - name: %s\n    settings: %s\n    faults: %s\n", report.CellName(d.Name, f.Name), settings, faults)
		_, err := checkedCells(cell, true)
		var missing runner.MissingTool
		switch {
		case err == nil:
			return cell, "", "", ""
		case errors.As(err, &missing):
			return "", "", "", err.Error() // a program this machine lacks: not measured here
		case refused == "":
			refused = reasonOf(err)
		}
	}
	if absent, why, ok := plan.MatrixAbsence(d, f); ok {
		return "", absent, why, ""
	}
	// A pair no word covers yet (TestMatrixAbsencesInWords keeps the
	// shipped matrix free of it): the settings check's reason, marked.
	return "", plan.NotSupported, "lockbench cannot make this fault on this design yet (its settings check: " + refused + ")", ""
}

// note files why under design d and fault f.
func note(m map[string]map[string]string, d, f, why string) {
	if m[d] == nil {
		m[d] = map[string]string{}
	}
	m[d][f] = why
}

// layered lays "key: value, ..." lists over each other, later ones
// winning, into one YAML flow map; a value "unset" takes the key out.
func layered(lists ...string) string {
	var keys []string
	values := map[string]string{}
	for _, l := range lists {
		for _, kv := range strings.Split(l, ", ") {
			k, v, ok := strings.Cut(kv, ": ")
			if !ok {
				continue
			}
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
			values[k] = v
		}
	}
	var out []string
	for _, k := range keys {
		if values[k] != "unset" {
			out = append(out, k+": "+values[k])
		}
	}
	return "{" + strings.Join(out, ", ") + "}"
}

// lineRef is where a settings error names the generated scenario and its
// cell: the reason is what follows.
var lineRef = regexp.MustCompile(`^config: [^:]+: (cell [^:]+: )?(line \d+: )?`)

func reasonOf(err error) string { return lineRef.ReplaceAllString(err.Error(), "") }

// chosen are the designs and faults asked for (all without --design or
// --fault).
func chosen(a chooseArgs) ([]plan.Design, []plan.MatrixFault, error) {
	all := plan.Designs()
	ds, fs := all, plan.MatrixFaults
	if len(a.designs) > 0 {
		ds = nil
		for _, n := range a.designs {
			i := slices.IndexFunc(all, func(d plan.Design) bool { return d.Name == n })
			if i < 0 {
				return nil, nil, fmt.Errorf("design: %q is not a design; use one of %s", n, strings.Join(plan.DesignNames(), ", "))
			}
			ds = append(ds, all[i])
		}
	}
	if len(a.faults) > 0 {
		fs = nil
		for _, n := range a.faults {
			f, ok := plan.MatrixFaultNamed(n)
			if !ok {
				return nil, nil, fmt.Errorf("fault: %q is not a fault of the matrix; use one of %s", n, strings.Join(plan.MatrixFaultNames(), ", "))
			}
			fs = append(fs, f)
		}
	}
	return ds, fs, nil
}

// needsOf reads --need and --p99 against the faults this matrix runs.
func needsOf(a chooseArgs, fs []plan.MatrixFault) (report.Needs, error) {
	var names []string
	for _, f := range fs {
		names = append(names, f.Name)
	}
	return report.ParseNeeds(a.needs, a.p99, names)
}

// writeWhichLockPlan puts the matrix's plan beside its results, for the
// report (and any later lockbench report of the directory).
func writeWhichLockPlan(dir string, wl report.WhichLockPlan) error {
	return results.WriteFileShared(filepath.Join(dir, report.WhichLockFile), func(w io.Writer) error {
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(wl)
	})
}

// printUnsupported lists the pairs no cell runs, with plan's reason.
func printUnsupported(w io.Writer, wl report.WhichLockPlan) {
	if t := unsupportedText(wl); t != "" {
		fmt.Fprintf(w, "\nno cell (not applicable, not supported yet, or not measured here):\n%s\n", t)
	}
}

func unsupportedText(wl report.WhichLockPlan) string {
	var lines []string
	for _, d := range wl.Designs {
		for _, f := range wl.Faults {
			if why, ok := wl.NotApplicable[d][f]; ok {
				lines = append(lines, fmt.Sprintf("  %s × %s: not applicable: %s", d, f, why))
			}
			if why, ok := wl.Unsupported[d][f]; ok {
				lines = append(lines, fmt.Sprintf("  %s × %s: not supported yet: %s", d, f, why))
			}
			if why, ok := wl.NotMeasured[d][f]; ok {
				lines = append(lines, fmt.Sprintf("  %s × %s: not measured here: %s", d, f, why))
			}
		}
	}
	return strings.Join(lines, "\n")
}
