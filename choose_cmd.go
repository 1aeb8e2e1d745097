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

// A matrixFault is one fault every design is put under: its settings
// over the design's (a partitioned holder holds past its TTL), and the
// faults each kind of design takes it as, tried in order (a leader kill
// is a member's crash by role, or a replicated set's failover).
type matrixFault struct {
	name, settings string
	faults         []string
	// longHold: its holds outlast the TTL (the partition must fall in
	// one), which a lock of fixed TTL never survives, fault or not.
	longHold bool
}

var matrixFaults = []matrixFault{
	{"none", "", []string{"[]"}, false},
	{"crash", "", []string{"[{at: 2s, kind: crash, master_index: [0], restart: immediate}]"}, false},
	{"leader-kill", "", []string{"[{at: 2s, kind: crash, role: leader, restart: immediate}]", "[{at: 2s, kind: failover}]"}, false},
	{"pause-holder", "", []string{"[{at: 1.5s, kind: pause, client_index: [0], for: 4s}]"}, false},
	{"partition-holder", "hold: 3s", []string{"[{at: 1s, kind: partition, client_index: [0], for: 4s}]"}, true},
	{"lag-failover", "", []string{"[{at: 1s, kind: replication_lag}, {at: 4s, kind: failover}]"}, false},
	{"clock-jump", "", []string{"[{at: 2s, kind: clock_jump, master_index: [0], by: 5s}]"}, false},
}

// matrixWork is what every cell does: the same lease, holds, clients,
// workers and keys.
const matrixWork = "clients: 2, client_mode: processes, workers: 4, keys: 8, ttl: 2s, hold: 200ms, wait_time: 3s, min_acquisitions: 10"

// priceWork is each design's price cell, a benchmark cell: the lock alone
// (no hold, no resource, keys enough that workers seldom meet), which the
// fault cells' holds and 8 keys would hide (their cycles/s is the holds'
// pace, and their servers' CPU mostly idle time). A fencing token or a
// guarded write is a fault cell's (priceUnset): the price is the lock's
// without them, so a design that differs by one alone shares the price
// cell of the design before it.
const (
	priceWork  = "workers: 16, keys: 10000, hold: 0, ttl: 2s, duration: 3s, warmup: 1s"
	priceUnset = "fencing: unset, guarded_write: unset"
)

type chooseArgs struct {
	scenarioArgs
	designs, faults, needs []string
	p99, duration          time.Duration
}

func cmdChoose(args []string) error {
	var a chooseArgs
	fs := pflag.NewFlagSet("choose", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: lockbench choose [flags]\n\n"+
			"Runs every lock design on the same work under the same faults, each fault cell repeated, and writes\n"+
			"which-lock.md and which-lock.html: price (the quiet cell) beside safety (each fault), filtered by your needs.\n\nflags:")
		fs.PrintDefaults()
	}
	fs.StringArrayVar(&a.designs, "design", nil, "only this design (repeatable): "+strings.Join(plan.DesignNames(), ", "))
	fs.StringArrayVar(&a.faults, "fault", nil, "only this fault (repeatable): "+strings.Join(faultNames(), ", "))
	fs.StringSliceVar(&a.needs, "need", nil, "what you need of the lock (comma-separated): fencing, or a fault it must lose no update under (e.g. fencing,leader-kill)")
	fs.DurationVar(&a.p99, "p99", 0, "the acquire p99 you need on the quiet cell (0: none)")
	fs.DurationVar(&a.duration, "duration", 8*time.Second, "each cell's measured time")
	fs.IntVar(&a.repeat, "repeat", 3, "measure every cell this many times (the fault cells' spread and how many runs were unsafe)")
	fs.StringVar(&a.out, "out", "", "results directory (default results/which-lock-YYYYMMDD-HHMMSS)")
	fs.BoolVar(&a.dryRun, "dry-run", false, "print the cells and the estimated duration, run nothing")
	if err := fs.Parse(args); err != nil {
		return flagErr(err)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	sc, cells, wl, err := chooseScenario(a)
	if err != nil {
		return usageErr(err)
	}
	if a.dryRun {
		printUnsupported(os.Stdout, wl)
	}
	a.beforeReport = func(dir string) error { return writeWhichLockPlan(dir, wl) }
	return runScenario("choose", sc, cells, a.scenarioArgs)
}

// chooseScenario crosses the designs and faults asked for into one fault
// scenario; a pair plan refuses is unsupported, with plan's reason.
func chooseScenario(a chooseArgs) (*plan.Scenario, []plan.Cell, report.WhichLockPlan, error) {
	wl := report.WhichLockPlan{Unsupported: map[string]map[string]string{}, NotMeasured: map[string]map[string]string{}}
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
			cell, why, missing := matrixCell(d, f, a.duration)
			switch {
			case why != "":
				note(wl.Unsupported, d.Name, f.name, why)
			case missing != "":
				note(wl.NotMeasured, d.Name, f.name, missing)
			default:
				cells = append(cells, cell)
			}
		}
	}
	for _, f := range fs {
		wl.Faults = append(wl.Faults, f.name)
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
	prices, byDesign, err := priceCells(ds)
	wl.Price, wl.Work, wl.PriceWork = byDesign, matrixWork, priceWork
	for i := range prices {
		prices[i].Renumber(len(expanded) + i)
	}
	return sc, append(expanded, prices...), wl, err
}

// priceCells are the designs' price cells (benchmark cells, one for each
// set of settings plan and this machine can run), and the price cell of
// each design that has one.
func priceCells(ds []plan.Design) ([]plan.Cell, map[string]string, error) {
	var cells []string
	byDesign, bySettings := map[string]string{}, map[string]string{}
	for _, d := range ds {
		settings := layered(priceWork, d.Settings, priceUnset)
		if name, ok := bySettings[settings]; ok {
			byDesign[d.Name] = name
			continue
		}
		name := report.CellName(d.Name, report.PriceCell)
		cell := fmt.Sprintf("  - name: %s\n    settings: %s\n", name, settings)
		if _, err := checkedCells(cell, false); err == nil {
			cells = append(cells, cell)
			byDesign[d.Name], bySettings[settings] = name, name
		}
	}
	if len(cells) == 0 {
		return nil, byDesign, nil
	}
	out, err := checkedCells(strings.Join(cells, ""), false)
	return out, byDesign, err
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
// why plan refuses it (the first of the fault's forms the design takes),
// or the program this machine lacks for it.
func matrixCell(d plan.Design, f matrixFault, duration time.Duration) (cell, why, missing string) {
	if f.longHold && d.FixedTTL {
		return "", "a lock of fixed TTL expires under a hold past it, with or without a partition (the partitioned holder's 3 s holds outlast the 2 s TTL; auto_extend is a benchmark's setting)", ""
	}
	settings := layered(matrixWork, "duration: "+duration.String(), d.Settings, f.settings)
	for _, faults := range f.faults {
		cell = fmt.Sprintf("  - name: %s\n    settings: %s\n    faults: %s\n", report.CellName(d.Name, f.name), settings, faults)
		_, err := checkedCells(cell, true)
		var missing runner.MissingTool
		switch {
		case err == nil:
			return cell, "", ""
		case errors.As(err, &missing):
			return "", "", err.Error() // a program this machine lacks: not measured here
		case why == "":
			why = reasonOf(err)
		}
	}
	return "", why, ""
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
func chosen(a chooseArgs) ([]plan.Design, []matrixFault, error) {
	all := plan.Designs()
	ds, fs := all, matrixFaults
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
			i := slices.IndexFunc(matrixFaults, func(f matrixFault) bool { return f.name == n })
			if i < 0 {
				return nil, nil, fmt.Errorf("fault: %q is not a fault of the matrix; use one of %s", n, strings.Join(faultNames(), ", "))
			}
			fs = append(fs, matrixFaults[i])
		}
	}
	return ds, fs, nil
}

// needsOf reads --need and --p99: fencing, or faults run in this matrix.
func needsOf(a chooseArgs, fs []matrixFault) (report.Needs, error) {
	n := report.Needs{P99: a.p99}
	if a.p99 < 0 {
		return n, fmt.Errorf("p99: %v is not accepted; use a positive duration such as 10ms", a.p99)
	}
	for _, need := range a.needs {
		switch {
		case need == "fencing":
			n.Fencing = true
		case slices.ContainsFunc(fs, func(f matrixFault) bool { return f.name == need && f.name != "none" }):
			n.SafeUnder = append(n.SafeUnder, need)
		default:
			return n, fmt.Errorf("need: %q is not accepted; use fencing or a fault this matrix runs (%s)", need, strings.Join(faultNames()[1:], ", "))
		}
	}
	return n, nil
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

func faultNames() []string {
	var out []string
	for _, f := range matrixFaults {
		out = append(out, f.name)
	}
	return out
}

// printUnsupported lists the pairs no cell runs, with plan's reason.
func printUnsupported(w io.Writer, wl report.WhichLockPlan) {
	if t := unsupportedText(wl); t != "" {
		fmt.Fprintf(w, "\nnot supported or not measured here (no cell):\n%s\n", t)
	}
}

func unsupportedText(wl report.WhichLockPlan) string {
	var lines []string
	for _, d := range wl.Designs {
		for _, f := range wl.Faults {
			if why, ok := wl.Unsupported[d][f]; ok {
				lines = append(lines, fmt.Sprintf("  %s × %s: %s", d, f, why))
			}
			if why, ok := wl.NotMeasured[d][f]; ok {
				lines = append(lines, fmt.Sprintf("  %s × %s: not measured here: %s", d, f, why))
			}
		}
	}
	return strings.Join(lines, "\n")
}
