package pool

import (
	"context"

	"lockbench/lock"
	"lockbench/metrics"
	"lockbench/plan"
	"lockbench/results"
	"lockbench/workloads"
)

// BaselineSamples plain round trips before the load starts: a cell's
// floor to compare acquires with.
const BaselineSamples = 500

// Cell is a benchmark cell's lock as the runner drives it: the Locker its
// workers use, the readings around the measured window, what it adds to
// the result, and its clean-up.
type Cell interface {
	Locker() lock.Locker
	Window(rc *workloads.RunConfig)
	Finish(res *results.Run, st *workloads.Stats)
	Close()
}

// CellOpener is a client that measures its own benchmark cell (Redis':
// per-master baselines, its masters' INFO readings, redsync as the
// workers' lock); a client that is not one is measured by its plain
// writes (service.Client).
type CellOpener interface {
	OpenCell(ctx context.Context, env CellEnv) (Cell, error)
}

// CellEnv is what a client opening its own cell is given.
type CellEnv struct {
	Cell    plan.Cell
	Servers *CellServers
	Prefix  string // the cell's keys
	// Watch, when set, reads the masters' CPU and counters live (live
	// metrics), through read.
	Watch func(addrs []string, read metrics.ReadFunc)
}
