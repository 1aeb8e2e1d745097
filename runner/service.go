package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"lockbench/lock"
	"lockbench/pool"
	"lockbench/results"
	"lockbench/service"
	"lockbench/workloads"
)

// serviceCell is a benchmark cell's lock on a registered service, measured
// one way whatever the service: its client on client 0's config, the
// cell's floor (the client's own baselines, or its plain writes), the
// readings around the window (what the client says its servers give, or
// their processes) and what the client adds to the result. What a client
// may offer beyond service.Client is pool's optional capabilities.
type serviceCell struct {
	env  cellEnv
	cl   service.Client
	lk   lock.Locker // the workers' lock: the client, or one it names
	base pool.Baselines
	win  *pool.WindowReadings
	rpcs callWindow
}

func openServiceCell(ctx context.Context, env cellEnv, cl service.Client) (_ pool.Cell, err error) {
	v := &serviceCell{env: env, cl: cl, lk: cl, rpcs: callWindow{calls: cl.RPCs}}
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
	if v.win, err = v.window(ctx); err != nil {
		return nil, err
	}
	v.watch()
	if w, ok := cl.(pool.WorkersLocker); ok {
		v.lk, err = w.WorkersLocker(ctx, env.cell, env.servers)
	}
	return v, err
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
		return fmt.Errorf("key-prefix: %d keys under %q already exist on %s's servers %s (another live run?); use another --key-prefix, or --force",
			n, v.env.prefix, name, strings.Join(v.env.servers.Display, ", "))
	}
	return nil
}

// baseline is the floor to compare acquires with, measured in this run:
// the client's own (per server), or its plain writes (a quorum write, as
// a lock's is).
func (v *serviceCell) baseline(ctx context.Context, key string) (pool.Baselines, error) {
	if b, ok := v.cl.(pool.Baseliner); ok {
		return b.Baselines(ctx, key)
	}
	defer func() { _ = v.cl.Delete(context.Background(), key) }()
	out, err := roundTrips(ctx, func(ctx context.Context) error { return v.cl.Put(ctx, key) })
	if errors.Is(err, service.ErrNoPlainWrite) {
		return pool.Baselines{}, nil // a client without one: the cell has no baseline
	}
	if err != nil {
		return pool.Baselines{}, fmt.Errorf("%s baseline: %w", v.env.cell.Settings.Topology, err)
	}
	return pool.Baselines{Parallel: out}, nil
}

// window opens the readings around the measured window on what the
// client says its servers give, or on their processes.
func (v *serviceCell) window(ctx context.Context) (*pool.WindowReadings, error) {
	w := pool.ServiceWindow(v.env.servers)
	if c, ok := v.cl.(pool.Windowed); ok {
		var err error
		if w, err = c.CellWindow(ctx, v.env.servers); err != nil {
			return nil, err
		}
	}
	return pool.NewWindowReadings(ctx, w), nil
}

// watch has the live metrics read the client's servers, when it names
// them and an exporter runs.
func (v *serviceCell) watch() {
	l, ok := v.cl.(pool.LiveServers)
	if mx := v.env.opt.Metrics; ok && mx != nil {
		mx.WatchMasters(l.LiveServers())
	}
}

func (v *serviceCell) Locker() lock.Locker { return v.lk }

func (v *serviceCell) Window(rc *workloads.RunConfig) {
	if c, ok := v.cl.(pool.ServerCPUReader); ok {
		rc.ServerCPU = func() []time.Duration { return c.ServerCPU(context.Background()) }
	} else if srv := v.env.servers.Service; len(srv.Pids()) > 0 {
		rc.ServerCPU = func() []time.Duration { return pool.ProcessCPU(srv.Pids(), srv.Trees()) }
	}
	rc.OnWindow = v.rpcs.mark(v.win.Mark)
}

// Finish records what the client ran on (its own record, or the service
// section with the servers' rows), the baseline and the window's readings.
func (v *serviceCell) Finish(res *results.Run, st *workloads.Stats) {
	if r, ok := v.cl.(pool.CellRecorder); ok {
		r.RecordCell(res, st)
	} else {
		v.record(res, st)
	}
	v.base.Fill(res)
	v.win.Finish(res, st)
}

// record is a service's section of the result: what the client says, its
// calls a cycle, its servers' rows.
func (v *serviceCell) record(res *results.Run, st *workloads.Stats) {
	srv := v.env.servers.Service
	if res.Config.Service == nil { // a service that keeps no section of its own (rueidislock on a Redis topology)
		res.Config.Service = &results.ServiceSettings{}
	}
	v.cl.Record(res.Config.Service) // cellConfig made it, with the servers' part
	res.Config.Service.CallsPerCycle = v.rpcs.perCycle(st.Acquired)
	if len(srv.Pids()) > 0 {
		res.Servers = st.ServersOf(srv.Display())
	}
}

// Close removes what the cell left of its own, when the client can, and
// ends the client (a session's service drops what it held with it).
func (v *serviceCell) Close() {
	if c, ok := v.cl.(pool.Cleaner); ok {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		c.Cleanup(cctx, v.env.prefix)
		cancel()
	}
	v.cl.Close()
}

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
