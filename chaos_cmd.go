package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"lockbench/chaos"
	"lockbench/localmasters"
	"lockbench/metrics"
	"lockbench/results"
)

// chaosClientArg, as the first argument, makes `lockbench chaos` a client
// process of a running scenario (started by lockbench itself, not by users).
const chaosClientArg = "__client"

type chaosArgs struct {
	file     string
	out      string
	dryRun   bool
	noReport bool
	cells    []string
	faults   []string
	expect   []string
	metrics  string
}

func cmdChaos(args []string) error {
	if len(args) > 0 && args[0] == chaosClientArg {
		return quietExit(chaos.ClientMain(args[1:]))
	}
	var a chaosArgs
	flags := chaos.DefaultSettings()
	fs := pflag.NewFlagSet("chaos", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: lockbench chaos [-f SCENARIO] [flags]\n\n"+
			"Runs Redlock under scheduled faults (crash/restart, partitions, latency, resets, client pauses,\n"+
			"clock jumps) while clients do read-modify-writes on a protected resource, and checks for\n"+
			"overlapping holds, lost updates and availability. Writes a results directory like sweep.\n"+
			"Shipped scenarios: "+strings.Join(chaos.ShippedNames(), ", ")+" (configs/chaos/).\n\nflags:")
		fs.PrintDefaults()
	}
	fs.StringVarP(&a.file, "file", "f", "", "chaos scenario YAML (a path, or a shipped name: "+strings.Join(chaos.ShippedNames(), ", ")+")")
	fs.StringVar(&a.out, "out", "", "results directory (default results/NAME-YYYYMMDD-HHMMSS)")
	fs.BoolVar(&a.dryRun, "dry-run", false, "print the cells, their faults and expectations, run nothing")
	fs.BoolVar(&a.noReport, "no-report", false, "do not build the report at the end")
	fs.StringArrayVar(&a.cells, "cell", nil, "run only this cell (repeatable)")
	fs.StringArrayVar(&a.faults, "fault", nil, `replace the faults: KIND at=D field=value..., e.g. "crash at=3s master_index=1 restart=immediate" (repeatable)`)
	fs.StringArrayVar(&a.expect, "expect", nil, `replace the expectations: METRIC OP VALUE, e.g. "violations>0" (repeatable)`)
	fs.StringVar(&a.metrics, "metrics-addr", "", metricsAddrUsage)
	chaos.BindFlags(fs, &flags)
	if err := fs.Parse(args); err != nil {
		return flagErr(err)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if fs.Changed("local") && fs.Changed("masters") {
		return usagef("local: given twice (as --local and --masters, its old name); give --local")
	}
	sc, err := chaosScenario(a, fs, flags)
	if err != nil {
		return usageErr(err)
	}
	if fs.Changed("metrics-addr") {
		sc.MetricsAddr = a.metrics
	}
	if sc.MetricsAddr != "" {
		if err := metrics.CheckAddr(sc.MetricsAddr); err != nil {
			return usageErr(err)
		}
	}
	if a.dryRun {
		printChaosPlan(os.Stdout, sc)
		return nil
	}
	if len(sc.Cells) > 0 {
		if _, ok := localmasters.RedisServerPath(); !ok {
			return errors.New("redis-server not found in PATH; chaos needs real masters it can kill (apt-get install redis-server)")
		}
	}
	return runChaos(sc, a)
}

// chaosScenario loads the scenario (or makes one cell from flags), keeps
// the cells asked for and lays the flags over every cell.
func chaosScenario(a chaosArgs, fs *pflag.FlagSet, flags chaos.Settings) (*chaos.Scenario, error) {
	sc := &chaos.Scenario{Name: "chaos", Settings: flags, Cells: []chaos.Cell{{Name: "flags", ID: "000-flags", Settings: flags, Overrides: map[string]string{}}}}
	if a.file != "" {
		var err error
		if sc, err = chaos.Load(a.file); err != nil {
			return nil, err
		}
	}
	given, err := flagFaultsAndExpect(a)
	if err != nil {
		return nil, err
	}
	if sc.Cells, err = selectCells(sc, a.cells); err != nil {
		return nil, err
	}
	for i := range sc.Cells {
		c := &sc.Cells[i]
		if err := chaos.ApplyChanged(fs, &c.Settings); err != nil {
			return nil, err
		}
		if len(a.faults) > 0 {
			c.Faults = given.Faults
		}
		if len(a.expect) > 0 {
			c.Expect = given.Expect
		}
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("cell %s: %w", c.Name, err)
		}
	}
	return sc, nil
}

// flagFaultsAndExpect are the faults and expectations given by flags.
func flagFaultsAndExpect(a chaosArgs) (chaos.Cell, error) {
	var c chaos.Cell
	for _, f := range a.faults {
		spec, err := chaos.ParseFaultFlag(f)
		if err != nil {
			return c, err
		}
		c.Faults = append(c.Faults, spec)
	}
	for _, e := range a.expect {
		ex, err := chaos.ParseExpectFlag(e)
		if err != nil {
			return c, err
		}
		c.Expect = append(c.Expect, ex)
	}
	return c, nil
}

// selectCells keeps the named cells (--cell), in the scenario's order; no
// names keep all.
func selectCells(sc *chaos.Scenario, names []string) ([]chaos.Cell, error) {
	if len(names) == 0 {
		return sc.Cells, nil
	}
	var all []string
	for _, c := range sc.Cells {
		all = append(all, c.Name)
	}
	for _, n := range names {
		if !slices.Contains(all, n) {
			return nil, fmt.Errorf("cell: %q is not a cell of %s; use one of %s", n, sc.Name, strings.Join(all, ", "))
		}
	}
	var keep []chaos.Cell
	for _, c := range sc.Cells {
		for _, n := range names {
			if c.Name == n {
				keep = append(keep, c)
			}
		}
	}
	return keep, nil
}

func printChaosPlan(w io.Writer, sc *chaos.Scenario) {
	var est time.Duration
	for _, c := range sc.Cells {
		est += time.Duration(c.Settings.Duration) + 2*time.Second
	}
	fmt.Fprintf(w, "chaos scenario %s: %d cells, estimated %s\n", sc.Name, len(sc.Cells), est.Round(time.Second))
	if sc.Description != "" {
		fmt.Fprintln(w, sc.Description)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	// "local": how many masters chaos starts (the --local setting); in run,
	// "masters" is a list of addresses.
	fmt.Fprintln(tw, "\n#\tcell\tlocal\tpersistence\tclients\tkeys\tttl\thold\tfencing\tduration")
	for _, c := range sc.Cells {
		s := c.Settings
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%d %s × %d\t%d\t%s\t%s %s\t%v\t%s\n", c.Index, c.Name, s.Local, s.Persistence,
			s.Clients, s.ClientMode, s.Workers, s.Keys, s.TTL, s.Hold, s.HoldDist, s.Fencing, s.Duration)
	}
	tw.Flush()
	for _, c := range sc.Cells {
		fmt.Fprintf(w, "\n%d %s\n", c.Index, c.Name)
		for _, warn := range c.Settings.Warnings() {
			fmt.Fprintf(w, "  WARNING: %s\n", warn)
		}
		if len(c.Faults) == 0 {
			fmt.Fprintln(w, "  faults: none")
		}
		for _, f := range c.Faults {
			fmt.Fprintf(w, "  fault: %s\n", f)
		}
		for _, e := range c.Expect {
			fmt.Fprintf(w, "  expect: %s\n", e)
		}
	}
}

func runChaos(sc *chaos.Scenario, a chaosArgs) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	out, err := createResultsDir(a.out, chaosManifest(sc, a.file))
	if err != nil {
		return err
	}
	ctx, stop := interruptible()
	defer stop()
	chaos.Version = version
	exp, err := startMetrics("chaos", sc.MetricsAddr)
	if err != nil {
		return err
	}
	defer exp.Close()
	fmt.Fprintf(os.Stderr, "lockbench chaos: %s, %d cells, results in %s\n", sc.Name, len(sc.Cells), out.path)
	opt := chaos.Options{ClientCommand: []string{exe, "chaos", chaosClientArg}, Log: os.Stderr, RunID: newChaosRunID(), Scenario: sc.Name,
		Observer: chaosObserver(exp, sc.Name)}
	run := chaosCells{out: out}
	run.all(ctx, sc, opt)
	if err := out.finish(ctx.Err() != nil); err != nil {
		return err
	}
	return run.conclude(sc, a)
}

// chaosCells is what a chaos run's cells came to, as they ran.
type chaosCells struct {
	out             *resultsDir
	failed          bool
	unmet, unjudged []string
	done            []*chaos.CellResult
	doneCells       []chaos.Cell
}

// all runs the cells in order, writing each one's results, until one fails
// or the run is interrupted.
func (r *chaosCells) all(ctx context.Context, sc *chaos.Scenario, opt chaos.Options) {
	for i, c := range sc.Cells {
		if ctx.Err() != nil {
			return
		}
		fmt.Fprintf(os.Stderr, "cell %d/%d %s: %d s; faults: %s\n", i+1, len(sc.Cells), c.Name,
			int(time.Duration(c.Settings.Duration).Seconds()), faultSummary(c))
		for _, warn := range c.Settings.Warnings() {
			fmt.Fprintln(os.Stderr, "WARNING:", warn)
		}
		res, err := chaos.RunCell(ctx, c, opt)
		if err != nil {
			fmt.Fprintf(os.Stderr, "lockbench chaos: cell %s: %v\n", c.Name, err)
			r.failed = true
			return
		}
		if err := r.write(c, res); err != nil {
			fmt.Fprintln(os.Stderr, "lockbench chaos:", err)
			r.failed = true
			return
		}
		if res.Run.Interrupted {
			return
		}
		for _, f := range res.Failed {
			r.unmet = append(r.unmet, c.Name+": "+f)
		}
		for _, f := range res.NotJudged {
			r.unjudged = append(r.unjudged, c.Name+": "+f)
		}
	}
}

// write writes a cell's results and lists it in the manifest.
func (r *chaosCells) write(c chaos.Cell, res *chaos.CellResult) error {
	info, err := writeChaosCell(r.out.path, c, res)
	if err != nil {
		return err
	}
	r.out.man.Cells = append(r.out.man.Cells, info)
	if err := r.out.writeManifest(); err != nil {
		return err
	}
	r.done, r.doneCells = append(r.done, res), append(r.doneCells, c)
	return nil
}

// conclude prints the safety table and what was not shown, builds the
// report and says how the run ends.
func (r *chaosCells) conclude(sc *chaos.Scenario, a chaosArgs) error {
	man, dir := r.out.man, r.out.path
	printSafetyTable(os.Stdout, r.doneCells, r.done, colorOutput(os.Stdout))
	fmt.Fprintf(os.Stderr, "lockbench chaos: %d of %d cells written to %s\n", len(man.Cells), len(sc.Cells), dir)
	for _, u := range r.unjudged {
		fmt.Fprintln(os.Stderr, "lockbench chaos: NOT JUDGED:", u)
	}
	for _, u := range r.unmet {
		fmt.Fprintln(os.Stderr, "lockbench chaos: NOT SHOWN:", u)
	}
	var reportErr error
	if !a.noReport && len(man.Cells) > 0 && !man.Interrupted {
		reportErr = reportStage(dir, defaultReportOptions())
	}
	switch {
	case man.Interrupted:
		return quietExit(exitInterrupted)
	case r.failed:
		return quietExit(exitFailure)
	case len(r.unmet) > 0 || len(r.unjudged) > 0:
		return quietExit(exitThreshold) // a cell did not show what its scenario claims
	}
	return reportErr
}

// chaosManifest describes a chaos run: every cell's settings, faults and
// expectations as given.
func chaosManifest(sc *chaos.Scenario, file string) *results.Manifest {
	cellsCfg := make([]any, len(sc.Cells))
	for i, c := range sc.Cells {
		var fs []string
		for _, f := range c.Faults {
			fs = append(fs, f.String())
		}
		var ex []string
		for _, e := range c.Expect {
			ex = append(ex, e.String())
		}
		cellsCfg[i] = map[string]any{"name": c.Name, "settings": c.Settings, "faults": fs, "expect": ex}
	}
	man := &results.Manifest{
		Name: sc.Name, Description: sc.Description, ConfigFile: file,
		Config:           map[string]any{"kind": "chaos", "settings": sc.Settings, "cells": cellsCfg},
		LockbenchVersion: version, GoVersion: runtime.Version(), Machine: machine(""), StartedAt: time.Now().UTC(),
	}
	if v, err := localmasters.RedisServerVersion(firstNonEmpty(redisPath(), "redis-server")); err == nil {
		man.RedisServerVersion = v
	}
	return man
}

// writeChaosCell writes the cell's result and interval logs.
func writeChaosCell(dir string, c chaos.Cell, res *chaos.CellResult) (results.CellInfo, error) {
	axes := map[string]string{"cell": c.Name}
	for k, v := range c.Overrides {
		axes[k] = v
	}
	info := results.CellInfo{Index: c.Index, ID: c.ID, Label: c.Name, Axes: axes, File: "cells/" + c.ID + ".json"}
	for name, ivs := range res.Intervals {
		path := filepath.Join(dir, "cells", c.ID+"."+name+".hlog")
		if err := results.WriteFileAtomic(path, func(w io.Writer) error { return results.WriteIntervalLog(w, name, ivs) }); err != nil {
			return info, err
		}
	}
	res.Run.Cell = &info
	err := results.WriteFileAtomic(filepath.Join(dir, info.File), func(w io.Writer) error { return results.WriteJSON(w, res.Run) })
	return info, err
}

func faultSummary(c chaos.Cell) string {
	if len(c.Faults) == 0 {
		return "none"
	}
	var s []string
	for _, f := range c.Faults {
		s = append(s, f.String())
	}
	return strings.Join(s, "; ")
}

// printSafetyTable is the human summary of the cells run. With color,
// violations, lost updates and a cell that failed are red (a violation also
// in a cell without expectations).
func printSafetyTable(w io.Writer, cells []chaos.Cell, res []*chaos.CellResult, color bool) {
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
	fmt.Fprintf(tw, "cell\tfaults\tacquisitions\t%s\t%s\tfencing\tstale writes rejected\tavailability (attempts)\tavailability (time)\t%s\n",
		paint("violations", false), paint("lost updates", false), paint("expectations", false))
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
		rej := "-"
		if s.Fencing {
			rej = fmt.Sprint(s.StaleWritesRejected)
		}
		name := cells[i].Name
		if r.Run.Interrupted {
			name += " (interrupted)"
		}
		exp, bad := verdictText(r)
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%v\t%s\t%.1f%%\t%.1f%%\t%s\n", name, strings.Join(kinds, "+"), r.Run.Outcomes.Acquired,
			paint(fmt.Sprint(s.Violations), s.Violations > 0), paint(fmt.Sprint(s.LostUpdates), s.LostUpdates > 0),
			s.Fencing, rej, 100*s.AvailabilityOps, 100*s.AvailabilityTime, paint(exp, bad))
	}
	tw.Flush()
}

// verdictText is the expectations column; bad marks a cell that failed.
func verdictText(r *chaos.CellResult) (string, bool) {
	switch r.Verdict {
	case "not judged":
		return fmt.Sprintf("NOT JUDGED (%d)", len(r.NotJudged)), true
	case "not met":
		return fmt.Sprintf("NOT MET (%d)", len(r.Failed)), true
	case "":
		return "unchecked", false
	}
	return r.Verdict, false
}

// colorOutput: color only on a terminal, and not when NO_COLOR is set.
func colorOutput(f *os.File) bool {
	return os.Getenv("NO_COLOR") == "" && term.IsTerminal(int(f.Fd()))
}

func redisPath() string {
	p, _ := localmasters.RedisServerPath()
	return p
}

func newChaosRunID() string {
	return fmt.Sprintf("%x", time.Now().UnixNano()&0xffffffff)
}
