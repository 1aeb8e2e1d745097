package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"lockbench/bench"
	"lockbench/metrics"
	"lockbench/plan"
	"lockbench/results"
)

// runArgs is what `lockbench run` was asked for beyond the settings.
type runArgs struct {
	s           plan.Settings
	asJSON      bool
	out         string
	metricsAddr string
	thresholds  []results.Threshold
	repeat      int
}

func cmdRun(args []string) error {
	a, err := parseRunArgs(args)
	if err != nil {
		return err
	}
	exp, err := startMetrics("run", a.metricsAddr)
	if err != nil {
		return err
	}
	defer exp.Close()
	ctx, stop := interruptible()
	defer stop()
	pool := &bench.Pool{Log: os.Stderr}
	res, err := runRepeats(ctx, pool, a.s, a.repeat, bench.CellOptions{Metrics: exp, Scenario: "run", CellID: "run"})
	if cerr := pool.Close(); cerr != nil {
		fmt.Fprintln(os.Stderr, "lockbench run:", cerr)
	}
	if err != nil {
		return err
	}
	if err := writeRun(a, res); err != nil {
		return err
	}
	return runVerdict(res, a.thresholds)
}

// parseRunArgs reads and checks the flags; bad input is a usage error and
// nothing has started. Settings warnings go to stderr.
func parseRunArgs(args []string) (runArgs, error) {
	a := runArgs{s: plan.Defaults()}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	plan.BindFlags(fs, &a.s)
	fs.BoolVar(&a.asJSON, "json", false, "print exactly one JSON object on stdout")
	fs.StringVar(&a.out, "out", "", "also write the JSON result to this file (atomically)")
	fs.StringVar(&a.metricsAddr, "metrics-addr", "", metricsAddrUsage)
	thresholdExprs := fs.StringArray("threshold", nil, "exit 3 unless the run meets this, e.g. acquire.p99<10ms, success>=0.99 (repeatable)")
	fs.IntVar(&a.repeat, "repeat", 1, "measure the cell this many times; figures become medians with their spread (JSON: repeats)")
	if err := fs.Parse(args); err != nil {
		return a, flagErr(err)
	}
	if fs.NArg() > 0 {
		return a, usagef("unexpected argument %q", fs.Arg(0))
	}
	if fs.Changed("masters") && fs.Changed("local") {
		return a, usagef("masters: give either --masters or --local, not both")
	}
	warnings, err := a.s.Validate()
	if err == nil {
		err = plan.ValidateRepeat(a.repeat)
	}
	if err == nil {
		a.thresholds, err = parseThresholds(*thresholdExprs)
	}
	if err == nil && a.metricsAddr != "" {
		err = metrics.CheckAddr(a.metricsAddr)
	}
	if err != nil {
		return a, usageErr(err)
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
			return quietExit(exitFailure) // stdout is gone: nothing to tell
		}
	} else {
		printRun(os.Stdout, res, a.s)
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(os.Stderr, "WARNING:", w)
	}
	return nil
}

// runVerdict is the exit: interrupted, a threshold broken, or fine.
func runVerdict(res *results.Run, thresholds []results.Threshold) error {
	if res.Interrupted {
		return quietExit(exitInterrupted)
	}
	if broken := results.CheckThresholds([]results.Run{*res}, thresholds); len(broken) > 0 {
		for _, b := range broken {
			fmt.Fprintln(os.Stderr, "lockbench run: threshold broken:", b.Threshold, "actual", b.ActualText)
		}
		return quietExit(exitThreshold)
	}
	return nil
}

// runRepeats measures the cell n times on the pool's masters (restarted
// between repeats only when their persistence keeps state) and combines
// the repeats; an interrupt keeps the repeats finished so far. opt is
// every repeat's options but the run id, which each repeat gets its own of.
func runRepeats(ctx context.Context, pool *bench.Pool, s plan.Settings, n int, opt bench.CellOptions) (*results.Run, error) {
	runID := bench.NewRunID()
	var runs []results.Run
	for r := 1; r <= n; r++ {
		m, err := pool.PrepareFor(ctx, s, "run")
		if err != nil {
			return nil, err
		}
		id := runID
		if n > 1 {
			id = fmt.Sprintf("%s-r%d", runID, r)
			fmt.Fprintf(os.Stderr, "lockbench run: repeat %d/%d\n", r, n)
		}
		opt.RunID = id
		res, err := bench.RunCell(ctx, s, m, 0, opt)
		if err != nil {
			return nil, err
		}
		runs = append(runs, *res)
		if res.Interrupted || ctx.Err() != nil {
			break
		}
	}
	out := results.CombineRepeats(runs)
	if out.Repeats != nil {
		out.Repeats.FreshMasters = plan.RepeatsNeedFreshMasters(s)
		if len(runs) < n {
			out.Interrupted = true
		}
	}
	return &out, nil
}

func parseThresholds(exprs []string) ([]results.Threshold, error) {
	var out []results.Threshold
	for _, e := range exprs {
		t, err := results.ParseThreshold(e)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// printRun is the human summary: a short table.
func printRun(w io.Writer, r *results.Run, s plan.Settings) {
	printRunHeader(w, r, s)
	printRepeats(w, r)
	printLatencies(w, r)
	printOutcomes(w, r)
	printSafety(w, r.Safety)
	printCosts(w, r)
}

func printRunHeader(w io.Writer, r *results.Run, s plan.Settings) {
	load := fmt.Sprintf("workers=%d", s.Workers)
	if s.Load == "open" {
		load = fmt.Sprintf("rate=%.0f/s max-in-flight=%d", s.Rate, s.Workers)
	}
	fmt.Fprintf(w, "lockbench run: %d masters, driver=%s mode=%s wait=%s %s keys=%d (%s) ttl=%s hold=%s, %.1fs measured%s\n",
		len(r.Outcomes.PerMaster), s.Driver, s.Mode, s.Wait, load, s.Keys, s.Distribution, s.TTL, s.Hold, r.MeasuredSeconds,
		map[bool]string{true: " (INTERRUPTED)", false: ""}[r.Interrupted])
	fmt.Fprintf(w, "throughput: %.0f cycles/s%s, %.0f acquires/s\n", r.Throughput.CyclesPerSec, spreadSuffix(r, "cycles_per_sec"), r.Throughput.AcquiresPerSec)
	if ol := r.OpenLoop; ol != nil {
		fmt.Fprintf(w, "open loop: offered %.0f/s (%d starts), served %.0f/s (%d), unserved %d, pacer lag p99 %.0f µs%s\n",
			ol.OfferedRate, ol.Offered, ol.ServedRate, ol.Served, ol.Unserved, ol.PacerLag.P99,
			openLoopNote(ol))
	}
	fmt.Fprintln(w)
}

func printLatencies(w io.Writer, r *results.Run) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "latency µs"
	if r.Repeats != nil {
		head = "latency µs (percentiles: medians of the repeats)"
	}
	fmt.Fprintln(tw, head+"\tcount\tp50\tp90\tp99\tp99.9\tmax\tmean\t")
	type row struct {
		name string
		l    results.Latency
	}
	rows := []row{{"acquire ok", r.AcquireLatency}}
	if r.AcquireUncorrected != nil {
		rows = append(rows, row{"(uncorrected)", *r.AcquireUncorrected})
	}
	rows = append(rows, row{"acquire failed", r.AcquireFailedLatency}, row{"release", r.ReleaseLatency})
	for _, row := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.1f\t\n", row.name, row.l.Count,
			row.l.P50, row.l.P90, row.l.P99, row.l.P999, row.l.Max, row.l.Mean)
	}
	tw.Flush()
}

func printOutcomes(w io.Writer, r *results.Run) {
	o := r.Outcomes
	fmt.Fprintf(w, "\noutcomes: %d acquired, %d not acquired, %d errors\n", o.Acquired, o.NotAcquired, o.Errors)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "master\tsent\tok\ttaken\ttimeout\terror\tpending\tnot sent\tlate\tlate released\tSET rtt p50 µs\t")
	for _, m := range sortedMasters(o.PerMaster) {
		pm := o.PerMaster[m]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.0f\t\n", m, pm.Sent(), pm.OK, pm.Taken, pm.Timeout, pm.Error,
			pm.Pending, pm.NotSent, pm.Late, pm.LateReleased, r.BaselineRTT[m].P50)
	}
	tw.Flush()
	fmt.Fprintln(w)
}

// printCosts says what the run cost the client, the servers and the
// machine, and which of them limited it.
func printCosts(w io.Writer, r *results.Run) {
	fmt.Fprintf(w, "client: %.2f CPU s, %.1f CPU µs/cycle, %.0f%% of %d cores\n",
		r.Client.CPUSeconds, r.Client.CPUMicrosCycle, 100*r.Client.CPUShare, r.Client.Cores)
	if r.Servers != nil {
		fmt.Fprintf(w, "servers: %.2f CPU s, %.1f CPU µs/cycle, busiest master %.0f%% of one core\n",
			r.Servers.CPUSeconds, r.Servers.CPUMicrosCycle, 100*r.Servers.BusiestShare)
	}
	if m := r.Machine; m != nil {
		fmt.Fprintf(w, "machine: %d cores %.0f%% busy: lockbench %.0f%%, masters %.0f%%, other %.0f%%, steal %.0f%%\n",
			m.Cores, 100*(m.BusyShare+m.StealShare), 100*m.ClientShare, 100*m.ServersShare, 100*m.OtherShare, 100*m.StealShare)
	}
	if c := r.RedisCost; c != nil {
		fmt.Fprintf(w, "redis cost: %.1f µs of commands per cycle on the costliest master (one core: %.0f cycles/s)", c.CommandMicrosCycle, c.ProjectedRate)
		if c.CPUMicrosCycle > 0 {
			fmt.Fprintf(w, ", %.1f µs of its CPU (one core: %.0f cycles/s)", c.CPUMicrosCycle, c.ProjectedRateCPU)
		}
		fmt.Fprintf(w, "; measured %.0f cycles/s\n", c.MeasuredRate)
	}
	if l := r.Limit; l != nil {
		fmt.Fprintf(w, "limited by: %s (%s)\n", l.By, l.Evidence)
	}
}

// spreadSuffix is " ± 3.1% (median of 5)" for a figure of a repeated run.
func spreadSuffix(r *results.Run, figure string) string {
	if r.Repeats == nil {
		return ""
	}
	sp := r.Repeats.Spread[figure]
	return fmt.Sprintf(" ± %s (median of %d)", results.SpreadText(sp), sp.N)
}

// printRepeats is the spread table of a repeated run: the headline figures
// are its medians.
func printRepeats(w io.Writer, r *results.Run) {
	if r.Repeats == nil {
		return
	}
	fmt.Fprintf(w, "repeats: %d; headline figures are medians; ± is the larger side of the %s\n", r.Repeats.Count, results.CIText(r.Repeats))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "figure\tmedian\t±\tmin\tmax\t")
	for _, rr := range r.Repeats.Runs {
		fmt.Fprintf(tw, "#%d\t", rr.Repeat)
	}
	fmt.Fprintln(tw)
	for _, f := range results.Figures {
		sp := r.Repeats.Spread[f.Name]
		name := f.Text
		if f.Micros {
			name += " µs"
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%.0f\t%.0f\t", name, sp.Median, results.SpreadText(sp), sp.Min, sp.Max)
		for _, v := range results.Samples(results.Run{Repeats: &results.Repeats{Runs: r.Repeats.Runs}}, f) {
			fmt.Fprintf(tw, "%.0f\t", v)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintln(w)
}

// openLoopNote says who left offered starts unserved.
func openLoopNote(ol *results.OpenLoop) string {
	switch {
	case ol.Overloaded:
		return "  OVERLOADED: the lock could not keep up"
	case ol.Unserved > 0:
		return "  (unserved: lockbench was late, see warnings)"
	}
	return ""
}

// printSafety never shows a green 0 when the probe judged nothing.
func printSafety(w io.Writer, sf results.Safety) {
	if sf.NotJudged != "" {
		fmt.Fprintf(w, "safety: not judged (%s)\n", sf.NotJudged)
		return
	}
	fmt.Fprintf(w, "safety: %d violations in %d holds judged on their validity windows", sf.Violations, sf.JudgedHolds)
	if sf.HoldsNotJudged > 0 {
		fmt.Fprintf(w, " (%d not judged: validity ran out before use)", sf.HoldsNotJudged)
	}
	fmt.Fprintf(w, ", max %d concurrent holders of one key\n", sf.MaxConcurrentHolder)
}

func sortedMasters(m map[string]results.MasterOutcomes) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
