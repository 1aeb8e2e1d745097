package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"lockbench/configs"
	"lockbench/internal/cli"
	"lockbench/metrics"
	"lockbench/plan"
	"lockbench/report"
	"lockbench/results"
	"lockbench/runner"
)

// scenarioArgs are the flags sweep and chaos share beyond the settings.
type scenarioArgs struct {
	file, out, metrics string
	dryRun, noReport   bool
	thresholds         []string
	repeat             int
	p99                time.Duration // sweep's capacity plan SLO (0: the file's report: slo_p99, or 10ms)
	// beforeReport, when set, writes what the report reads besides the
	// results (lockbench choose's matrix plan) into the results directory.
	beforeReport func(dir string) error
	// settle and budget (choose): further repeats by each cell's verdict
	// so far, within the run's time (runner.Options).
	settle runner.Settler
	budget time.Duration
}

// bindScenarioFlags registers the flags sweep and chaos share.
func bindScenarioFlags(fs *pflag.FlagSet, a *scenarioArgs, shipped []string) {
	fs.StringVarP(&a.file, "file", "f", "", "scenario YAML (a path, or a shipped name: "+strings.Join(shipped, ", ")+")")
	fs.StringVar(&a.out, "out", "", "results directory (default results/NAME-YYYYMMDD-HHMMSS)")
	fs.BoolVar(&a.dryRun, "dry-run", false, "print the expanded cells and the estimated duration, run nothing")
	fs.BoolVar(&a.noReport, "no-report", false, "do not build the report at the end")
	fs.StringArrayVar(&a.thresholds, "threshold", nil, "exit 3 unless every cell meets this, e.g. acquire.p99<10ms (repeatable; added to the file's thresholds; a cell's own expect: on the metric replaces it)")
	fs.IntVar(&a.repeat, "repeat", 1, "measure every cell this many times, interleaved (A,B,C,A,B,C…); figures become medians with their spread, and a fault cell's repeats, each judged on servers of its own, say in how many runs it was unsafe (overrides the file's repeat)")
	fs.StringVar(&a.metrics, "metrics-addr", "", metrics.AddrUsage)
}

// sweepFlags are sweep's flags, bound to a and the settings' overrides.
func sweepFlags(a *scenarioArgs, overrides *plan.Settings) *pflag.FlagSet {
	fs := pflag.NewFlagSet("sweep", pflag.ContinueOnError)
	bindScenarioFlags(fs, a, configs.Names())
	fs.DurationVar(&a.p99, "p99", 0, "the acquire p99 you need: the report's capacity plan SLO (replaces the file's report: slo_p99; 10ms without either)")
	plan.BindFlags(fs, overrides)
	return fs
}

func cmdSweep(args []string) error {
	var a scenarioArgs
	overrides := plan.Defaults()
	fs := sweepFlags(&a, &overrides)
	if err := fs.Parse(args); err != nil {
		return cli.FlagErr(err)
	}
	if a.file == "" {
		return cli.Usagef("file: none given; use -f configs/NAME.yaml or a shipped name (%s)", strings.Join(configs.Names(), ", "))
	}
	sc, err := plan.Load(a.file, false)
	if err != nil {
		return cli.UsageErr(err)
	}
	if fs.Changed("p99") {
		if a.p99 <= 0 {
			return cli.NotAccepted("--p99", a.p99.String(), report.SLOP99Accepted)
		}
		sc.Report.SLOP99 = results.Duration(a.p99)
	}
	cells, err := scenarioCells(sc, fs, a, plan.BindFlags)
	if err != nil {
		return cli.UsageErr(err)
	}
	return runScenario("sweep", sc, cells, a)
}

// scenarioCells lays the flags over the scenario and expands its cells,
// checked; the settings' warnings go to stderr once each.
func scenarioCells(sc *plan.Scenario, fs *pflag.FlagSet, a scenarioArgs, bind func(*pflag.FlagSet, *plan.Settings)) ([]plan.Cell, error) {
	o := plan.Overrides{Thresholds: a.thresholds}
	if fs.Changed("repeat") {
		o.Repeat = &a.repeat
	}
	if fs.Changed("metrics-addr") {
		o.MetricsAddr = &a.metrics
	}
	if err := sc.OverrideRun(o); err != nil {
		return nil, err
	}
	cells, warnings, err := sc.Expand(fs, bind)
	for _, w := range warnings {
		fmt.Fprintln(os.Stderr, "WARNING:", w)
	}
	return cells, err
}

// runScenario runs the cells through the one runner into a results
// directory, then builds the report; the exit says how it ended.
func runScenario(cmd string, sc *plan.Scenario, cells []plan.Cell, a scenarioArgs) error {
	if a.dryRun {
		runner.PrintPlan(os.Stdout, sc, cells)
		return nil
	}
	if err := runner.Check(cells); err != nil {
		if errors.As(err, new(runner.MissingTool)) {
			return err // exit 1: the run cannot be done here
		}
		return cli.UsageErr(err)
	}
	exp, err := metrics.Start(cmd, sc.MetricsAddr, version)
	if err != nil {
		return err
	}
	defer exp.Close()
	ctx, stop := runner.Interruptible()
	defer stop()
	opt := runner.Options{Scenario: sc.Name, Command: cmd, Log: os.Stderr, Dir: a.out, ConfigFile: a.file, Metrics: exp,
		Progress: runner.NewProgress(cells, sc.Repeat), Settle: a.settle, Budget: a.budget}
	if opt.Dir == "" {
		opt.Dir = runner.DefaultDir(sc.Name)
	}
	out, err := runner.Run(ctx, sc, cells, opt)
	if errors.As(err, new(runner.ErrDirNotEmpty)) {
		return cli.UsageErr(err)
	}
	if err != nil {
		return err
	}
	return concludeScenario(cmd, sc, cells, out, a)
}

// concludeScenario says how the run ended, builds the report and maps the
// end onto the exit code.
func concludeScenario(cmd string, sc *plan.Scenario, cells []plan.Cell, out *runner.Outcome, a scenarioArgs) error {
	out.Print(os.Stdout, os.Stderr, cmd, len(cells))
	if a.beforeReport != nil && out.Dir != "" {
		if err := a.beforeReport(out.Dir); err != nil {
			return err
		}
	}
	var reportErr error
	// An interrupted fault scenario's cells judged nothing: no report, as
	// chaos always did; a benchmark's partial results are reported.
	if !a.noReport && len(out.Cells) > 0 && !(out.Interrupted && !sc.ReportsPartial()) {
		ths, _ := results.ParseThresholds(sc.Thresholds)                                       // checked by Expand
		reportErr = reportStage(out.Dir, report.DefaultOptions().WithScenario(sc.Report, ths)) // slo_success checked by plan
	}
	unmet, unjudged, disagree := out.Unshown()
	switch {
	case out.Interrupted:
		return cli.Quiet(cli.Interrupted)
	case out.Err != nil:
		return cli.Quiet(cli.Failure)
	case len(unmet) > 0 || len(unjudged) > 0 || len(disagree) > 0:
		return cli.Quiet(cli.Threshold) // a cell did not show what its scenario claims
	}
	return reportErr
}
