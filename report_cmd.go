package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"lockbench/internal/cli"
	"lockbench/report"
	"lockbench/results"
)

// cmdReport turns one results directory (or several segments of one sweep,
// merged first) into plots, tables and a self-contained HTML page.
func cmdReport(args []string) error {
	var a reportArgs
	fs := reportFlags(&a)
	if err := fs.Parse(args); err != nil {
		return cli.FlagErr(err)
	}
	return a.report(fs)
}

// reportArgs are report's flags.
type reportArgs struct {
	out, sloP99, sloSuccess, target, p99 string
	thresholds, formats, needs           []string
	maxRate                              float64
}

// reportFlags are report's flags, bound to a.
func reportFlags(a *reportArgs) *pflag.FlagSet {
	fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: lockbench report DIR [DIR...] [flags]\n\n"+
			"Writes report.html, report.md, summary.json, cells.csv and plots (PNG, SVG) for a results\n"+
			"directory. Several DIRs are segments of one sweep run on several machines: their histograms\n"+
			"are added into --out first.\n\nflags:")
		fs.PrintDefaults()
	}
	fs.StringVar(&a.out, "out", "", "output directory (default: DIR; with several DIRs a new merged-<timestamp> next to the first)")
	fs.StringVar(&a.sloP99, "slo-p99", "10ms", "old name of --p99")
	_ = fs.MarkDeprecated("slo-p99", "use --p99 (the one spelling of the p99 you need, in sweep, report and choose)")
	fs.StringVar(&a.p99, "p99", "", "the acquire p99 you need (default 10ms): the capacity plan's SLO, and with a which-lock run (lockbench choose) its needs' bound")
	fs.StringSliceVar(&a.needs, "need", nil, "judge a which-lock run (lockbench choose) again for these needs, without measuring: "+report.NeedHelp)
	fs.Float64Var(&a.maxRate, "max-rate", 0, "with a which-lock run: settle an outcome clean only when 0 of n runs bounds its rate (95%) at or below this (default the run's, 0.2)")
	fs.StringVar(&a.sloSuccess, "slo-success", "0.99", "SLO for capacity planning: lowest acceptable acquire success ratio")
	fs.StringVar(&a.target, "target-rate", "0", "lock rate to plan for (cycles/s): headroom and lock groups needed; 0 for none")
	fs.StringArrayVar(&a.thresholds, "threshold", nil, "fail (exit 3) unless every cell meets this (a cell's own expect: on the metric replaces it), e.g. acquire.p99<10ms, success>=0.99 (repeatable)")
	fs.StringSliceVar(&a.formats, "format", report.Formats, "formats to write: "+strings.Join(report.Formats, ",")+" (md implies png)")
	return fs
}

// report builds the report the flags ask for.
func (a *reportArgs) report(fs *pflag.FlagSet) error {
	dirs := fs.Args()
	if len(dirs) == 0 {
		return cli.Usagef("DIR: none given; use one or more results directories written by lockbench sweep")
	}
	opt := report.Options{OutDir: a.out, Formats: a.formats}
	field, bound := "--slo-p99", a.sloP99
	if fs.Changed("p99") {
		field, bound = "--p99", a.p99
	}
	d, err := time.ParseDuration(bound)
	if err != nil || d <= 0 {
		return cli.NotAccepted(field, bound, report.SLOP99Accepted)
	}
	opt.SLOP99 = d
	if fs.Changed("need") || (fs.Changed("p99") && report.IsWhichLockRun(dirs[0])) {
		need := time.Duration(0)
		if fs.Changed("p99") {
			need = d
		}
		n, err := report.NeedsFor(dirs[0], a.needs, need)
		if err != nil {
			return cli.UsageErr(err)
		}
		opt.Needs = &n
	}
	if fs.Changed("max-rate") {
		if a.maxRate <= 0 || a.maxRate >= 1 {
			return cli.NotAccepted("--max-rate", fmt.Sprint(a.maxRate), report.MaxRateAccepted)
		}
		opt.MaxRate = a.maxRate
	}
	if opt.SLOSuccess, err = strconv.ParseFloat(a.sloSuccess, 64); err != nil || opt.SLOSuccess <= 0 || opt.SLOSuccess > 1 {
		return cli.NotAccepted("--slo-success", a.sloSuccess, report.SLOSuccessAccepted)
	}
	if opt.TargetRate, err = strconv.ParseFloat(a.target, 64); err != nil || opt.TargetRate < 0 {
		return cli.NotAccepted("--target-rate", a.target, "a rate in cycles/s such as 50000, or 0 for none")
	}
	if opt.Thresholds, err = results.ParseThresholds(a.thresholds); err != nil {
		return cli.UsageErr(err)
	}
	if len(dirs) > 1 && opt.OutDir == "" {
		opt.OutDir = filepath.Join(filepath.Dir(filepath.Clean(dirs[0])), "merged-"+time.Now().Format("20060102-150405"))
	}
	return buildReport(dirs, opt, false)
}

// buildReport writes the report of dirs and prints what it wrote; a rule
// not met (a threshold or a cell's expectation) ends with exit 3 once the
// report is written. ownSaid: the cells' own rules were already said (by
// the run), so only the scenario-wide ones are printed again.
func buildReport(dirs []string, opt report.Options, ownSaid bool) error {
	s, err := report.Build(dirs, opt)
	if err != nil {
		return err
	}
	for _, w := range s.Warnings {
		fmt.Fprintln(os.Stderr, "WARNING:", w)
	}
	s.WriteText(os.Stdout)
	if s.Thresholds.OK {
		return nil
	}
	for _, b := range s.Thresholds.Broken {
		if !ownSaid || b.Scope != results.ScopeExpect {
			fmt.Fprintln(os.Stderr, "lockbench report:", b)
		}
	}
	return cli.Quiet(cli.Threshold)
}

// reportStage builds the report at the end of a sweep or chaos run. Its
// error is printed at once, as the report command's: the run's own
// outcome (interrupted, a failed cell) decides the exit code first.
func reportStage(dir string, opt report.Options) error {
	return cli.Quiet(cli.Print("report", buildReport([]string{dir}, opt, true)))
}
