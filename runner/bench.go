package runner

import (
	"context"
	"fmt"
	"time"

	"lockbench/bench"
	"lockbench/drivers/redsyncdriver"
	"lockbench/engine"
	"lockbench/lock"
	"lockbench/plan"
	"lockbench/results"
	"lockbench/service"
	"lockbench/workloads"
)

// BaselineSamples SET round trips per master before the load starts.
const BaselineSamples = 500

// lockService is a cell's lock service as the cell runs it: the Locker
// its workers drive, the readings around the measured window, and what it
// adds to the result: Redis' (the engine or redsync on masters), or a
// registered service's.
type lockService interface {
	locker() lock.Locker
	window(rc *workloads.RunConfig)
	finish(res *results.Run, st *workloads.Stats)
	close()
}

// openService opens the cell's lock service on its servers: its client
// on client 0's config; one that is the engine on Redis masters is
// measured as Redis' cells are (per-master baselines, command counters).
func openService(ctx context.Context, env cellEnv) (lockService, error) {
	raw, err := env.masters.ServiceConfig(env.cell, 0)
	if err != nil {
		return nil, err
	}
	cl, err := service.Of(env.cell.Settings).NewClient(ctx, raw)
	if err != nil {
		return nil, err
	}
	if e, ok := cl.(masterEngine); ok {
		return openRedis(ctx, env, e.MasterEngine())
	}
	return openServiceCell(ctx, env, cl)
}

// masterEngine is a client that is the engine on Redis masters.
type masterEngine interface{ MasterEngine() *engine.Engine }

// redisService is the Redis lock of a cell: the engine (its baselines,
// counters and clean-up) and the lock client the workers use, the engine
// or redsync on the same masters.
type redisService struct {
	env  cellEnv
	eng  *engine.Engine
	lk   cellLocker
	base baselines
	win  *bench.WindowReadings
}

func openRedis(ctx context.Context, env cellEnv, eng *engine.Engine) (_ lockService, err error) {
	s, m := env.cell.Settings, env.masters
	cfg := m.LockConfig(env.cell.Engine, 0)
	r := &redisService{env: env, eng: eng}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	if err := checkPrefixFree(ctx, r.eng, env.prefix, s.Force); err != nil {
		return nil, err
	}
	if r.base, err = measureBaselines(ctx, r.eng, env.prefix+"rtt"); err != nil {
		return nil, err
	}
	r.win = bench.NewWindowReadings(ctx, r.eng, m)
	if mx := env.opt.Metrics; mx != nil { // the masters' CPU and counters, live
		mx.WatchMasters(r.eng.Addrs(), r.eng.InfoAt)
	}
	r.lk, err = newLocker(ctx, s, cfg, r.eng)
	return r, err
}

func (r *redisService) locker() lock.Locker { return r.lk.Locker }

func (r *redisService) window(rc *workloads.RunConfig) {
	rc.ServerCPU = func() []time.Duration { return r.eng.ServerCPU(context.Background()) }
	rc.OnWindow = r.win.Mark
}

func (r *redisService) finish(res *results.Run, st *workloads.Stats) {
	res.Config.Redsync = r.lk.redsync
	r.base.fill(res, r.eng.Addrs())
	r.win.Finish(res, st)
	if r.env.masters.Redis().Embedded {
		res.Warnings = append(res.Warnings, "embedded in-process masters (redis-server not found): these are not Redis figures")
	}
}

// close releases what the cell took: only this cell's own locks go,
// whatever happens (never FLUSHALL): keys under its prefix whose value is
// one of its tokens.
func (r *redisService) close() {
	if r.lk.close != nil {
		r.lk.close()
	}
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = r.eng.Cleanup(cctx, r.env.prefix, append([]string{r.eng.TokenPrefix()}, r.lk.tokenPrefixes...)...)
	r.eng.Close()
}

// baselines are the floor to compare acquires with: plain SET round trips,
// one master at a time and all at once, measured in this run on these
// masters.
type baselines struct {
	perMaster [][]time.Duration
	parallel  []time.Duration
}

func measureBaselines(ctx context.Context, eng *engine.Engine, key string) (b baselines, err error) {
	if b.perMaster, err = eng.BaselineRTT(ctx, key, BaselineSamples); err != nil {
		return b, err
	}
	b.parallel, err = eng.BaselineParallel(ctx, key, BaselineSamples)
	return b, err
}

// fill puts the baselines into the result, by master address.
func (b baselines) fill(res *results.Run, addrs []string) {
	res.BaselineRTT = map[string]results.Latency{}
	for i, addr := range addrs {
		res.BaselineRTT[addr] = summarizeDurations(b.perMaster[i])
	}
	pl := summarizeDurations(b.parallel)
	res.BaselineParallel = &pl
}

// cellLocker is the lock client the workers use: the engine, or redsync
// on the same masters (with the terms it ran on, for the result).
type cellLocker struct {
	lock.Locker
	redsync       *redsyncdriver.Settings
	tokenPrefixes []string // besides the engine's
	close         func()
}

func newLocker(ctx context.Context, s plan.Settings, cfg engine.Config, eng *engine.Engine) (cellLocker, error) {
	if s.Driver != "redsync" {
		return cellLocker{Locker: eng, close: func() {}}, nil
	}
	rs, err := redsyncdriver.New(ctx, cfg, s.Workers)
	if err != nil {
		return cellLocker{}, err
	}
	st := rs.Settings()
	return cellLocker{Locker: rs, redsync: &st, tokenPrefixes: []string{rs.TokenPrefix()}, close: func() { rs.Close() }}, nil
}

// checkPrefixFree refuses keys of another live run under the same prefix,
// unless forced.
func checkPrefixFree(ctx context.Context, eng *engine.Engine, prefix string, force bool) error {
	for i, addr := range eng.Addrs() {
		n, err := eng.CountKeys(ctx, i, prefix)
		if err != nil {
			return fmt.Errorf("master %s: %w", addr, err)
		}
		if n > 0 && !force {
			return fmt.Errorf("key-prefix: %d keys under %q already exist on master %s (another live run?); use another --key-prefix, or --force", n, prefix, addr)
		}
	}
	return nil
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

// summarizeDurations is the latency summary of a baseline's samples.
func summarizeDurations(ds []time.Duration) results.Latency {
	h := results.NewHistogram()
	for _, d := range ds {
		results.RecordDuration(h, d)
	}
	return results.Summarize(h)
}
