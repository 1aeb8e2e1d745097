package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"lockbench/internal/cli"
	"lockbench/metrics"
	"lockbench/plan"
	"lockbench/results"
	"lockbench/runner"
)

// runArgs is what `lockbench run` was asked for beyond the settings.
type runArgs struct {
	s              plan.Settings
	asJSON         bool
	out            string
	metricsAddr    string
	thresholdExprs []string
	thresholds     []results.Rule
	repeat         int
}

// runFlags are run's flags, bound to a.
func runFlags(a *runArgs) *pflag.FlagSet {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	plan.BindFlags(fs, &a.s)
	fs.BoolVar(&a.asJSON, "json", false, "print exactly one JSON object on stdout")
	fs.StringVar(&a.out, "json-out", "", "also write the JSON result to this file (atomically)")
	// --out was this file's name; elsewhere it names a results directory.
	fs.StringVar(&a.out, "out", "", "old name of --json-out")
	_ = fs.MarkDeprecated("out", "use --json-out FILE (--out names a results directory in sweep, chaos, choose and report)")
	fs.StringVar(&a.metricsAddr, "metrics-addr", "", metrics.AddrUsage)
	fs.StringArrayVar(&a.thresholdExprs, "threshold", nil, "exit 3 unless the run meets this, e.g. acquire.p99<10ms, success>=0.99 (repeatable)")
	fs.IntVar(&a.repeat, "repeat", 1, "measure the cell this many times; figures become medians with their spread (JSON: repeats)")
	return fs
}

func cmdRun(args []string) error {
	a, err := parseRunArgs(args)
	if err != nil {
		return err
	}
	sc, cells, err := plan.RunScenario(a.s, a.repeat)
	if err == nil {
		err = runner.Check(cells)
	}
	if err != nil {
		return cli.UsageErr(err)
	}
	exp, err := metrics.Start("run", a.metricsAddr, version)
	if err != nil {
		return err
	}
	defer exp.Close()
	ctx, stop := runner.Interruptible()
	defer stop()
	out, err := runner.Run(ctx, sc, cells, runner.Options{Scenario: "run", Log: os.Stderr, Metrics: exp,
		Progress: runner.NewRepeatLines(os.Stderr, a.repeat)})
	if err != nil {
		return err
	}
	if out.Err != nil {
		return keepBroken(a, out)
	}
	if len(out.Cells) == 0 { // interrupted before the first measurement
		return cli.Quiet(cli.Interrupted)
	}
	res := out.Cells[0].Combined
	res.Interrupted = res.Interrupted || out.Interrupted
	if err := writeRun(a, &res); err != nil {
		return err
	}
	return runVerdict(&res, a.thresholds)
}

// keepBroken is a run whose cell failed: what it measured before a
// client broke mid-run (results.Run.Broken) is written where the result
// goes, then the run fails with the cell's error.
func keepBroken(a runArgs, out *runner.Outcome) error {
	if len(out.Cells) > 0 {
		res := out.Cells[0].Combined
		if werr := writeRun(a, &res); werr != nil {
			return errors.Join(out.Err, werr)
		}
	}
	return out.Err
}

// parseRunArgs reads and checks the flags; bad input is a usage error and
// nothing has started. Settings warnings go to stderr.
func parseRunArgs(args []string) (runArgs, error) {
	a := runArgs{s: plan.Defaults()}
	fs := runFlags(&a)
	if err := fs.Parse(args); err != nil {
		return a, cli.FlagErr(err)
	}
	if fs.NArg() > 0 {
		return a, cli.Usagef("unexpected argument %q", fs.Arg(0))
	}
	if fs.Changed("masters") && fs.Changed("local") {
		return a, cli.Usagef("masters: give either --masters or --local, not both")
	}
	warnings, err := a.s.Validate()
	if err == nil {
		err = plan.ValidateRepeat(a.repeat)
	}
	if err == nil {
		a.thresholds, err = results.ParseThresholds(a.thresholdExprs)
	}
	if err == nil && a.metricsAddr != "" {
		err = metrics.CheckAddr(a.metricsAddr)
	}
	if err != nil {
		return a, cli.UsageErr(err)
	}
	for _, w := range warnings {
		fmt.Fprintln(os.Stderr, "WARNING:", w)
	}
	return a, nil
}

// writeRun writes the result where it was asked for: --out, and stdout as
// JSON or as text.
func writeRun(a runArgs, res *results.Run) error {
	if a.out != "" {
		if err := results.WriteFileAtomic(a.out, func(w io.Writer) error { return results.WriteJSON(w, res) }); err != nil {
			return err
		}
	}
	if a.asJSON {
		if err := results.WriteJSON(os.Stdout, res); err != nil {
			return cli.Quiet(cli.Failure) // stdout is gone: nothing to tell
		}
	} else {
		results.WriteText(os.Stdout, res, results.Settings(a.s))
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(os.Stderr, "WARNING:", w)
	}
	return nil
}

// runVerdict is the exit: interrupted, a rule not met (or not judged),
// or fine.
func runVerdict(res *results.Run, thresholds []results.Rule) error {
	if res.Interrupted {
		return cli.Quiet(cli.Interrupted)
	}
	if broken := results.CheckRules([]results.Run{*res}, thresholds); len(broken) > 0 {
		for _, b := range broken {
			fmt.Fprintln(os.Stderr, "lockbench run:", b)
		}
		return cli.Quiet(cli.Threshold)
	}
	return nil
}
