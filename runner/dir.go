package runner

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"lockbench/internal/affinity"
	"lockbench/plan"
	"lockbench/results"
)

// resultsDir is a results directory being written: the manifest is
// rewritten after every cell, so an interrupted run leaves a directory
// the report reads.
type resultsDir struct {
	path string
	man  *results.Manifest
}

// ErrDirNotEmpty is bad input: results are never mixed.
type ErrDirNotEmpty struct{ Dir string }

func (e ErrDirNotEmpty) Error() string {
	return fmt.Sprintf("out: %s exists and is not empty; choose another --out", e.Dir)
}

// DefaultDir is where a scenario's results go without --out.
func DefaultDir(name string) string {
	return filepath.Join("results", name+"-"+time.Now().Format("20060102-150405"))
}

// createResultsDir makes dir with its cells/ folder and writes the
// manifest. A directory that is not empty is refused.
func createResultsDir(dir string, man *results.Manifest) (*resultsDir, error) {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return nil, ErrDirNotEmpty{dir}
	}
	if err := os.MkdirAll(filepath.Join(dir, "cells"), 0o755); err != nil {
		return nil, fmt.Errorf("out: %w", err)
	}
	d := &resultsDir{path: dir, man: man}
	return d, d.writeManifest()
}

// writeManifest rewrites manifest.json atomically.
func (d *resultsDir) writeManifest() error {
	return results.WriteFileAtomic(filepath.Join(d.path, "manifest.json"), func(w io.Writer) error { return results.WriteJSON(w, d.man) })
}

// finish stamps the end of the run (and whether it was interrupted).
func (d *resultsDir) finish(interrupted bool) error {
	if d == nil {
		return nil
	}
	d.man.FinishedAt = time.Now().UTC()
	d.man.Interrupted = interrupted
	return d.writeManifest()
}

// writeCell writes the cell's result combined over its repeats so far (and
// their interval logs, one after the other, so the report's percentile
// plots show every repeat's histograms added), then lists it in the
// manifest.
func (d *resultsDir) writeCell(c plan.Cell, r int, co *CellOutcome) error {
	if co.Combined.Repeats != nil {
		if err := d.concatRepeatLogs(c, len(co.Runs)); err != nil {
			return err
		}
	}
	info := results.CellInfo{Index: c.Index, ID: c.ID, Label: c.Label, Axes: c.Axes, File: "cells/" + c.ID + ".json"}
	co.Combined.Cell = &info
	if err := results.WriteFileAtomic(filepath.Join(d.path, info.File), func(w io.Writer) error { return results.WriteJSON(w, co.Combined) }); err != nil {
		return err
	}
	if r == 1 {
		d.man.Cells = append(d.man.Cells, info)
	}
	if c := co.Combined.Config; c != nil && c.ServerVersion != "" && !slices.Contains(d.man.ServerVersions, c.ServerVersion) {
		d.man.ServerVersions = append(d.man.ServerVersions, c.ServerVersion)
	}
	return d.writeManifest()
}

// concatRepeatLogs writes a cell's interval logs as the intervals of all
// its n repeats so far, in order.
func (d *resultsDir) concatRepeatLogs(c plan.Cell, n int) error {
	for _, m := range results.LogMetrics(c.Settings.Load == "open") {
		name := results.MetricName(m)
		var parts []string
		for r := 1; r <= n; r++ {
			parts = append(parts, results.RepeatLogPath(d.path, c.ID, r, name))
		}
		if err := results.ConcatIntervalLogs(filepath.Join(d.path, "cells", c.ID+"."+name+".hlog"), name, parts); err != nil {
			return err
		}
	}
	return nil
}

// newManifest describes a scenario's run: its settings, axes, report,
// thresholds and repeats, and every cell's faults and expectations.
func newManifest(sc *plan.Scenario, cells []plan.Cell, opt *Options) *results.Manifest {
	cfg := map[string]any{"settings": sc.Settings.Redacted(), "axes": sc.Axes(), "report": sc.Report,
		"thresholds": sc.Thresholds, "repeat": sc.Repeat}
	scenarioKind(sc).manifest(cfg, cells)
	return &results.Manifest{
		Name: sc.Name, Description: sc.Description, ConfigFile: opt.ConfigFile, Config: cfg,
		LockbenchVersion: Version, GoVersion: runtime.Version(), Machine: machine(sc.Settings.LocalCPUs), StartedAt: time.Now().UTC(),
		Segment: sc.Settings.Segment,
	}
}

// faultCellsConfig is every fault cell's settings, faults and expectations.
func faultCellsConfig(cells []plan.Cell) []any {
	out := make([]any, len(cells))
	for i, c := range cells {
		var fs, ex []string
		for _, f := range c.Faults {
			fs = append(fs, f.String())
		}
		for _, e := range c.Expect {
			ex = append(ex, e.String())
		}
		out[i] = map[string]any{"name": c.Name, "settings": c.Settings.Redacted(), "faults": fs, "expect": ex}
	}
	return out
}

// machine describes where the client ran, with the CPU split of
// --local-cpus (validated before).
func machine(localCPUs string) results.Machine {
	host, _ := os.Hostname()
	m := results.Machine{Hostname: host, OS: runtime.GOOS, Arch: runtime.GOARCH, Cores: runtime.NumCPU()}
	if localCPUs != "" {
		m.LocalCPUs, m.ClientCPUs, _ = affinity.SplitCPUs(localCPUs)
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
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}
