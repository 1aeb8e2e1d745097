package runner

import (
	"context"
	"fmt"
	"time"

	"lockbench/bench"
	"lockbench/lock"
	"lockbench/pglock"
	"lockbench/results"
	"lockbench/workloads"
)

// postgresService is a postgres cell's lock: session advisory locks
// through pgx, one connection per worker, with a baseline of SELECT 1.
type postgresService struct {
	env  cellEnv
	lk   *pglock.Locker
	base []time.Duration
	win  *bench.WindowReadings
	rpcs callWindow
}

func openPostgres(ctx context.Context, env cellEnv) (_ lockService, err error) {
	m := env.masters
	lk, err := pglock.New(ctx, m.PostgresConfig(env.cell, 0))
	if err != nil {
		return nil, err
	}
	p := &postgresService{env: env, lk: lk, rpcs: callWindow{calls: lk.RPCs}}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	if p.base, err = p.pingBaseline(ctx); err != nil {
		return nil, err
	}
	p.win = bench.NewPostgresWindowReadings(ctx, m)
	return p, nil
}

// pingBaseline is the floor to compare acquires with: SELECT 1 round
// trips, measured in this run.
func (p *postgresService) pingBaseline(ctx context.Context) ([]time.Duration, error) {
	out, err := roundTrips(ctx, p.lk.Ping)
	if err != nil {
		return nil, fmt.Errorf("postgres baseline: %w", err)
	}
	return out, nil
}

func (p *postgresService) locker() lock.Locker { return p.lk }

func (p *postgresService) window(rc *workloads.RunConfig) {
	if srv := p.env.masters.Postgres.Local; srv != nil {
		rc.ServerCPU = func() []time.Duration { return bench.ProcessCPU([]int{srv.Pid()}, true) }
	}
	rc.OnWindow = p.rpcs.mark(p.win.Mark)
}

// finish records the server, that advisory locks have no lease and no
// token, and the baseline.
func (p *postgresService) finish(res *results.Run, st *workloads.Stats) {
	m := p.env.masters
	res.Config.Postgres = &results.PostgresSettings{Lease: "none: held until released or the connection ends",
		FenceSource: "none: an advisory lock has no token", LostConnections: p.lk.LostConnections(),
		CallsPerCycle: p.rpcs.perCycle(st.Acquired)}
	if m.Postgres.Local != nil {
		res.Servers = st.ServersOf(m.Display)
	}
	pl := summarizeDurations(p.base)
	res.BaselineParallel = &pl
	p.win.Finish(res, st)
}

// close ends every session: the advisory locks go with them.
func (p *postgresService) close() { p.lk.Close() }
