// Package runner runs scenarios: the one cell path (runCell: a cell's
// clients on the lock servers from the server pool (package pool), each running the worker
// loop of workloads, with the parts a cell plugs in: its lock service's
// readings, or a fault cell's schedule and checkers), and the scenario
// loop around it (cells × repeats, interleaved, Ctrl-C, the results
// directory). It draws nothing: report reads what it writes.
package runner

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"time"

	"lockbench/chaos"
	"lockbench/metrics"
	"lockbench/plan"
	"lockbench/pool"
	"lockbench/results"
)

// Options say how a scenario runs around its cells.
type Options struct {
	Scenario string // its name, in results and live-metric labels
	// Command, when set, names the command in the line that says what
	// runs (sweep, chaos).
	Command string
	Log     io.Writer // progress and start-up lines (nil: none)
	// Dir is the results directory to write (run: "", nothing written);
	// ConfigFile is the scenario file it came from, for the manifest.
	Dir, ConfigFile string
	Metrics         *metrics.Exporter // live metrics (nil: off)
	// Progress, when set, shows the cells as they run (sweep's bar).
	Progress Progress
	// ClientCommand starts a fault cell's client process: an argv that
	// runs chaos.ClientMain with --config/--result appended (nil: this
	// executable's `chaos __client`).
	ClientCommand []string
	ClientEnv     []string
	// Settle, when set, decides each cell's further repeats from its runs
	// so far (choose: a fault cell whose verdict is settled needs no more).
	Settle Settler
	// Budget bounds the run's time (0: none): no cell starts whose
	// estimate would end past it, and the time left after the scenario's
	// repeats goes to more repeats of the cells Settle says are unsettled.
	Budget time.Duration
	// observe, when set (tests), gives a fault cell the observer of its
	// clients' events in place of the live metrics, which cannot show a
	// write's negative lost-update count (a counter only grows).
	observe func(plan.Cell) chaos.Observer
}

// Version is lockbench's version, stamped into results (set by main).
var Version = "dev"

// CellResult is one measurement of a cell (one repeat).
type CellResult struct {
	Run results.Run
	// Failed lists the expectations the cell did not meet.
	Failed []string
	// NotJudged lists why the cell showed nothing, whatever its figures
	// say (a fault that did not happen, too few acquisitions, ...).
	NotJudged []string
	// NotExercised says why no fault of the cell met a holder ("": one
	// did, or the cell has no such fault): then it judged nothing about
	// exclusion, never safe.
	NotExercised string
	// Disagree says how the resource's counters and the history's judge
	// disagree ("" : they agree).
	Disagree string
	// Verdict is met, not met, not judged, not exercised, unchecked (no expectations),
	// checkers disagree or interrupted; "" for a benchmark cell (its
	// thresholds judge it).
	Verdict string
	// Pids and Addrs are every process and listener a fault cell started,
	// for callers that verify the cleanup.
	Pids  []int
	Addrs []string
}

// cellEnv is what one measurement of a cell runs with: the cell, its
// servers, its keys and seed, its interval logs and the scenario's options.
type cellEnv struct {
	cell    plan.Cell
	servers *pool.CellServers
	prefix  string // the cell's keys
	seed    uint64
	logs    *cellLogs
	// dir and stem say where this measurement's files go (dir "" : none).
	dir, stem string
	opt       *Options
	// onInterval hears each second's figures (progress); nil: none.
	onInterval func(results.Interval)
}

// cellConfig is the result's config: the settings the cell ran on as plan
// resolved them, with what only the run knows (masters, seed, keys).
func (e cellEnv) cellConfig() *results.CellConfig {
	shown := e.cell.Recorded
	m := e.servers
	shown.Masters = m.Display
	shown.Seed, shown.KeyPrefix = e.seed, e.prefix
	cc := &results.CellConfig{Settings: shown, Version: Version}
	m.Service.Record(cc, e.cell.Recorded)
	if len(e.cell.Expect) > 0 {
		cc.Expect = map[string]string{}
		for _, x := range e.cell.Expect {
			cc.Expect[x.Metric] = x.Cond()
		}
	}
	return cc
}

// metricsCell is the cell's live metrics (nil: off): labelled with bounded
// values from its settings (persistence "server" on external masters left
// as they are).
func (e cellEnv) metricsCell() *metrics.Cell {
	if e.opt.Metrics == nil {
		return nil
	}
	s := e.cell.Settings
	p := e.cell.Recorded.Persistence
	if p == "" {
		p = "server"
	}
	l := metrics.Labels{Scenario: e.opt.Scenario, Cell: kindOf(e.cell).metricsCell(e.cell), Segment: s.Segment, Mode: s.Mode, Wait: s.Wait, Persistence: p, Driver: s.Driver}
	return e.opt.Metrics.Cell(l, e.servers.Display)
}

// newRunID is a short random id for key prefixes.
func newRunID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// keyPrefix is where a cell's keys live.
func keyPrefix(s plan.Settings, runID string, cellIndex int) string {
	if s.KeyPrefix != "" {
		return s.KeyPrefix
	}
	return fmt.Sprintf("lockbench:%s:%d:", runID, cellIndex)
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}
