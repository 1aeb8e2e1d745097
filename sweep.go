package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"lockbench/bench"
	"lockbench/configs"
	"lockbench/localmasters"
	"lockbench/metrics"
	"lockbench/plan"
	"lockbench/results"
)

// sweepArgs are the sweep command's own flags.
type sweepArgs struct {
	file       string
	out        string
	dryRun     bool
	noReport   bool
	thresholds []string
	repeat     int
	metrics    string
}

func cmdSweep(args []string) error {
	var a sweepArgs
	overrides := plan.Defaults()
	fs := pflag.NewFlagSet("sweep", pflag.ContinueOnError)
	fs.StringVarP(&a.file, "file", "f", "", "scenario YAML (a path, or a shipped name: "+strings.Join(configs.Names(), ", ")+")")
	fs.StringVar(&a.out, "out", "", "results directory (default results/NAME-YYYYMMDD-HHMMSS)")
	fs.BoolVar(&a.dryRun, "dry-run", false, "print the expanded cells and the estimated duration, run nothing")
	fs.BoolVar(&a.noReport, "no-report", false, "do not build the report at the end")
	fs.StringArrayVar(&a.thresholds, "threshold", nil, "exit 3 unless every cell meets this, e.g. acquire.p99<10ms (repeatable; added to the file's thresholds)")
	fs.IntVar(&a.repeat, "repeat", 1, "measure every cell this many times, interleaved (A,B,C,A,B,C…); figures become medians with their spread (overrides the file's repeat)")
	fs.StringVar(&a.metrics, "metrics-addr", "", metricsAddrUsage)
	plan.BindFlags(fs, &overrides)
	if err := fs.Parse(args); err != nil {
		return flagErr(err)
	}
	if a.file == "" {
		return usagef("file: none given; use -f configs/NAME.yaml or a shipped name (%s)", strings.Join(configs.Names(), ", "))
	}
	sw, err := loadScenario(a.file)
	if err != nil {
		return usageErr(err)
	}
	if fs.Changed("repeat") {
		if err := plan.ValidateRepeat(a.repeat); err != nil {
			return usageErr(err)
		}
		sw.Repeat = a.repeat
	}
	sw.Thresholds = append(sw.Thresholds, a.thresholds...)
	if fs.Changed("metrics-addr") {
		sw.MetricsAddr = a.metrics
	}
	if sw.MetricsAddr != "" {
		if err := metrics.CheckAddr(sw.MetricsAddr); err != nil {
			return usageErr(err)
		}
	}
	if _, err := parseThresholds(sw.Thresholds); err != nil {
		return usageErr(err)
	}
	cells, err := applyOverrides(sw, fs)
	if err != nil {
		return usageErr(err)
	}
	if a.dryRun {
		printPlan(os.Stdout, sw, cells)
		return nil
	}
	return runSweep(sw, cells, a)
}

// loadScenario reads a file, or a shipped scenario by name.
func loadScenario(name string) (*plan.Sweep, error) {
	// A directory is never a scenario file (a results folder may share a
	// shipped scenario's name).
	if fi, err := os.Stat(name); err != nil || fi.IsDir() {
		if b, ok := configs.Get(name); ok {
			return plan.ParseSweep(name, b)
		}
		return nil, fmt.Errorf("config: %s: no such file or shipped scenario (shipped: %s)", name, strings.Join(configs.Names(), ", "))
	}
	return plan.LoadSweep(name)
}

// applyOverrides lays the flags set on the command line over the scenario:
// a flag for a swept setting replaces that axis.
func applyOverrides(sw *plan.Sweep, fs *pflag.FlagSet) ([]plan.Cell, error) {
	var axes []plan.Axis
	for _, ax := range sw.Axes() {
		if f := fs.Lookup(plan.FlagName(ax.Name)); f != nil && f.Changed {
			continue
		}
		axes = append(axes, ax)
	}
	sw.SetAxes(axes)
	if err := plan.ApplyChanged(fs, &sw.Settings); err != nil {
		return nil, err
	}
	if fs.Changed("masters") {
		sw.Settings.Local = 0
	}
	if err := sw.CheckSize(sw.Settings.Force); err != nil {
		return nil, err
	}
	cells, err := sw.Cells()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, c := range cells {
		warnings, err := c.Settings.Validate()
		if err != nil {
			return nil, fmt.Errorf("cell %s: %w", c.Label, err)
		}
		for _, w := range warnings {
			if !seen[w] {
				seen[w] = true
				fmt.Fprintln(os.Stderr, "WARNING:", w)
			}
		}
	}
	return cells, nil
}

func printPlan(w io.Writer, sw *plan.Sweep, cells []plan.Cell) {
	fmt.Fprintf(w, "scenario %s: %d cells%s, estimated %s\n", sw.Name, len(cells), repeatText(sw.Repeat), estimate(sw, cells))
	if sw.Description != "" {
		fmt.Fprintf(w, "%s\n", strings.TrimSpace(sw.Description))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\n#\tcell\tmasters\tpersistence\tmode\twait\tload\tkeys\twarmup+duration")
	for _, c := range cells {
		s := c.Settings
		masters := fmt.Sprintf("%d local", s.Local)
		if len(s.Masters) > 0 {
			masters = fmt.Sprintf("%d given", len(s.Masters))
		}
		load := fmt.Sprintf("%d workers", s.Workers)
		if s.Load == "open" {
			load = fmt.Sprintf("%.0f/s open", s.Rate)
		}
		p := s.Persistence
		if p == "" {
			p = map[bool]string{true: "none", false: "server's"}[len(s.Masters) == 0]
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d %s\t%s+%s\n", c.Index, c.Label, masters, p, s.Mode, s.Wait, load,
			s.Keys, s.Distribution, s.Warmup, s.Duration)
	}
	tw.Flush()
}

func runSweep(sw *plan.Sweep, cells []plan.Cell, a sweepArgs) error {
	out, err := createResultsDir(a.out, sweepManifest(sw, a))
	if err != nil {
		return err
	}
	dir, man := out.path, out.man
	exp, err := startMetrics("sweep", sw.MetricsAddr)
	if err != nil {
		return err
	}
	defer exp.Close()
	ctx, stop := interruptible()
	defer stop()
	fmt.Fprintf(os.Stderr, "lockbench sweep: %s, %d cells%s, estimated %s, results in %s\n",
		sw.Name, len(cells), repeatText(sw.Repeat), estimate(sw, cells), dir)
	prog := newProgress(cells, sw.Repeat)
	pool := &bench.Pool{Log: prog.logWriter()}
	st := &sweepState{out: out, runID: bench.NewRunID(), repeats: sw.Repeat, runs: make([][]results.Run, len(cells)),
		metrics: exp, scenario: sw.Name}
	failed := st.runRounds(ctx, pool, cells, prog)
	prog.finish()
	if err := pool.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "lockbench sweep:", err)
	}
	if err := out.finish(ctx.Err() != nil); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "lockbench sweep: %d of %d cells written to %s\n", len(man.Cells), len(cells), dir)
	var reportErr error
	if !a.noReport && len(man.Cells) > 0 {
		reportErr = buildSweepReport(dir, sw)
	}
	switch {
	case man.Interrupted:
		return quietExit(exitInterrupted)
	case failed:
		return quietExit(exitFailure)
	}
	return reportErr
}

func sweepManifest(sw *plan.Sweep, a sweepArgs) *results.Manifest {
	return &results.Manifest{
		Name: sw.Name, Description: strings.TrimSpace(sw.Description), ConfigFile: a.file,
		Config:           map[string]any{"settings": sw.Settings.Redacted(), "axes": sw.Axes(), "report": sw.Report, "thresholds": sw.Thresholds, "repeat": sw.Repeat},
		LockbenchVersion: version, GoVersion: runtime.Version(), Machine: machine(sw.Settings.LocalCPUs), StartedAt: time.Now().UTC(),
		Segment: sw.Settings.Segment,
	}
}

// runRounds measures every cell once per round, round after round: slow
// drift of the machine lands on all cells alike instead of on the last
// ones. It stops at an interrupt or at the first cell that fails (true).
func (st *sweepState) runRounds(ctx context.Context, pool *bench.Pool, cells []plan.Cell, prog *progress) (failed bool) {
	for r := 1; r <= st.repeats; r++ {
		for i, c := range cells {
			if ctx.Err() != nil {
				return false
			}
			prog.startCell(c, r)
			res, err := st.runCell(ctx, pool, i, c, r, prog)
			if err != nil {
				prog.finish()
				fmt.Fprintf(os.Stderr, "lockbench sweep: cell %s: %v\n", c.Label, err)
				return true
			}
			prog.endCell(c, r, res)
			if res.Interrupted {
				return false
			}
		}
	}
	return false
}

// sweepState is what a sweep keeps between cells: the repeats measured so
// far of each cell and the manifest it rewrites after each.
type sweepState struct {
	out      *resultsDir
	runID    string
	repeats  int
	metrics  *metrics.Exporter // live metrics (nil: off)
	scenario string
	runs     [][]results.Run // by cell position: repeats so far
}

// runCell measures repeat r of cell c, then writes the cell's result file
// combined over its repeats so far (and their interval logs), so that an
// interrupted sweep keeps every repeat it finished.
func (st *sweepState) runCell(ctx context.Context, pool *bench.Pool, i int, c plan.Cell, r int, prog *progress) (*results.Run, error) {
	stem := c.ID
	runID := st.runID
	if st.repeats > 1 {
		stem = filepath.Join("repeats", fmt.Sprintf("%s.r%d", c.ID, r))
		runID = fmt.Sprintf("%s-r%d", st.runID, r) // fresh keys for every repeat
	}
	opt := bench.CellOptions{RunID: runID, OnInterval: prog.interval, Metrics: st.metrics, Scenario: st.scenario, CellID: c.ID}
	res, redisVersion, err := runSweepCell(ctx, pool, st.out.path, c, stem, opt)
	if err != nil {
		return nil, err
	}
	st.runs[i] = append(st.runs[i], *res)
	combined := results.CombineRepeats(st.runs[i])
	if combined.Repeats != nil {
		combined.Repeats.FreshMasters = plan.RepeatsNeedFreshMasters(c.Settings)
		if err := combineRepeatLogs(st.out.path, c.ID, len(st.runs[i])); err != nil {
			return nil, err
		}
	}
	info := results.CellInfo{Index: c.Index, ID: c.ID, Label: c.Label, Axes: c.Axes, File: "cells/" + c.ID + ".json"}
	combined.Cell = &info
	if err := results.WriteFileAtomic(filepath.Join(st.out.path, info.File), func(w io.Writer) error { return results.WriteJSON(w, combined) }); err != nil {
		return nil, err
	}
	if r == 1 {
		st.out.man.Cells = append(st.out.man.Cells, info)
	}
	st.out.man.RedisServerVersion = firstNonEmpty(st.out.man.RedisServerVersion, redisVersion)
	if err := st.out.writeManifest(); err != nil {
		return nil, err
	}
	return res, nil
}

// combineRepeatLogs writes a cell's interval logs as the intervals of all
// its repeats so far, in order: the report's percentile plots then show
// the histograms of every repeat added together.
func combineRepeatLogs(dir, id string, n int) error {
	for _, m := range []string{results.MetricAcquire, results.MetricAcquireUncorrected, results.MetricFailed, results.MetricRelease} {
		var parts []string
		for r := 1; r <= n; r++ {
			parts = append(parts, results.RepeatLogPath(dir, id, r, m))
		}
		if err := results.ConcatIntervalLogs(filepath.Join(dir, "cells", id+"."+m+".hlog"), m, parts); err != nil {
			return err
		}
	}
	return nil
}

func repeatText(n int) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf(" × %d repeats (interleaved)", n)
}

// estimate is the sweep's expected duration: every repeat runs every cell.
func estimate(sw *plan.Sweep, cells []plan.Cell) time.Duration {
	d := plan.EstimatedDuration(cells) * time.Duration(max(sw.Repeat, 1))
	return d.Round(time.Second)
}

// runSweepCell prepares masters, streams .hlog files (cells/STEM.METRIC.hlog)
// through temp names and runs the cell.
func runSweepCell(ctx context.Context, pool *bench.Pool, dir string, c plan.Cell, stem string, opt bench.CellOptions) (*results.Run, string, error) {
	m, err := pool.PrepareFor(ctx, c.Settings, c.ID)
	if err != nil {
		return nil, "", err
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, "cells", stem)), 0o755); err != nil {
		return nil, "", fmt.Errorf("out: %w", err)
	}
	logNames := map[int]string{results.Acquire: results.MetricAcquire, results.Failed: results.MetricFailed, results.Release: results.MetricRelease}
	if c.Settings.Load == "open" {
		logNames[results.AcquireUncorrected] = results.MetricAcquireUncorrected
	}
	logs := map[int]io.Writer{}
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
			os.Remove(f.Name()) // only still there when the cell failed
		}
	}()
	for idx, name := range logNames {
		f, err := os.Create(filepath.Join(dir, "cells", filepath.Dir(stem), "."+filepath.Base(stem)+"."+name+".hlog.tmp"))
		if err != nil {
			return nil, "", fmt.Errorf("out: %w", err)
		}
		files = append(files, f)
		logs[idx] = f
	}
	opt.Logs = logs
	res, err := bench.RunCell(ctx, c.Settings, m, c.Index, opt)
	if err != nil {
		return nil, "", err
	}
	for _, f := range files {
		if err := f.Close(); err != nil {
			return nil, "", fmt.Errorf("out: %w", err)
		}
		final := filepath.Join(filepath.Dir(f.Name()), strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f.Name()), "."), ".tmp"))
		if err := os.Rename(f.Name(), final); err != nil {
			return nil, "", fmt.Errorf("out: %w", err)
		}
	}
	return res, m.Version, nil
}

// machine describes where the client ran, for the manifest, with the CPU
// split of --local-cpus (validated before).
func machine(localCPUs string) results.Machine {
	host, _ := os.Hostname()
	m := results.Machine{Hostname: host, OS: runtime.GOOS, Arch: runtime.GOARCH, Cores: runtime.NumCPU()}
	if localCPUs != "" {
		m.LocalCPUs, m.ClientCPUs, _ = localmasters.SplitCPUs(localCPUs)
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				var kb int64
				fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
				m.MemoryBytes = kb * 1024
			}
		}
	}
	return m
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// progress shows a live bar on a terminal and plain lines otherwise.
type progress struct {
	cells   []plan.Cell
	repeats int
	tty     bool
	bar     *progressbar.ProgressBar
	cur     plan.Cell
	repeat  int
	started time.Time
	secs    int
}

func newProgress(cells []plan.Cell, repeats int) *progress {
	p := &progress{cells: cells, repeats: max(repeats, 1), tty: term.IsTerminal(int(os.Stderr.Fd())), started: time.Now()}
	if p.tty {
		total := 0
		for _, c := range cells {
			total += int(time.Duration(c.Settings.Duration).Seconds()) * p.repeats
		}
		p.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(os.Stderr), progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetElapsedTime(true), progressbar.OptionShowDescriptionAtLineEnd(), progressbar.OptionSetWidth(30),
			progressbar.OptionFullWidth(), progressbar.OptionThrottle(200*time.Millisecond))
	}
	return p
}

// logWriter is where master start-up lines go without breaking the bar.
func (p *progress) logWriter() io.Writer {
	if p.tty {
		return barWriter{p.bar}
	}
	return os.Stderr
}

func (p *progress) startCell(c plan.Cell, repeat int) {
	p.cur = c
	p.repeat = repeat
	p.secs = 0
	if !p.tty {
		fmt.Fprintf(os.Stderr, "cell %d/%d%s %s: warm-up %s, measuring %s\n", c.Index+1, len(p.cells), p.repeatTag(), c.Label, c.Settings.Warmup, c.Settings.Duration)
	}
}

// repeatTag says which repeat runs, when there are several.
func (p *progress) repeatTag() string {
	if p.repeats <= 1 {
		return ""
	}
	return fmt.Sprintf(" (repeat %d/%d)", p.repeat, p.repeats)
}

func (p *progress) interval(iv results.Interval) {
	secs := iv.End.Sub(iv.Start).Seconds()
	if secs <= 0 {
		return
	}
	rate := float64(iv.Counts[results.Acquire]) / secs
	p.secs++
	if p.tty {
		p.bar.Describe(fmt.Sprintf("cell %d/%d%s %s | %.0f cycles/s p99 %.2fms", p.cur.Index+1, len(p.cells), p.repeatTag(), p.cur.Label, rate, iv.AcquireP99/1000))
		_ = p.bar.Add(1)
		return
	}
	if p.secs%5 == 0 {
		fmt.Fprintf(os.Stderr, "  %ds: %.0f cycles/s, acquire p99 %.2fms\n", p.secs, rate, iv.AcquireP99/1000)
	}
}

func (p *progress) endCell(c plan.Cell, repeat int, r *results.Run) {
	p.repeat = repeat
	line := fmt.Sprintf("cell %d/%d%s %s: %.0f cycles/s, acquire p50 %.0fµs p99 %.0fµs, %d violations",
		c.Index+1, len(p.cells), p.repeatTag(), c.Label, r.Throughput.CyclesPerSec, r.AcquireLatency.P50, r.AcquireLatency.P99, r.Safety.Violations)
	if p.tty {
		_, _ = progressbar.Bprintln(p.bar, line)
		return
	}
	fmt.Fprintln(os.Stderr, line)
}

func (p *progress) finish() {
	if p.tty && p.bar != nil {
		_ = p.bar.Finish()
		fmt.Fprintln(os.Stderr)
	}
}

// barWriter prints whole lines above a live progress bar.
type barWriter struct{ bar *progressbar.ProgressBar }

func (b barWriter) Write(p []byte) (int, error) {
	_, err := progressbar.Bprintln(b.bar, strings.TrimRight(string(p), "\n"))
	return len(p), err
}
