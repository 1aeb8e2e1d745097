// Package report reads results directories (see package results) and turns
// them into plots, HTML/Markdown/CSV/JSON reports, capacity, merges,
// thresholds and comparisons. It knows nothing of Redis.
package report

import (
	"fmt"
	"io"
	"lockbench/results"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Formats Build can write.
var Formats = []string{"html", "md", "json", "csv", "png", "svg"}

// Options steer Build.
type Options struct {
	// OutDir receives the report; default the only input directory.
	// Several input directories are merged into it first, so it is then
	// required.
	OutDir string
	// SLO a cell must meet to count towards capacity: acquire p99 at most
	// SLOP99 and success ratio at least SLOSuccess (defaults 10ms, 0.99).
	SLOP99     time.Duration
	SLOSuccess float64
	// TargetRate is the lock rate (cycles/s) to plan for; 0 skips
	// headroom and lock groups.
	TargetRate float64
	// Thresholds are the scenario-wide rules; each cell's own
	// (expectations) are read from its result.
	Thresholds []results.Rule
	// Needs, when set, judge a which-lock matrix in place of the needs
	// its choose run stated (lockbench report --need).
	Needs *Needs
	// MaxRate, when set, replaces a which-lock run's threshold for a
	// clean verdict (lockbench report --max-rate).
	MaxRate float64
	// Formats to write; default all. md needs the PNG plots, so asking
	// for md writes them too.
	Formats []string
}

// What --p99 and --slo-success accept (a sweep's report: section too).
const (
	SLOP99Accepted     = "a positive duration such as 10ms or 500us"
	SLOSuccessAccepted = "a ratio in (0, 1] such as 0.99"
)

// DefaultOptions are the report command's flag defaults, also for the
// report stage of sweep, chaos and choose.
func DefaultOptions() Options {
	return Options{Formats: Formats, SLOP99: 10 * time.Millisecond, SLOSuccess: 0.99}
}

// WithScenario lays a scenario's report: section over o (its unset
// values keep o's) and adds its thresholds.
func (o Options) WithScenario(r results.ReportSettings, thresholds []results.Rule) Options {
	if r.SLOP99 > 0 {
		o.SLOP99 = time.Duration(r.SLOP99)
	}
	if r.SLOSuccess > 0 {
		o.SLOSuccess = r.SLOSuccess
	}
	if r.TargetRate > 0 {
		o.TargetRate = r.TargetRate
	}
	o.Thresholds = append(o.Thresholds, thresholds...)
	return o
}

// Summary is what Build found and wrote; summary.json is this.
type Summary struct {
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Dirs        []string  `json:"dirs"`
	OutDir      string    `json:"out_dir"`
	GeneratedAt time.Time `json:"generated_at"`
	// WhichLock is lockbench choose's matrix (nil for other results); it
	// is written as which-lock.md and which-lock.html.
	WhichLock  *WhichLock       `json:"-"`
	SLO        SLO              `json:"slo"`
	TargetRate float64          `json:"target_rate,omitempty"`
	Axes       []string         `json:"axes"`
	Cells      []CellSummary    `json:"cells"`
	Capacity   []Capacity       `json:"capacity"`
	Thresholds ThresholdsResult `json:"thresholds"`
	// Differences between cells that differ in one setting, judged
	// against the noise of their repeats.
	Differences []Difference `json:"differences,omitempty"`
	// Findings say in sentences what the cells show, before any table.
	Findings []string `json:"findings,omitempty"`
	// Price is the price and safety table of cells that differ in
	// topology (none otherwise).
	Price    []PriceRow       `json:"price,omitempty"`
	Plots    []string         `json:"plots"` // plot files written, relative to OutDir
	Files    []string         `json:"files"` // every file written, relative to OutDir
	Warnings []string         `json:"warnings,omitempty"`
	Manifest results.Manifest `json:"manifest"`
}

// SLO is the service level a cell must meet to count towards capacity.
type SLO struct {
	AcquireP99Micros float64 `json:"acquire_p99_us"`
	MinSuccess       float64 `json:"min_success_ratio"`
}

// ThresholdsResult is how the cells were judged: by the scenario-wide
// rules (thresholds) and each cell's own (expectations), in one grammar;
// a cell's own rule on a metric replaces the scenario's.
type ThresholdsResult struct {
	Checked []string `json:"checked"` // the scenario-wide rules
	// Expectations are the cells' own rules, cell by cell.
	Expectations []CellRules `json:"expectations,omitempty"`
	// Judged counts the checks (a rule on a cell); Broken are those not
	// met or not judged.
	Judged int              `json:"judged"`
	Broken []results.Broken `json:"broken"`
	OK     bool             `json:"ok"`
}

// CellRules are one cell's own rules.
type CellRules struct {
	Cell  string   `json:"cell"`
	Rules []string `json:"rules"`
}

// CellSummary is one row of the cells table.
type CellSummary struct {
	Index              int               `json:"index"`
	ID                 string            `json:"id"`
	Label              string            `json:"label"`
	Axes               map[string]string `json:"axes"`
	Masters            int               `json:"masters"`
	Topology           string            `json:"topology,omitempty"`
	Persistence        string            `json:"persistence,omitempty"`
	Driver             string            `json:"driver,omitempty"`
	Mode               string            `json:"mode,omitempty"`
	Load               string            `json:"load"`
	Workers            int               `json:"workers"`
	Rate               float64           `json:"rate,omitempty"`
	Keys               float64           `json:"keys,omitempty"`
	Hold               string            `json:"hold,omitempty"`
	CyclesPerSec       float64           `json:"cycles_per_sec"`
	AcquiresPerSec     float64           `json:"acquires_per_sec"`
	Acquire            results.Latency   `json:"acquire_latency_us"`
	AcquireUncorrected *results.Latency  `json:"acquire_uncorrected_latency_us,omitempty"`
	Failed             results.Latency   `json:"acquire_failed_latency_us"`
	Release            results.Latency   `json:"release_latency_us"`
	results.Tally
	SuccessRatio       float64                           `json:"success_ratio"`
	Violations         int64                             `json:"violations"`
	MaxHolders         int64                             `json:"max_concurrent_holders"`
	ClientCPUPerCycle  float64                           `json:"client_cpu_us_per_cycle"`
	ClientCPUShare     float64                           `json:"client_cpu_share"`
	AdapterCPUPerCycle *float64                          `json:"adapter_cpu_us_per_cycle,omitempty"` // an external client's adapter's part (nil: none)
	ClientBound        bool                              `json:"client_bound"`
	ServerBusiestShare float64                           `json:"server_busiest_share,omitempty"`
	MeetsSLO           bool                              `json:"meets_slo"`
	MeasuredSeconds    float64                           `json:"measured_seconds"`
	Interrupted        bool                              `json:"interrupted,omitempty"`
	Events             []results.Event                   `json:"events,omitempty"`
	Failovers          []results.Failover                `json:"failovers,omitempty"`
	Warnings           []string                          `json:"warnings,omitempty"`
	PerMaster          map[string]results.MasterOutcomes `json:"per_master,omitempty"`
	PercentilesFile    string                            `json:"percentiles_file,omitempty"`
	Safety             results.Safety                    `json:"safety"`
	// Contention and Fairness are what waiting callers saw (nil in results
	// written before they were measured); WaitStrategy how they waited.
	Contention   *results.Contention `json:"contention,omitempty"`
	Fairness     *results.Fairness   `json:"fairness,omitempty"`
	WaitStrategy string              `json:"wait_strategy,omitempty"`
	// HistoryFile is porcupine's page of the failing key's history, from
	// the report's directory ("" : the history was not shown not linearizable).
	HistoryFile string            `json:"history_file,omitempty"`
	OpenLoop    *results.OpenLoop `json:"open_loop,omitempty"`
	// Repeats: the cell's figures per repeat and their spread; the
	// figures above are then medians.
	Repeats *results.Repeats `json:"repeats,omitempty"`

	// Limit is what limited the cell (the result's verdict, or worked out
	// from it for results written before verdicts were); Machine and
	// CommandCost are the result's; FsyncShareP50 is the share of the acquire
	// p50 that the same cell without persistence did not have.
	Limit         *results.Limit       `json:"limit,omitempty"`
	Machine       *results.CPUSplit    `json:"machine,omitempty"`
	CommandCost   *results.CommandCost `json:"redis_cost,omitempty"`
	FsyncShareP50 *float64             `json:"fsync_share_p50,omitempty"`
	// Shards are a sharded cell's per-shard figures (the result's).
	Shards []results.Shard `json:"shards,omitempty"`
}

func (o *Options) normalize(dirs []string) error {
	if len(dirs) == 0 {
		return &results.InputError{Field: "DIR", Value: "", Problem: "no results directory given", Accepted: "one or more directories written by lockbench sweep"}
	}
	if o.OutDir == "" {
		if len(dirs) > 1 {
			return &results.InputError{Field: "--out", Value: "", Problem: "several directories are merged into a new one", Accepted: "a directory to write the merged results and report to"}
		}
		o.OutDir = dirs[0]
	}
	if o.SLOP99 == 0 {
		o.SLOP99 = 10 * time.Millisecond
	}
	if o.SLOP99 < 0 {
		return &results.InputError{Field: "--slo-p99", Value: o.SLOP99.String(), Problem: "negative", Accepted: "a positive duration such as 10ms"}
	}
	if o.SLOSuccess == 0 {
		o.SLOSuccess = 0.99
	}
	if o.SLOSuccess < 0 || o.SLOSuccess > 1 {
		return &results.InputError{Field: "--slo-success", Value: fmt.Sprint(o.SLOSuccess), Problem: "out of range", Accepted: "a ratio in (0, 1], such as 0.99"}
	}
	if o.TargetRate < 0 {
		return &results.InputError{Field: "--target-rate", Value: fmt.Sprint(o.TargetRate), Problem: "negative", Accepted: "locks (cycles) per second, 0 for none"}
	}
	return o.normalizeFormats()
}

// normalizeFormats checks the formats, lower-cased, all by default; md
// needs the PNG plots.
func (o *Options) normalizeFormats() error {
	// A copy: the caller's slice (maybe Formats itself) stays as it was.
	o.Formats = slices.Clone(o.Formats)
	if len(o.Formats) == 0 {
		o.Formats = slices.Clone(Formats)
	}
	for i, f := range o.Formats {
		f = strings.ToLower(strings.TrimSpace(f))
		if !slices.Contains(Formats, f) {
			return &results.InputError{Field: "--format", Value: f, Problem: "not a format", Accepted: strings.Join(Formats, ", ")}
		}
		o.Formats[i] = f
	}
	if o.has("md") && !o.has("png") {
		o.Formats = append(o.Formats, "png")
	}
	return nil
}

func (o *Options) has(f string) bool { return slices.Contains(o.Formats, f) }

// Build reads results directories and writes the report into opt.OutDir.
// Several directories are segments of one sweep run on several machines:
// they are merged (histograms added) into opt.OutDir first.
func Build(dirs []string, opt Options) (*Summary, error) {
	if err := opt.normalize(dirs); err != nil {
		return nil, err
	}
	res, dir, err := loadInputs(dirs, opt.OutDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(opt.OutDir, "cells"), 0o755); err != nil {
		return nil, fmt.Errorf("out: %w", err)
	}
	s := newSummary(res, dirs, dir, opt)
	runs, err := summarizeCells(s, res, dir)
	if err != nil {
		return nil, err
	}
	fsyncShares(res.Cells, s.Cells)
	s.Capacity = []Capacity{}
	if slices.ContainsFunc(res.Cells, func(c *cell) bool { return !c.Run.Safety.ResourceChecked }) {
		// Chaos cells alone get no capacity plan: their load is
		// contention by design, and an SLO knee would say nothing.
		s.Capacity = capacity(res.Cells, s.Cells, s.SLO, opt.TargetRate)
	}
	s.Differences = differences(res.Cells)
	s.Findings = findings(res.Cells, s.Cells)
	s.Price = priceRows(res.Cells, s.Cells)
	s.Thresholds = checkThresholds(runs, opt.Thresholds)
	figs := figures(res, s)
	rendered, err := writePlots(s, figs, opt)
	if err != nil {
		return nil, err
	}
	if err := writeOutputs(s, figs, rendered, opt); err != nil {
		return nil, err
	}
	if s.WhichLock, err = writeWhichLock(dir, opt.OutDir, res.Manifest, res.Cells, s.Cells, opt.Needs, opt.MaxRate); err != nil {
		return nil, err
	}
	return s, nil
}

// loadInputs loads the one results directory, or merges several into
// out and loads that; dir is the directory loaded.
func loadInputs(dirs []string, out string) (res *loadedDir, dir string, err error) {
	dir = dirs[0]
	if len(dirs) > 1 {
		if err := Merge(dirs, out); err != nil {
			return nil, "", err
		}
		dir = out
	}
	res, err = loadDir(dir, true)
	if err != nil {
		return nil, "", err
	}
	if len(res.Cells) == 0 {
		return nil, "", &results.InputError{Field: "DIR", Value: dir, Problem: "no cells with results", Accepted: "a results directory with cells/*.json"}
	}
	return res, dir, nil
}

// newSummary starts the summary of res, read from dir.
func newSummary(res *loadedDir, dirs []string, dir string, opt Options) *Summary {
	s := &Summary{
		Name: res.Manifest.Name, Description: res.Manifest.Description,
		Dirs: dirs, OutDir: opt.OutDir, GeneratedAt: time.Now().UTC(),
		SLO:        SLO{AcquireP99Micros: float64(opt.SLOP99.Microseconds()), MinSuccess: opt.SLOSuccess},
		TargetRate: opt.TargetRate, Axes: allAxes(res.Cells),
		Warnings: res.Warnings, Manifest: res.Manifest,
	}
	if s.Name == "" {
		s.Name = filepath.Base(filepath.Clean(dir))
	}
	return s
}

// summarizeCells adds every cell's summary to s, writes its acquire
// percentiles and returns the cells' results, labelled for thresholds.
func summarizeCells(s *Summary, res *loadedDir, dir string) ([]results.Run, error) {
	runs := make([]results.Run, len(res.Cells))
	for i, c := range res.Cells {
		cs := summarizeCell(c, s.SLO)
		if l := c.Run.Safety.Linearizability; l != nil && l.Visualization != "" {
			// Linked from the report, wherever it is written.
			out, _ := filepath.Abs(s.OutDir)
			page, _ := filepath.Abs(filepath.Join(dir, l.Visualization))
			cs.HistoryFile, _ = filepath.Rel(out, page)
		}
		if h := c.Totals[results.MetricAcquire]; h != nil && h.TotalCount() > 0 {
			rel := results.CellStem(c.Info) + ".acquire.percentiles.txt"
			if err := writePercentiles(filepath.Join(s.OutDir, filepath.FromSlash(rel)), h); err != nil {
				return nil, err
			}
			cs.PercentilesFile = rel
			s.Files = append(s.Files, rel)
		}
		s.Cells = append(s.Cells, cs)
		runs[i] = c.Run
		runs[i].Cell = &results.CellInfo{Index: c.Info.Index, ID: c.Info.ID, Label: c.Info.Label, Axes: c.Axes, File: c.Info.File}
	}
	return runs, nil
}

// checkThresholds judges every cell on the scenario-wide rules and its
// own.
func checkThresholds(runs []results.Run, ths []results.Rule) ThresholdsResult {
	t := ThresholdsResult{Checked: []string{}, Broken: []results.Broken{}}
	for _, th := range ths {
		t.Checked = append(t.Checked, th.Expr)
	}
	for i := range runs {
		label := results.RunLabel(runs[i], i, len(runs))
		js := results.JudgeRun(&runs[i], ths)
		t.Judged += len(js)
		t.Broken = append(t.Broken, results.BrokenIn(label, js)...)
		if own := ownRules(js); len(own) > 0 {
			t.Expectations = append(t.Expectations, CellRules{Cell: label, Rules: own})
		}
	}
	t.OK = len(t.Broken) == 0
	return t
}

// ownRules are the cell's own rules among its judgements.
func ownRules(js []results.Judged) []string {
	var out []string
	for _, j := range js {
		if j.Rule.Scope == results.ScopeExpect {
			out = append(out, j.Rule.Expr)
		}
	}
	return out
}

// writePlots renders the figures in the formats asked for and lists them
// in s; it returns the PNGs by file name, for embedding in the HTML page
// (rendered for it even when no PNG file is asked for).
func writePlots(s *Summary, figs []figure, opt Options) (map[string][]byte, error) {
	rendered := map[string][]byte{}
	for _, f := range figs {
		for _, format := range []string{"png", "svg"} {
			embed := format == "png" && opt.has("html")
			if !opt.has(format) && !embed {
				continue
			}
			b, err := renderFigure(f, format)
			if err != nil {
				return nil, err
			}
			name := f.Name + "." + format
			if format == "png" {
				rendered[name] = b
			}
			if !opt.has(format) {
				continue
			}
			if err := writeBytes(filepath.Join(opt.OutDir, name), b); err != nil {
				return nil, err
			}
			s.Plots = append(s.Plots, name)
			s.Files = append(s.Files, name)
		}
	}
	if s.Plots == nil {
		s.Plots = []string{}
	}
	return rendered, nil
}

// writeOutputs writes the tables and pages asked for. They are listed in
// s.Files before any is written, so that summary.json names them all.
func writeOutputs(s *Summary, figs []figure, rendered map[string][]byte, opt Options) error {
	outputs := []struct {
		format, name string
		write        func(string) error
	}{
		{"csv", "cells.csv", func(p string) error { return writeCSV(p, s) }},
		{"md", "report.md", func(p string) error { return writeMarkdown(p, s, figs) }},
		{"html", "report.html", func(p string) error { return writeHTML(p, s, figs, rendered) }},
		{"json", "summary.json", func(p string) error { return writeSummaryJSON(p, s) }},
	}
	for _, o := range outputs {
		if opt.has(o.format) {
			s.Files = append(s.Files, o.name)
		}
	}
	for _, o := range outputs {
		if opt.has(o.format) {
			if err := o.write(filepath.Join(opt.OutDir, o.name)); err != nil {
				return err
			}
		}
	}
	return nil
}

func summarizeCell(c *cell, slo SLO) CellSummary {
	r := c.Run
	cs := CellSummary{
		Index: c.Info.Index, ID: c.Info.ID, Label: c.Info.Label, Axes: c.Axes,
		Masters: c.Set.N, Topology: topologyOf(c.Set), Persistence: c.Set.Persistence, Driver: c.Set.Driver, Mode: c.Set.Mode,
		Load: c.Set.Load, Workers: c.Set.Workers, Rate: c.Set.Rate, Keys: c.Set.Keys, Hold: c.Set.Hold,
		CyclesPerSec: results.FiniteOr0(r.Throughput.CyclesPerSec), AcquiresPerSec: results.FiniteOr0(r.Throughput.AcquiresPerSec),
		Acquire: r.AcquireLatency, AcquireUncorrected: r.AcquireUncorrected,
		Failed: r.AcquireFailedLatency, Release: r.ReleaseLatency,
		Tally: r.Outcomes.Tally, SuccessRatio: results.SuccessRatio(r.Outcomes),
		Violations: r.Safety.Violations, MaxHolders: r.Safety.MaxConcurrentHolder,
		ClientCPUPerCycle: results.FiniteOr0(r.Client.CPUMicrosCycle), ClientCPUShare: results.FiniteOr0(r.Client.CPUShare),
		ClientBound:     clientBound(r.Client),
		MeasuredSeconds: r.MeasuredSeconds, Interrupted: r.Interrupted,
		Events: r.Events, Failovers: r.Failovers, Warnings: r.Warnings, PerMaster: r.Outcomes.PerMaster,
		Safety: r.Safety, OpenLoop: r.OpenLoop, Repeats: r.Repeats,
		Contention: r.Contention, Fairness: r.Fairness, WaitStrategy: c.Set.WaitStrategy,
	}
	if r.Servers != nil {
		cs.ServerBusiestShare = results.FiniteOr0(r.Servers.BusiestShare)
	}
	if r.Client.IncludesAdapter {
		a := results.FiniteOr0(r.Client.AdapterCPUMicrosCycle)
		cs.AdapterCPUPerCycle = &a
	}
	cs.Limit, cs.Machine, cs.CommandCost, cs.Shards = r.Limit, r.Machine, r.CommandCost, r.Shards
	if cs.Limit == nil {
		l := results.LimitOf(&r)
		cs.Limit = &l
	}
	cs.MeetsSLO = cs.Acquire.Count > 0 && cs.Acquire.P99 <= slo.AcquireP99Micros && cs.SuccessRatio >= slo.MinSuccess
	return cs
}

// clientBound: the load generator, not Redis, limited the figure.
func clientBound(c results.Client) bool { return c.ClientBound || c.CPUShare >= 0.8 }

func writeBytes(path string, b []byte) error {
	return results.WriteFileShared(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}
