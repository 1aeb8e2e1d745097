package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"lockbench/lock"
	"lockbench/pool"
	"lockbench/results"
	"lockbench/service"
	"lockbench/workloads"
)

// serviceCell is a benchmark cell's lock on a registered service: its
// client on client 0's config, a baseline of the service's plain writes,
// the readings around the window and what the service adds to the result.
type serviceCell struct {
	env  cellEnv
	cl   service.Client
	base []time.Duration
	win  *pool.WindowReadings
	rpcs callWindow
}

func openServiceCell(ctx context.Context, env cellEnv, cl service.Client) (_ pool.Cell, err error) {
	m := env.servers
	v := &serviceCell{env: env, cl: cl, rpcs: callWindow{calls: cl.RPCs}}
	defer func() {
		if err != nil {
			v.Close()
		}
	}()
	if err := v.checkPrefixFree(ctx); err != nil {
		return nil, err
	}
	if v.base, err = v.baseline(ctx, env.prefix+"rtt"); err != nil {
		return nil, err
	}
	v.win = pool.NewWindowReadings(ctx, pool.ServiceWindow(m))
	return v, nil
}

// checkPrefixFree refuses keys of another live run under the cell's
// prefix, unless forced.
func (v *serviceCell) checkPrefixFree(ctx context.Context) error {
	name := v.env.cell.Settings.Topology
	n, err := v.cl.CountKeys(ctx, v.env.prefix)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if n > 0 && !v.env.cell.Settings.Force {
		return fmt.Errorf("key-prefix: %d keys under %q already exist in %s (another live run?); use another --key-prefix, or --force", n, v.env.prefix, name)
	}
	return nil
}

// baseline is the floor to compare acquires with: the service's plain
// writes (a quorum write, as a lock's is), measured in this run.
func (v *serviceCell) baseline(ctx context.Context, key string) ([]time.Duration, error) {
	defer func() { _ = v.cl.Delete(context.Background(), key) }()
	out, err := roundTrips(ctx, func(ctx context.Context) error { return v.cl.Put(ctx, key) })
	if errors.Is(err, service.ErrNoPlainWrite) {
		return nil, nil // a client without one: the cell has no baseline
	}
	if err != nil {
		return nil, fmt.Errorf("%s baseline: %w", v.env.cell.Settings.Topology, err)
	}
	return out, nil
}

func (v *serviceCell) Locker() lock.Locker { return v.cl }

func (v *serviceCell) Window(rc *workloads.RunConfig) {
	if srv := v.env.servers.Service; len(srv.Pids()) > 0 {
		rc.ServerCPU = func() []time.Duration { return pool.ProcessCPU(srv.Pids(), srv.Trees()) }
	}
	rc.OnWindow = v.rpcs.mark(v.win.Mark)
}

// Finish records the servers, what the service ran on and the baseline.
func (v *serviceCell) Finish(res *results.Run, st *workloads.Stats) {
	srv := v.env.servers.Service
	if res.Config.Service == nil { // a service that keeps no section of its own (rueidislock on a Redis topology)
		res.Config.Service = &results.ServiceSettings{}
	}
	v.cl.Record(res.Config.Service) // cellConfig made it, with the servers' part
	res.Config.Service.CallsPerCycle = v.rpcs.perCycle(st.Acquired)
	if len(srv.Pids()) > 0 {
		res.Servers = st.ServersOf(srv.Display())
	}
	if len(v.base) > 0 {
		pl := results.SummarizeDurations(v.base)
		res.BaselineParallel = &pl
	}
	v.win.Finish(res, st)
}

// Close ends every session: the service drops what they held with them.
func (v *serviceCell) Close() { v.cl.Close() }

// roundTrips times pool.BaselineSamples calls of one: a lock service's floor
// to compare acquires with, measured in this run. A slow service (an fsync
// per write, a delay on its links: 8 ms a Put) stops at baselineBudget once
// it has minBaselineSamples: 500 of them would cost the cell 4 s before its
// load starts, and a median needs far fewer.
func roundTrips(ctx context.Context, one func(context.Context) error) ([]time.Duration, error) {
	out := make([]time.Duration, 0, pool.BaselineSamples)
	start := time.Now()
	for len(out) < pool.BaselineSamples && (len(out) < minBaselineSamples || time.Since(start) < baselineBudget) {
		t := time.Now()
		if err := one(ctx); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t))
	}
	return out, nil
}

const (
	baselineBudget     = 500 * time.Millisecond
	minBaselineSamples = 50
)

// callWindow counts a locker's calls over the measured window.
type callWindow struct {
	calls func() int64
	at    [2]int64 // as the window opened and closed
}

// mark is the worker loop's OnWindow around next (the window readings').
func (w *callWindow) mark(next func(bool)) func(bool) {
	return func(opened bool) {
		w.at[b2i(!opened)] = w.calls()
		next(opened)
	}
}

// perCycle is the window's calls per lock cycle (0 without cycles, or
// when the client does not count its calls).
func (w *callWindow) perCycle(cycles int64) float64 {
	if cycles == 0 || w.at[0] == service.NotCounted {
		return 0
	}
	return float64(w.at[1]-w.at[0]) / float64(cycles)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
