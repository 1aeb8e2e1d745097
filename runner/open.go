package runner

import (
	"context"
	"time"

	"lockbench/metrics"
	"lockbench/plan"
	"lockbench/pool"
	"lockbench/service"
)

// openService opens the cell's lock service on its servers: its client on
// client 0's config, which measures its own cell when it can (Redis'
// engine: per-master baselines, its masters' readings), or is measured by
// its plain writes.
func openService(ctx context.Context, env cellEnv) (pool.Cell, error) {
	raw, err := env.servers.ServiceConfig(env.cell, 0)
	if err != nil {
		return nil, err
	}
	cl, err := service.Of(env.cell.Settings).NewClient(ctx, raw)
	if err != nil {
		return nil, err
	}
	if o, ok := cl.(pool.CellOpener); ok {
		return o.OpenCell(ctx, pool.CellEnv{Cell: env.cell, Servers: env.servers, Prefix: env.prefix, Watch: env.watchMasters()})
	}
	return openServiceCell(ctx, env, cl)
}

// watchMasters reads a cell's masters live for the metrics exporter (nil:
// no exporter).
func (e cellEnv) watchMasters() func([]string, metrics.ReadFunc) {
	mx := e.opt.Metrics
	if mx == nil {
		return nil
	}
	return func(addrs []string, read metrics.ReadFunc) { mx.WatchMasters(addrs, read) }
}

// waitSegmentStart waits for the start time segments on several machines
// share (none: no wait).
func waitSegmentStart(ctx context.Context, s plan.Settings) {
	if at, _ := s.StartTime(); time.Until(at) > 0 {
		t := time.NewTimer(time.Until(at))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
}
