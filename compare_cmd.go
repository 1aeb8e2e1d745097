package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"lockbench/internal/cli"
	"lockbench/report"
	"lockbench/results"
)

// cmdCompare compares two results (directories or run JSON files) cell by
// cell: old, new, delta and whether the repeats show a real difference.
func cmdCompare(args []string) error {
	var a compareArgs
	fs := compareFlags(&a)
	if err := fs.Parse(args); err != nil {
		return cli.FlagErr(err)
	}
	return a.compare(fs)
}

// compareArgs are compare's flags.
type compareArgs struct {
	ignore, failOn []string
	format         string
	alpha          float64
}

// compareFlags are compare's flags, bound to a.
func compareFlags(a *compareArgs) *pflag.FlagSet {
	fs := pflag.NewFlagSet("compare", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: lockbench compare OLD NEW [flags]\n\n"+
			"OLD and NEW are results directories (lockbench sweep) or run JSON files (lockbench run --json-out).\n"+
			"Cells are matched by their settings; each figure's repeats are tested for a difference\n"+
			"(Mann-Whitney U); ~ means none was shown. Measure with --repeat 5 or more: 3 vs 3 repeats\n"+
			"can never show a difference at 0.05.\n\nflags:")
		fs.PrintDefaults()
	}
	fs.StringArrayVar(&a.ignore, "ignore", nil, "match cells across this setting, e.g. workers or persistence (repeatable)")
	fs.StringArrayVar(&a.failOn, "fail-on", nil, "exit 3 when a figure changed significantly beyond this, e.g. 'cycles_per_sec<-5%' or 'acquire_p99>10%' (repeatable); "+
		"for two which-lock runs, 'reversal': exit 3 when an outcome settled clean in one lies wholly above the max rate in the other")
	fs.StringVar(&a.format, "format", "text", "output: "+strings.Join(report.CompareFormats, ", "))
	fs.Float64Var(&a.alpha, "alpha", report.DefaultAlpha, "significance level of the test")
	return fs
}

// compare is the comparison the flags ask for.
func (a *compareArgs) compare(fs *pflag.FlagSet) error {
	if fs.NArg() != 2 {
		return cli.Usagef("OLD NEW: %d given; use two results directories or run JSON files", fs.NArg())
	}
	whichLock := report.AreWhichLockRuns(fs.Arg(0), fs.Arg(1))
	onReversal, failOn := slices.Contains(a.failOn, report.FailOnReversal), slices.DeleteFunc(slices.Clone(a.failOn), func(s string) bool { return s == report.FailOnReversal })
	if whichLock {
		return compareWhichLock(fs.Arg(0), fs.Arg(1), onReversal, failOn)
	}
	if onReversal {
		return &results.InputError{Field: "--fail-on", Value: report.FailOnReversal, Problem: "applies to two which-lock runs (lockbench choose), and these are not", Accepted: "FIGURE<PCT% or FIGURE>PCT% for cells' figures"}
	}
	if !slices.Contains(report.CompareFormats, a.format) {
		return &results.InputError{Field: "--format", Value: a.format, Problem: "not a format", Accepted: strings.Join(report.CompareFormats, ", ")}
	}
	conds, err := report.ParseFailOns(failOn)
	if err != nil {
		return err
	}
	old, err := report.LoadCompareSide(fs.Arg(0))
	if err != nil {
		return err
	}
	cur, err := report.LoadCompareSide(fs.Arg(1))
	if err != nil {
		return err
	}
	c, err := report.Compare(old, cur, a.ignore, a.alpha)
	if err != nil {
		return err
	}
	c.Old, c.New = fs.Arg(0), fs.Arg(1)
	check := c.CheckFailOn(conds)
	if err := report.WriteComparison(os.Stdout, c, a.format); err != nil {
		return err
	}
	return compareExit(c, check, len(conds) > 0)
}

// compareWhichLock compares two which-lock runs' verdicts; a reversal
// exits 3 only under --fail-on reversal, which exits 1 when no outcome was
// settled clean to find one on (the runs' figures are not compared, so no
// other --fail-on applies).
func compareWhichLock(a, b string, onReversal bool, failOn []string) error {
	if len(failOn) > 0 {
		return &results.InputError{Field: "--fail-on", Value: failOn[0], Problem: "judges cells' figures, which two which-lock runs are not compared on", Accepted: report.FailOnReversal}
	}
	_, m, err := report.CompareWhichLockRuns(os.Stdout, a, b)
	switch {
	case err != nil || !onReversal:
		return err
	case len(m.Reversed) > 0:
		return cli.Quiet(cli.Threshold)
	case m.Settled == 0: // a guard that judged nothing never passes
		return fmt.Errorf("--fail-on reversal could be judged on no outcome: none is settled clean in either run (0 of %d runs settles one at the max rate %.0f%%)",
			report.RunsToSettle(m.MaxRates[0]), m.MaxRates[0]*100)
	}
	return nil
}

// compareExit: 3 on a significant regression beyond a --fail-on; a guard
// that could judge nothing is an error, never a silent pass.
func compareExit(c *report.Comparison, check *report.FailOnCheck, guarded bool) error {
	for _, n := range check.NotJudged {
		fmt.Fprintln(os.Stderr, "lockbench compare: not judged:", n)
	}
	if c.Matched == 0 {
		return errors.New("no cell of NEW matched one of OLD; --ignore the settings that differ")
	}
	if len(check.Broken) > 0 {
		for _, b := range check.Broken {
			fmt.Fprintln(os.Stderr, "lockbench compare: regression:", b)
		}
		return cli.Quiet(cli.Threshold)
	}
	if guarded && len(check.Unjudged) > 0 {
		return fmt.Errorf("--fail-on %s could be judged on no cell; measure more repeats (--repeat 5 or more)", strings.Join(check.Unjudged, ", "))
	}
	return nil
}
