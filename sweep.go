package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"lockbench/configs"
	"lockbench/metrics"
	"lockbench/plan"
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
}

// bindScenarioFlags registers the flags sweep and chaos share.
func bindScenarioFlags(fs *pflag.FlagSet, a *scenarioArgs, shipped []string) {
	fs.StringVarP(&a.file, "file", "f", "", "scenario YAML (a path, or a shipped name: "+strings.Join(shipped, ", ")+")")
	fs.StringVar(&a.out, "out", "", "results directory (default results/NAME-YYYYMMDD-HHMMSS)")
	fs.BoolVar(&a.dryRun, "dry-run", false, "print the expanded cells and the estimated duration, run nothing")
	fs.BoolVar(&a.noReport, "no-report", false, "do not build the report at the end")
	fs.StringArrayVar(&a.thresholds, "threshold", nil, "exit 3 unless every cell meets this, e.g. acquire.p99<10ms (repeatable; added to the file's thresholds; a cell's own expect: on the metric replaces it)")
	fs.IntVar(&a.repeat, "repeat", 1, "measure every cell this many times, interleaved (A,B,C,A,B,C…); figures become medians with their spread, and a fault cell's repeats, each judged on servers of its own, say in how many runs it was unsafe (overrides the file's repeat)")
	fs.StringVar(&a.metrics, "metrics-addr", "", metricsAddrUsage)
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
		return flagErr(err)
	}
	if a.file == "" {
		return usagef("file: none given; use -f configs/NAME.yaml or a shipped name (%s)", strings.Join(configs.Names(), ", "))
	}
	sc, err := plan.Load(a.file, false)
	if err != nil {
		return usageErr(err)
	}
	if fs.Changed("p99") {
		if a.p99 <= 0 {
			return notAccepted("--p99", a.p99.String(), sloP99Accepted)
		}
		sc.Report.SLOP99 = results.Duration(a.p99)
	}
	cells, err := scenarioCells(sc, fs, a, plan.BindFlags)
	if err != nil {
		return usageErr(err)
	}
	return runScenario("sweep", sc, cells, a)
}

// scenarioCells lays the flags over the scenario and expands its cells,
// checked; the settings' warnings go to stderr once each.
func scenarioCells(sc *plan.Scenario, fs *pflag.FlagSet, a scenarioArgs, bind func(*pflag.FlagSet, *plan.Settings)) ([]plan.Cell, error) {
	if fs.Changed("repeat") {
		if err := plan.ValidateRepeat(a.repeat); err != nil {
			return nil, err
		}
		sc.Repeat = a.repeat
	}
	sc.Thresholds = append(sc.Thresholds, a.thresholds...)
	if fs.Changed("metrics-addr") {
		sc.MetricsAddr = a.metrics
	}
	if sc.MetricsAddr != "" {
		if err := metrics.CheckAddr(sc.MetricsAddr); err != nil {
			return nil, err
		}
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
		return usageErr(err)
	}
	exp, err := startMetrics(cmd, sc.MetricsAddr)
	if err != nil {
		return err
	}
	defer exp.Close()
	ctx, stop := runner.Interruptible()
	defer stop()
	opt := runner.Options{Scenario: sc.Name, Command: cmd, Log: os.Stderr, Dir: a.out, ConfigFile: a.file, Metrics: exp,
		Progress: runner.NewProgress(cells, sc.Repeat)}
	if opt.Dir == "" {
		opt.Dir = runner.DefaultDir(sc.Name)
	}
	out, err := runner.Run(ctx, sc, cells, opt)
	if errors.As(err, new(runner.ErrDirNotEmpty)) {
		return usageErr(err)
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
	if !a.noReport && len(out.Cells) > 0 && !(sc.Faulty && out.Interrupted) {
		reportErr = buildScenarioReport(out.Dir, sc)
	}
	unmet, unjudged, disagree := out.Unshown()
	switch {
	case out.Interrupted:
		return quietExit(exitInterrupted)
	case out.Err != nil:
		return quietExit(exitFailure)
	case len(unmet) > 0 || len(unjudged) > 0 || len(disagree) > 0:
		return quietExit(exitThreshold) // a cell did not show what its scenario claims
	}
	return reportErr
}

// buildScenarioReport runs the report stage on a finished results
// directory with the scenario's report: section and thresholds.
func buildScenarioReport(dir string, sc *plan.Scenario) error {
	ths, _ := results.ParseThresholds(sc.Thresholds)                             // checked by Expand
	return reportStage(dir, defaultReportOptions().WithScenario(sc.Report, ths)) // slo_success checked by plan
}
