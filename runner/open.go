package runner

import (
	"context"
	"time"

	"lockbench/plan"
	"lockbench/pool"
	"lockbench/service"
)

// openService opens the cell's lock service on its servers: its client on
// client 0's config, measured as every cell is (openServiceCell).
func openService(ctx context.Context, env cellEnv) (pool.Cell, error) {
	raw, err := env.servers.ServiceConfig(env.cell, 0)
	if err != nil {
		return nil, err
	}
	cl, err := service.Of(env.cell.Settings).NewClient(ctx, raw)
	if err != nil {
		return nil, err
	}
	return openServiceCell(ctx, env, cl)
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
