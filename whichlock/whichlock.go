// Package whichlock makes lockbench choose's run: every design (plan's
// Designs) under every fault of the matrix (plan's MatrixFaults) as one
// fault scenario, plus the benchmark cells that price each design, and
// the plan the which-lock report reads beside the results.
package whichlock

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"lockbench/plan"
	"lockbench/report"
	"lockbench/results"
	"lockbench/runner"
)

// Ask is what a choose run was asked for: designs and faults by name (all
// when empty), external clients' designs (plan.ClientDesign: each a row
// beside the designs), needs (report's grammar), the p99 SLO, each cell's
// time and its repeats.
type Ask struct {
	Designs, Faults, Needs []string
	Clients                []plan.Design
	P99, Duration          time.Duration
	Repeat                 int
	// Events is how many fault events a cell's history holds where its
	// fault can repeat in one (0: plan.MatrixEvents).
	Events int
}

// events is a's events a history, or the default.
func (a Ask) events() int {
	if a.Events > 0 {
		return a.Events
	}
	return plan.MatrixEvents
}

// Build crosses the designs and faults asked for into one fault
// scenario; a pair plan refuses is unsupported, with plan's reason.
func Build(a Ask) (*plan.Scenario, []plan.Cell, report.WhichLockPlan, error) {
	wl := report.WhichLockPlan{Unsupported: map[string]map[string]string{}, NotApplicable: map[string]map[string]string{}, NotMeasured: map[string]map[string]string{}, JudgedOn: map[string]map[string]string{}}
	ds, fs, err := chosen(a)
	if err != nil {
		return nil, nil, wl, err
	}
	if wl.Needs, err = needsOf(a, fs); err != nil {
		return nil, nil, wl, err
	}
	if err := plan.ValidateRepeat(a.Repeat); err != nil {
		return nil, nil, wl, err
	}
	if a.Events < 0 || a.Events > MaxEvents {
		return nil, nil, wl, fmt.Errorf("events: %d is not accepted; use 1..%d (fault events in one fault cell's history)", a.Events, MaxEvents)
	}
	var cells []string
	for _, d := range ds {
		wl.Designs = append(wl.Designs, d.Name)
		for _, f := range fs {
			cell, absent, why, missing := matrixCell(d, f, a.Duration, a.events())
			switch {
			case absent == plan.NotApplicable:
				note(wl.NotApplicable, d.Name, f.Name, why)
				if on := plan.MatrixJudgedOn(d, f); on != "" {
					note(wl.JudgedOn, d.Name, f.Name, on)
				}
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
	sc.Repeat = a.Repeat
	expanded, err := sc.Cells()
	if err != nil {
		return nil, nil, wl, err
	}
	common := commonWork(a)
	prices, pc, err := priceCells(ds, common)
	pc.SLO = report.CapacitySLO(a.P99)
	pc.LadderWork, pc.CommonWork, pc.HotWork = fmt.Sprintf("%s, workers: %v", plan.PriceWork, plan.LadderSteps), common, plan.HotWork
	wl.PriceCells, wl.Work = &pc, plan.MatrixWork
	for i := range prices {
		prices[i].Renumber(len(expanded) + i)
	}
	return sc, append(expanded, prices...), wl, err
}

// priceCells are the designs' benchmark cells (one set for each set of
// settings plan and this machine can run) and which of them each design's
// price reads.
func priceCells(ds []plan.Design, common string) ([]plan.Cell, report.PriceCells, error) {
	var cells []string
	pc := report.PriceCells{Ladder: map[string][]string{}, Common: map[string]string{}, Hot: map[string]string{}}
	bySettings := map[string]string{} // a design's own settings → the design whose cells it shares
	for _, d := range ds {
		own := plan.Layered(d.Settings, plan.PriceUnset)
		if first, ok := bySettings[own]; ok {
			pc.Ladder[d.Name], pc.Common[d.Name], pc.Hot[d.Name] = pc.Ladder[first], pc.Common[first], pc.Hot[first]
			continue
		}
		bySettings[own] = d.Name
		for _, w := range plan.LadderSteps {
			name := report.CellName(d.Name, fmt.Sprintf("%s-%d", report.PriceCell, w))
			if cell, ok := priceCell(name, plan.PriceWork, d.Settings, fmt.Sprintf("workers: %d", w)); ok {
				cells, pc.Ladder[d.Name] = append(cells, cell), append(pc.Ladder[d.Name], name)
			}
		}
		if cell, ok := priceCell(report.CellName(d.Name, report.CommonCell), common, d.Settings); ok {
			cells, pc.Common[d.Name] = append(cells, cell), report.CellName(d.Name, report.CommonCell)
		}
		if cell, ok := priceCell(report.CellName(d.Name, report.HotCell), plan.HotWork, d.Settings); ok {
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
	settings := plan.Layered(append([]string{work, design, plan.PriceUnset}, more...)...)
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
func matrixCell(d plan.Design, f plan.MatrixFault, duration time.Duration, events int) (cell, absent, why, missing string) {
	if f.LongHold && d.FixedTTL {
		absent, why, _ = plan.MatrixAbsence(d, f)
		return "", absent, why, ""
	}
	refused := ""
	for _, form := range f.Forms {
		long, length := formHold(d, f, form, duration)
		settings := plan.Layered(plan.MatrixWork, "duration: "+(length+form.Span(events)).String(), long, d.Settings, f.Settings)
		cell = fmt.Sprintf("  - name: %s\n    settings: %s\n    faults: %s\n", report.CellName(d.Name, f.Name), settings, form.Faults(events))
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

// formHold is a cell's long hold under one form of its fault (as a
// setting, "" for none) and its length before the later events: long
// enough to run past the hold.
func formHold(d plan.Design, f plan.MatrixFault, form plan.MatrixForm, duration time.Duration) (string, time.Duration) {
	lh := plan.MatrixLongHold(d, f)
	if lh <= 0 {
		return "", duration
	}
	if form.HoldAcross > 0 && !d.FixedTTL {
		lh = form.HoldAcross
	}
	return "long_hold: " + lh.String(), max(duration, lh+plan.MatrixLongHoldRoom)
}

// note files why under design d and fault f.
func note(m map[string]map[string]string, d, f, why string) {
	if m[d] == nil {
		m[d] = map[string]string{}
	}
	m[d][f] = why
}

// lineRef is where a settings error names the generated scenario and its
// cell: the reason is what follows.
var lineRef = regexp.MustCompile(`^config: [^:]+: (cell [^:]+: )?(line \d+: )?`)

func reasonOf(err error) string { return lineRef.ReplaceAllString(err.Error(), "") }

// chosen are the designs and faults asked for (all without --design or
// --fault).
func chosen(a Ask) ([]plan.Design, []plan.MatrixFault, error) {
	all := plan.Designs()
	ds, fs := all, plan.MatrixFaults
	if len(a.Designs) > 0 {
		ds = nil
		for _, n := range a.Designs {
			i := slices.IndexFunc(all, func(d plan.Design) bool { return d.Name == n })
			switch {
			case slices.ContainsFunc(a.Clients, func(d plan.Design) bool { return d.Name == n }):
				continue // a client's design: its row comes with it below
			case i < 0:
				return nil, nil, fmt.Errorf("design: %q is not a design; use one of %s", n, strings.Join(plan.DesignNames(), ", "))
			}
			ds = append(ds, all[i])
		}
	}
	ds = append(slices.Clone(ds), a.Clients...) // every client asked for has its row, --design or not
	if len(a.Faults) > 0 {
		fs = nil
		for _, n := range a.Faults {
			f, ok := plan.MatrixFaultNamed(n)
			if !ok {
				return nil, nil, fmt.Errorf("fault: %q is not a fault of the matrix; use one of %s", n, strings.Join(plan.MatrixFaultNames(), ", "))
			}
			fs = append(fs, f)
		}
	}
	return ds, fs, nil
}

// MaxEvents bounds --events: each adds 6 s to a fault cell.
const MaxEvents = 50

// QuickEvents is a history's fault events under --quick.
const QuickEvents = 2

// QuickDuration is each cell's measured time under --quick.
const QuickDuration = 5 * time.Second

// Quick narrows a to a first answer: one repeat, shorter cells, one
// design of each lock service, the first that can meet the needs (what
// the user set, keepRepeat, keepDuration or a's designs, stays theirs);
// gaveUp says what it gave up, for the page.
func Quick(a *Ask, keepRepeat, keepDuration, keepEvents bool) (gaveUp string, err error) {
	var given []string
	if !keepRepeat {
		a.Repeat, given = 1, append(given, "one run of each cell instead of 3 (so no spread, and a rare failure may not show)")
	}
	if !keepEvents {
		a.Events, given = QuickEvents, append(given, fmt.Sprintf("%d fault events a history instead of %d", QuickEvents, plan.MatrixEvents))
	}
	if !keepDuration {
		a.Duration, given = QuickDuration, append(given, fmt.Sprintf("%s cells instead of 8s", QuickDuration))
	}
	if len(a.Designs) == 0 {
		if a.Designs, err = QuickDesigns(*a); err != nil {
			return "", err
		}
		which := "the first design of each lock service only"
		if len(a.Needs) > 0 {
			which = "of each lock service, only the first design that can meet your needs (the first when none can)"
		}
		given = append(given, which+" ("+strings.Join(a.Designs, ", ")+")")
	}
	return strings.Join(given, "; "), nil
}

// QuickDesigns are choose --quick's designs: for each lock service's
// topology, the first design that can meet the needs asked (a fencing
// token or guarded write when they ask for one, a cell under every fault
// they name), or its first when none can, so that the page says why it
// falls short. Without needs: each topology's first design.
func QuickDesigns(a Ask) ([]string, error) {
	a.Designs = nil
	_, _, wl, err := Build(a)
	if err != nil {
		return nil, err
	}
	var out []string
	picked := map[string]bool{}
	for _, d := range plan.Designs() { // each topology's first, kept when no other can
		if t := d.Topology(); !picked[t] {
			picked[t] = true
			out = append(out, d.Name)
		}
	}
	for i, first := range out {
		t := designNamed(first).Topology()
		for _, d := range plan.Designs() {
			if d.Topology() == t && canMeet(wl, d.Name) {
				out[i] = d.Name
				break
			}
		}
	}
	return out, nil
}

// canMeet says design d can meet wl's needs at all: it has what they ask
// for and a cell under each fault they name (one not applicable, or not
// supported, cannot meet a need under it).
func canMeet(wl report.WhichLockPlan, d string) bool {
	if wl.Needs.Fencing && !report.Fenced(d) {
		return false
	}
	for _, f := range wl.Needs.Faults() {
		for _, absent := range []map[string]map[string]string{wl.NotApplicable, wl.Unsupported, wl.NotMeasured} {
			if _, ok := absent[d][f]; ok {
				return false
			}
		}
	}
	return true
}

func designNamed(name string) plan.Design {
	all := plan.Designs()
	return all[slices.IndexFunc(all, func(d plan.Design) bool { return d.Name == name })]
}

// needsOf reads --need and --p99 against the faults this matrix runs.
func needsOf(a Ask, fs []plan.MatrixFault) (report.Needs, error) {
	var names []string
	for _, f := range fs {
		names = append(names, f.Name)
	}
	return report.ParseNeeds(a.Needs, a.P99, names)
}

// WritePlan puts the matrix's plan beside its results, for the
// report (and any later lockbench report of the directory).
func WritePlan(dir string, wl report.WhichLockPlan) error {
	return results.WriteFileShared(filepath.Join(dir, report.WhichLockFile), func(w io.Writer) error {
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(wl)
	})
}

// PrintUnsupported lists the pairs no cell runs, with plan's reason.
func PrintUnsupported(w io.Writer, wl report.WhichLockPlan) {
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

// The report judges a not-applicable pair of any run (older ones too) as
// today's matrix does.
func init() { report.JudgedOnOf = plan.MatrixJudgedOnNamed }

// commonWork is the common-rate cell's work: long enough for a p99 need
// (plan.CommonWork) in a run of full-length cells, 2 s in a shorter one
// (--quick, tests), whose p99 needs then read "not settled".
func commonWork(a Ask) string {
	if a.Duration > 0 && a.Duration < FullDuration {
		return plan.Layered(plan.CommonWork, "duration: 2s")
	}
	return plan.CommonWork
}

// FullDuration is choose's default cell length (--duration).
const FullDuration = 8 * time.Second
