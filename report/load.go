package report

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"lockbench/results"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// settings are the configuration values the report groups and labels by,
// taken from a cell's typed config.
type settings struct {
	N            int
	Persistence  string
	Driver       string
	Mode         string
	Wait         string
	Load         string // closed or open
	Workers      int
	Rate         float64
	Keys         float64
	Distribution string
	TTL          string
	Hold         string
	WaitStrategy string
	// Topology ("" in older results: redlock) and a replicated set's
	// sizes and WAIT.
	Topology                          string
	Replicas, Sentinels, WaitReplicas int
}

func settingsOf(cfg *results.CellConfig) settings {
	if cfg == nil {
		return settings{Load: "closed"}
	}
	s := settings{
		N: cfg.N(), Persistence: cfg.Persistence, Driver: cfg.Driver, Mode: cfg.Mode, Wait: cfg.Wait,
		Load: cfg.Load, Workers: cfg.Workers, Rate: cfg.Rate, Keys: float64(cfg.Keys),
		Distribution: cfg.Distribution, TTL: cfg.TTL.String(), Hold: cfg.Hold.String(), WaitStrategy: cfg.WaitStrategy,
		Topology: cfg.Topology, Replicas: cfg.Replicas, Sentinels: cfg.Sentinels, WaitReplicas: cfg.WaitReplicas,
	}
	if s.Load == "" {
		s.Load = "closed" // what `run` does without a load setting
	}
	return s
}

// loadValue is the x of a load sweep: offered rate in open loop, workers
// in closed loop.
func (s settings) loadValue() float64 {
	if s.Load == "open" {
		return s.Rate
	}
	return float64(s.Workers)
}

// cell is one loaded cell with its histograms.
type cell struct {
	Info results.CellInfo
	Run  results.Run
	Set  settings
	Axes map[string]string
	// ConfigKeys are the keys its file's config has (compare matches on
	// the settings both sides record).
	ConfigKeys map[string]bool
	// Intervals per metric, as logged; Totals are their sums.
	Intervals map[string][]*hdrhistogram.Histogram
	Totals    map[string]*hdrhistogram.Histogram
	// renamed: merged beside another run's cell of the same id, under its
	// run's name (its files are still read from Info.File).
	renamed bool
}

// loadedDir is one loaded results directory.
type loadedDir struct {
	Dir      string
	Manifest results.Manifest
	Cells    []*cell
	Warnings []string
}

var metrics = []string{results.MetricAcquire, results.MetricAcquireUncorrected, results.MetricFailed, results.MetricRelease}

// loadDir reads a results directory. withLogs also reads the interval logs.
func loadDir(dir string, withLogs bool) (*loadedDir, error) {
	res := &loadedDir{Dir: dir}
	if err := readManifest(dir, &res.Manifest); err != nil {
		return nil, err
	}
	for _, info := range cellInfos(dir, res.Manifest) {
		c, warning, err := loadCell(dir, info)
		if err != nil {
			return nil, err
		}
		if c == nil {
			res.Warnings = append(res.Warnings, warning)
			continue
		}
		if withLogs {
			if err := res.readLogs(c); err != nil {
				return nil, err
			}
		}
		res.Cells = append(res.Cells, c)
	}
	sort.SliceStable(res.Cells, func(i, j int) bool { return res.Cells[i].Info.Index < res.Cells[j].Info.Index })
	assignAxes(res.Cells)
	for _, c := range res.Cells {
		if c.Info.Label == "" {
			c.Info.Label = axesLabel(c, nil)
		}
		if c.Info.Label == "" {
			c.Info.Label = c.Info.ID
		}
	}
	return res, nil
}

// readManifest reads dir's manifest.json into m.
func readManifest(dir string, m *results.Manifest) error {
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return &results.InputError{Field: "DIR", Value: dir, Problem: "no manifest.json here", Accepted: "a results directory written by lockbench sweep (manifest.json, cells/)"}
		}
		return err
	}
	if err := json.Unmarshal(b, m); err != nil {
		return &results.InputError{Field: "manifest", Value: filepath.Join(dir, "manifest.json"), Problem: err.Error(), Accepted: "a lockbench manifest (JSON)"}
	}
	results.UpgradeLegacyManifest(m, b)
	return nil
}

// cellInfos are the cells the manifest lists, or the cell files in dir
// when it lists none (a manifest written before its cells were listed).
func cellInfos(dir string, m results.Manifest) []results.CellInfo {
	infos := m.Cells
	if len(infos) == 0 {
		files, _ := filepath.Glob(filepath.Join(dir, "cells", "*.json"))
		sort.Strings(files)
		for i, f := range files {
			stem := strings.TrimSuffix(filepath.Base(f), ".json")
			infos = append(infos, results.CellInfo{Index: i, ID: stem, File: "cells/" + filepath.Base(f)})
		}
	}
	return infos
}

// loadCell reads one cell's result; a cell with no result file (an
// interrupted sweep lists a cell it never finished) is nil with a warning.
func loadCell(dir string, info results.CellInfo) (c *cell, warning string, err error) {
	if info.File == "" {
		info.File = "cells/" + info.ID + ".json"
	}
	path := filepath.Join(dir, filepath.FromSlash(info.File))
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Sprintf("%s: cell %s has no result file %s; left out", dir, info.ID, info.File), nil
	}
	if err != nil {
		return nil, "", err
	}
	c = &cell{Info: info, Intervals: map[string][]*hdrhistogram.Histogram{}, Totals: map[string]*hdrhistogram.Histogram{}}
	if err := json.Unmarshal(b, &c.Run); err != nil {
		return nil, "", &results.InputError{Field: "cell", Value: path, Problem: err.Error(), Accepted: "a lockbench run result (JSON)"}
	}
	results.UpgradeLegacy(&c.Run, b)
	if c.Run.Cell != nil {
		// The cell file knows its own label and axes best.
		if c.Info.Label == "" {
			c.Info.Label = c.Run.Cell.Label
		}
		if len(c.Info.Axes) == 0 {
			c.Info.Axes = c.Run.Cell.Axes
		}
	}
	c.Set = settingsOf(c.Run.Config)
	c.ConfigKeys = configKeys(b)
	return c, "", nil
}

// readLogs reads cell c's interval logs and their totals.
func (res *loadedDir) readLogs(c *cell) error {
	for _, m := range metrics {
		hs, ok, err := results.ReadLogFile(results.LogPath(res.Dir, c.Info, m))
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		c.Intervals[m] = hs
		t, dropped := results.Total(hs)
		if dropped > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %s: %d %s values beyond the histogram range", res.Dir, c.Info.ID, dropped, m))
		}
		c.Totals[m] = t
	}
	return nil
}

// assignAxes uses the cells' own axes; without any (a directory of plain
// runs), the known settings that differ between cells stand in for them.
func assignAxes(cells []*cell) {
	for _, c := range cells {
		if len(c.Info.Axes) > 0 {
			for _, c := range cells {
				c.Axes = c.Info.Axes
				if c.Axes == nil {
					c.Axes = map[string]string{}
				}
			}
			return
		}
	}
	get := map[string]func(settings) string{
		"N":             func(s settings) string { return strconv.Itoa(s.N) },
		"persistence":   func(s settings) string { return s.Persistence },
		"driver":        func(s settings) string { return s.Driver },
		"mode":          func(s settings) string { return s.Mode },
		"wait":          func(s settings) string { return s.Wait },
		"load":          func(s settings) string { return s.Load },
		"workers":       func(s settings) string { return strconv.Itoa(s.Workers) },
		"rate":          func(s settings) string { return strconv.FormatFloat(s.Rate, 'f', -1, 64) },
		"keys":          func(s settings) string { return strconv.FormatFloat(s.Keys, 'f', -1, 64) },
		"distribution":  func(s settings) string { return s.Distribution },
		"ttl":           func(s settings) string { return s.TTL },
		"hold":          func(s settings) string { return s.Hold },
		"topology":      func(s settings) string { return topologyOf(s) },
		"wait_replicas": func(s settings) string { return strconv.Itoa(s.WaitReplicas) },
	}
	for _, c := range cells {
		c.Axes = map[string]string{}
	}
	for name, f := range get {
		vals := map[string]bool{}
		for _, c := range cells {
			vals[f(c.Set)] = true
		}
		if len(vals) > 1 {
			for _, c := range cells {
				c.Axes[name] = f(c.Set)
			}
		}
	}
}

// axisOrder puts the settings people read first first.
var axisOrder = []string{"topology", "N", "local", "masters", "replicas", "wait_replicas", "persistence", "driver", "mode", "wait", "load", "keys", "distribution", "ttl", "hold", "workers", "rate"}

func sortedAxes(names []string) []string {
	rank := map[string]int{}
	for i, n := range axisOrder {
		rank[n] = i + 1
	}
	sort.Slice(names, func(i, j int) bool {
		ri, rj := rank[names[i]], rank[names[j]]
		if ri == 0 {
			ri = len(axisOrder) + 1
		}
		if rj == 0 {
			rj = len(axisOrder) + 1
		}
		if ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	return names
}

// axesLabel names a cell by its axes, leaving out those in skip. The
// master set is shown as its size N, not as addresses.
func axesLabel(c *cell, skip map[string]bool) string {
	names := make([]string, 0, len(c.Axes))
	for k := range c.Axes {
		if !skip[k] {
			names = append(names, k)
		}
	}
	var parts []string
	for _, k := range sortedAxes(names) {
		v := c.Axes[k]
		if k == "local" || k == "masters" {
			k, v = "N", strconv.Itoa(c.Set.N)
		}
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, " ")
}

// allAxes is the sorted union of the cells' axis names.
func allAxes(cells []*cell) []string {
	set := map[string]bool{}
	for _, c := range cells {
		for k := range c.Axes {
			set[k] = true
		}
	}
	names := make([]string, 0, len(set))
	for k := range set {
		names = append(names, k)
	}
	return sortedAxes(names)
}

// distinct counts the values an axis takes.
func distinct(cells []*cell, axis string) int {
	vals := map[string]bool{}
	for _, c := range cells {
		if v, ok := c.Axes[axis]; ok {
			vals[v] = true
		}
	}
	return len(vals)
}

// group is cells that share every axis outside a skipped set.
type group struct {
	Key   string
	Label string
	Cells []*cell
}

// groupBy groups cells by their axes outside skip, in order of first cell.
func groupBy(cells []*cell, skip map[string]bool) []*group {
	var out []*group
	idx := map[string]*group{}
	for _, c := range cells {
		label := axesLabel(c, skip)
		g := idx[label]
		if g == nil {
			g = &group{Key: label, Label: label}
			if g.Label == "" {
				g.Label = "all cells"
			}
			idx[label] = g
			out = append(out, g)
		}
		g.Cells = append(g.Cells, c)
	}
	return out
}

// sortedKeys are m's keys in order.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
