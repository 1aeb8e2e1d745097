package pool

import (
	"context"
	"time"

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

// What a lock service's client may offer its benchmark cell beyond the
// service.Client contract. Each is optional: the runner measures every
// cell one way and asks a client for these where it has them, its plain
// writes and its servers' processes otherwise.
type (
	// Baseliner measures the cell's floor itself: per server and all at
	// once (default: the client's plain writes).
	Baseliner interface {
		Baselines(ctx context.Context, key string) (Baselines, error)
	}
	// Windowed says what the window readings read of its servers: their
	// command counters, the processes they run as, shards (default:
	// ServiceWindow).
	Windowed interface {
		CellWindow(ctx context.Context, m *CellServers) (Window, error)
	}
	// ServerCPUReader reads its servers' CPU as they count it, by the
	// window's servers (default: their processes').
	ServerCPUReader interface {
		ServerCPU(ctx context.Context) []time.Duration
	}
	// LiveServers are the servers the live metrics read, and how.
	LiveServers interface {
		LiveServers() ([]string, metrics.ReadFunc)
	}
	// WorkersLocker is the lock the workers use when it is not the
	// client itself (redsync on the engine's masters).
	WorkersLocker interface {
		WorkersLocker(ctx context.Context, c plan.Cell, m *CellServers) (lock.Locker, error)
	}
	// CellRecorder records the cell's result fields itself (its servers'
	// rows, its driver's terms), where a service section would not say
	// them; called before the window's readings are folded in.
	CellRecorder interface {
		RecordCell(res *results.Run, st *workloads.Stats)
	}
	// Cleaner removes what the cell left under its key prefix (only its
	// own locks), before the client closes.
	Cleaner interface {
		Cleanup(ctx context.Context, prefix string)
	}
)

// Baselines are a cell's floor: round trips to each server by address,
// and to all at once.
type Baselines struct {
	PerServer map[string][]time.Duration
	Parallel  []time.Duration
}

// Fill puts the baselines into the result.
func (b Baselines) Fill(res *results.Run) {
	if b.PerServer != nil {
		res.BaselineRTT = map[string]results.Latency{}
		for addr, d := range b.PerServer {
			res.BaselineRTT[addr] = results.SummarizeDurations(d)
		}
	}
	if len(b.Parallel) > 0 {
		pl := results.SummarizeDurations(b.Parallel)
		res.BaselineParallel = &pl
	}
}
