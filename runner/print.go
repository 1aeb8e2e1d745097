package runner

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"lockbench/plan"
	"lockbench/results"
)

// PrintPlan lists what a scenario would run (--dry-run): its cells, and a
// fault scenario's faults and expectations.
func PrintPlan(w io.Writer, sc *plan.Scenario, cells []plan.Cell) {
	scenarioKind(sc).plan(w, sc, cells)
}

// printBenchmarkPlan lists a benchmark's cells.
func printBenchmarkPlan(w io.Writer, sc *plan.Scenario, cells []plan.Cell) {
	fmt.Fprintf(w, "scenario %s: %d cells%s, estimated %s\n", sc.Name, len(cells), RepeatText(sc.Repeat), Estimate(sc, cells))
	if sc.Description != "" {
		fmt.Fprintf(w, "%s\n", strings.TrimSpace(sc.Description))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\n#\tcell\tservers\tpersistence\tmode\twait\tload\tkeys\twarmup+duration")
	for _, c := range cells {
		s := c.Settings
		masters := serversText(s)
		load := fmt.Sprintf("%d workers", s.Workers)
		if s.Load == "open" {
			load = fmt.Sprintf("%.0f/s open", s.Rate)
		}
		p := c.Recorded.Persistence
		if p == "" {
			p = "server's"
		}
		mode, wait := s.Service().Terms(s)
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d %s\t%s+%s\n", c.Index, c.Label, masters, p, mode, wait, load,
			s.Keys, s.Distribution, s.Warmup, s.Duration)
	}
	tw.Flush()
}

// serversText is what a cell runs on, as the plan lists it.
func serversText(s plan.Settings) string { return s.Service().Describe(s) }

func printFaultPlan(w io.Writer, sc *plan.Scenario, cells []plan.Cell) {
	fmt.Fprintf(w, "chaos scenario %s: %d cells, estimated %s\n", sc.Name, len(cells), Estimate(sc, cells))
	if sc.Description != "" {
		fmt.Fprintln(w, sc.Description)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	// "local": how many masters chaos starts (the --local setting; a
	// replicated set has one); in run, "masters" is a list of addresses.
	fmt.Fprintln(tw, "\n#\tcell\tlocal\tpersistence\tclients\tkeys\tttl\thold\tfencing\tduration\ttopology")
	for _, c := range cells {
		s := c.Settings
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%d %s × %d\t%d\t%s\t%s %s\t%v\t%s\t%s\n", c.Index, c.Label, s.N(), s.Persistence,
			s.Clients, s.ClientMode, s.Workers, s.Keys, s.TTL, s.Hold, s.HoldDist, s.Fencing, s.Duration, serversText(s))
	}
	tw.Flush()
	for _, c := range cells {
		fmt.Fprintf(w, "\n%d %s\n", c.Index, c.Label)
		for _, warn := range c.Warnings() {
			fmt.Fprintf(w, "  WARNING: %s\n", warn)
		}
		for _, f := range faultLines(c) {
			fmt.Fprintf(w, "  %s\n", f)
		}
		for _, e := range c.Expect {
			fmt.Fprintf(w, "  expect: %s\n", e)
		}
	}
}

// printSafetyTable is the human summary of the cells run. With color,
// violations, lost updates and a cell that failed are red (a violation also
// in a cell without expectations).
func printSafetyTable(w io.Writer, cells []plan.Cell, res []*CellResult, color bool) {
	if len(res) == 0 {
		return
	}
	paint := func(s string, bad bool) string {
		if !color {
			return s
		}
		if bad {
			return "\x1b[31m" + s + "\x1b[0m"
		}
		return "\x1b[39m" + s + "\x1b[0m" // the same width, so the columns stay aligned
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "cell\tfaults\tacquisitions\t%s\t%s\tfencing\tstale writes rejected\tavailability (attempts)\tavailability (time)\t%s\t%s\n",
		paint("violations", false), paint("lost updates", false), paint("history", false), paint("expectations", false))
	for i, r := range res {
		s := r.Run.Safety
		kinds := []string{}
		seen := map[string]bool{}
		for _, f := range cells[i].Faults {
			if !seen[string(f.Kind)] {
				seen[string(f.Kind)] = true
				kinds = append(kinds, string(f.Kind))
			}
		}
		if len(kinds) == 0 {
			kinds = []string{"none"}
		}
		rej, fence := "-", fmt.Sprint(s.Fencing)
		if s.Fencing || s.GuardedWrite {
			rej = fmt.Sprint(s.StaleWritesRejected)
		}
		if s.GuardedWrite {
			fence = "guarded write"
		}
		name := cells[i].Label
		if r.Run.Interrupted {
			name += " (interrupted)"
		}
		exp, bad := verdictText(r)
		hist, unsafe := s.Linearizability.Summary()
		if u := r.Run.Repeats.UnsafeText(); u != "" {
			name += " (" + u + ")"
		}
		viol, lost := countText(r.Run, "violations", s.Violations), countText(r.Run, "lost_updates", s.LostUpdates)
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%v\t%s\t%.1f%%\t%.1f%%\t%s\t%s\n", name, strings.Join(kinds, "+"), r.Run.Outcomes.Acquired,
			paint(viol, s.Violations > 0), paint(lost, s.LostUpdates > 0),
			fence, rej, 100*s.AvailabilityOps, 100*s.AvailabilityTime, paint(hist, unsafe), paint(exp, bad))
	}
	tw.Flush()
}

// countText is a checker's count: one run's, or the repeats' median
// with their range ("17 (15–19)").
func countText(r results.Run, figure string, n int64) string {
	if r.Repeats == nil {
		return fmt.Sprint(n)
	}
	sp, ok := r.Repeats.Spread[figure]
	if !ok || sp.Min == sp.Max {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%d (%.0f–%.0f)", n, sp.Min, sp.Max)
}

// verdictText is the expectations column; bad marks a cell that failed.
func verdictText(r *CellResult) (string, bool) {
	switch r.Verdict {
	case "not judged":
		return fmt.Sprintf("NOT JUDGED (%d)", len(r.NotJudged)), true
	case "not met":
		return fmt.Sprintf("NOT MET (%d)", len(r.Failed)), true
	case "checkers disagree":
		return "CHECKERS DISAGREE", true
	case results.NotExercised:
		return "NOT EXERCISED", true
	case "":
		return "unchecked", false
	}
	return r.Verdict, false
}

// RepeatText says how many repeats, when there are several.
func RepeatText(n int) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf(" × %d repeats (interleaved)", n)
}

// Estimate is the scenario's expected duration: every repeat runs every cell.
func Estimate(sc *plan.Scenario, cells []plan.Cell) time.Duration {
	d := plan.EstimatedDuration(cells) * time.Duration(max(sc.Repeat, 1))
	return d.Round(time.Second)
}

// Print says how the run ended: the checked cells' safety table (on out),
// the cell that failed, how many cells were written and what the fault
// cells did not show (on errw). cmd names the command in its lines.
func (o *Outcome) Print(out, errw io.Writer, cmd string, total int) {
	var cells []plan.Cell
	var res []*CellResult
	for _, co := range o.Cells {
		if co.Last.Run.Safety.ResourceChecked { // the cells whose resource was checked
			cells, res = append(cells, co.Cell), append(res, co.shown())
		}
	}
	printSafetyTable(out, cells, res, colorOutput(out))
	if o.Err != nil {
		fmt.Fprintf(errw, "lockbench %s: cell %s: %v\n", cmd, o.FailedCell, o.Err)
	}
	if o.Dir != "" {
		fmt.Fprintf(errw, "lockbench %s: %d of %d cells written to %s\n", cmd, len(o.Cells), total, o.Dir)
	}
	unmet, unjudged, disagree := o.Unshown()
	for _, u := range disagree {
		fmt.Fprintf(errw, "lockbench %s: CHECKERS DISAGREE: %s\n", cmd, u)
	}
	for _, u := range unjudged {
		fmt.Fprintf(errw, "lockbench %s: NOT JUDGED: %s\n", cmd, u)
	}
	for _, u := range unmet {
		fmt.Fprintf(errw, "lockbench %s: NOT SHOWN: %s\n", cmd, u)
	}
}

// Unshown are what the fault cells did not show that they claim: unmet
// expectations, why a cell judged nothing, and where its checkers
// disagree; each names its cell.
func (o *Outcome) Unshown() (unmet, unjudged, disagree []string) {
	for _, co := range o.Cells {
		if d := co.Last.Disagree; d != "" && !co.Last.Run.Interrupted {
			disagree = append(disagree, co.Cell.Label+": "+d)
		}
		for _, f := range co.Unmet {
			unmet = append(unmet, co.Cell.Label+": "+f)
		}
		for _, f := range co.NotJudged {
			unjudged = append(unjudged, co.Cell.Label+": "+f)
		}
		if co.Last.Verdict == results.NotExercised && len(co.NotJudged) == 0 {
			unjudged = append(unjudged, co.Cell.Label+": "+co.Last.NotExercised)
		}
	}
	return unmet, unjudged, disagree
}

// colorOutput: color only on a terminal, and not when NO_COLOR is set.
func colorOutput(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && os.Getenv("NO_COLOR") == "" && term.IsTerminal(int(f.Fd()))
}

// NewRepeatLines is run's display: a line as each repeat starts, when
// there are several.
func NewRepeatLines(w io.Writer, repeats int) Progress { return repeatLines{w, repeats} }

type repeatLines struct {
	w       io.Writer
	repeats int
}

func (p repeatLines) StartCell(_ plan.Cell, r int) {
	if p.repeats > 1 {
		fmt.Fprintf(p.w, "lockbench run: repeat %d/%d\n", r, p.repeats)
	}
}
func (repeatLines) Interval(results.Interval)           {}
func (repeatLines) EndCell(plan.Cell, int, *CellResult) {}
func (repeatLines) Finish()                             {}
func (p repeatLines) Log() io.Writer                    { return p.w }
