package redislock

import (
	"context"
	"fmt"
	"time"

	"lockbench/adapter"
	"lockbench/lock"
	"lockbench/metrics"
	"lockbench/plan"
	"lockbench/pool"
	"lockbench/redislock/engine"
	"lockbench/redislock/redsyncdriver"
	"lockbench/redislock/rueidislockdriver"
	"lockbench/results"
	"lockbench/workloads"
)

// OpenCell: the engine on the cell's masters, its baselines and readings
// (the workers' lock is the engine, or redsync on the same masters).
func (c RedisClient) OpenCell(ctx context.Context, env pool.CellEnv) (_ pool.Cell, err error) {
	return openCell(ctx, env, c.Engine, nil)
}

// openCell is the cell on eng's masters; lk, when not nil, is the
// workers' lock already open (an external client's adapter).
func openCell(ctx context.Context, env pool.CellEnv, eng *engine.Engine, lk *cellLocker) (_ pool.Cell, err error) {
	s, m := env.Cell.Settings, env.Servers
	r := &redisCell{env: env, eng: eng}
	if lk != nil {
		r.lk = *lk
	}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	if err := checkPrefixFree(ctx, r.eng, env.Prefix, s.Force); err != nil {
		return nil, err
	}
	if r.base, err = measureBaselines(ctx, r.eng, env.Prefix+"rtt"); err != nil {
		return nil, err
	}
	rs := m.Service.(*RedisServers)
	if r.shards, err = r.eng.Shards(ctx); err != nil {
		return nil, err
	}
	w := rs.window(ctx, r.eng, m.Net != nil)
	if r.shards != nil {
		r.shardWindow(ctx, &w)
	}
	if r.lk.adapter != nil {
		w.AdapterPid = r.lk.adapter.Pid()
	}
	r.win = pool.NewWindowReadings(ctx, w)
	if env.Watch != nil {
		env.Watch(r.eng.Addrs(), InfoReading(r.eng.InfoAt))
	}
	var via []string // client 0's proxies, if any
	if m.Net != nil {
		via = m.Net.Addrs(0)
	}
	if lk == nil {
		r.lk, err = newLocker(ctx, s, rs.LockConfig(engineConfig(env.Cell), via), r.eng)
	}
	return r, err
}

// window is what the masters give a cell's window readings, read through
// eng: their command counters, and the processes the machine's CPU split
// reads.
func (rs *RedisServers) window(ctx context.Context, eng *engine.Engine, proxied bool) pool.Window {
	w := pool.Window{Addrs: eng.Addrs(), ProbeAddrs: rs.Upstreams(), SelfPids: eng.ServerPIDs(ctx), ProcessName: "redis-server", ClientCPUs: rs.ClientCPUs, LocalCPUs: rs.LocalCPUs,
		Counters: commandCounts(eng), Proxied: proxied}
	if rs.Local != nil {
		w.LocalPids = pidsOf(rs.Local.Masters())
	}
	if c := rs.Cluster; c != nil {
		w.Replicas = pidsOf(c.Replicas()) // the masters are read through INFO, added up (one link)
	}
	if r := rs.Replicated; r != nil {
		w.LocalPids = []int{r.Master().Pid()}
		w.Replicas, w.Monitors = pidsOf(r.Replicas()), pidsOf(r.Sentinels())
	}
	if len(w.ProbeAddrs) != len(eng.Addrs()) {
		w.ProbeAddrs = eng.Addrs() // an external replicated set: only the engine knows where its master is
	}
	return w
}

// shardWindow reads a cluster's shards one by one, by their masters'
// addresses as the window opens: each one's commands, CPU and process,
// where the cluster's one link would add them up.
func (r *redisCell) shardWindow(ctx context.Context, w *pool.Window) {
	addrs := r.shardAddrs()
	w.Addrs, w.ProbeAddrs, w.SelfPids = addrs, addrs, r.eng.ServerPIDsOf(ctx, addrs)
	w.Counters = func(ctx context.Context) []map[string]results.CommandCount {
		return commandCountsOf(r.eng.CommandStatsOf(ctx, addrs))
	}
}

// shardAddrs are the cluster's shards' masters, in slot order.
func (r *redisCell) shardAddrs() []string {
	out := make([]string, len(r.shards))
	for i, s := range r.shards {
		out[i] = s.Master
	}
	return out
}

// InfoReading reads a master's INFO (by info) as live metrics read a
// server.
func InfoReading(info func(ctx context.Context, addr string) (string, error)) metrics.ReadFunc {
	return func(ctx context.Context, addr string) (metrics.ServerReading, error) {
		text, err := info(ctx, addr)
		if err != nil {
			return metrics.ServerReading{}, err
		}
		return readingOf(text), nil
	}
}

// readingOf is INFO's text as a server's reading: CPU (used_cpu_sys +
// used_cpu_user), connected_clients, total_commands_processed; 0 for a
// field that is absent or not a number.
func readingOf(text string) metrics.ServerReading {
	info := engine.ParseInfo(text)
	f := func(name string) float64 {
		v, _ := info.Float(name)
		return v
	}
	return metrics.ServerReading{CPUSeconds: f("used_cpu_sys") + f("used_cpu_user"), Clients: f("connected_clients"), Commands: f("total_commands_processed")}
}

// commandCounts reads the masters' INFO commandstats, as a result counts
// commands.
func commandCounts(eng *engine.Engine) func(context.Context) []map[string]results.CommandCount {
	return func(ctx context.Context) []map[string]results.CommandCount {
		return commandCountsOf(eng.CommandStats(ctx))
	}
}

// commandCountsOf are servers' commandstats as a result counts commands.
func commandCountsOf(stats []map[string]engine.CommandStat) []map[string]results.CommandCount {
	if stats == nil {
		return nil
	}
	out := make([]map[string]results.CommandCount, len(stats))
	for i, m := range stats {
		if m == nil {
			continue
		}
		out[i] = make(map[string]results.CommandCount, len(m))
		for k, v := range m {
			out[i][k] = results.CommandCount{Calls: v.Calls, Usec: v.Usec}
		}
	}
	return out
}

// redisCell is the Redis lock of a benchmark cell: the engine (its
// baselines, counters and clean-up) and the lock the workers use, the
// engine or redsync on the same masters.
type redisCell struct {
	env  pool.CellEnv
	eng  *engine.Engine
	lk   cellLocker
	base baselines
	win  *pool.WindowReadings
	// shards are a cluster's (nil otherwise), as the cell opened: its
	// per-server rows are theirs.
	shards []engine.Shard
}

func (r *redisCell) Locker() lock.Locker { return r.lk.Locker }

func (r *redisCell) Window(rc *workloads.RunConfig) {
	rc.ServerCPU = func() []time.Duration { return r.eng.ServerCPU(context.Background()) }
	if r.shards != nil {
		addrs := r.shardAddrs()
		rc.ServerCPU = func() []time.Duration { return r.eng.ServerCPUOf(context.Background(), addrs) }
	}
	rc.OnWindow = r.win.Mark
}

func (r *redisCell) Finish(res *results.Run, st *workloads.Stats) {
	res.Config.Redsync = r.lk.redsync
	if a := r.lk.adapter; a != nil {
		res.Config.Adapter = adapterSettings(a)
		res.Servers = st.ServersOf(r.eng.Addrs()) // the adapter reports no masters: read them by the engine's
	}
	if r.shards != nil {
		res.Servers = st.ServersOf(r.shardAddrs()) // the engine's one link is the cluster's: its rows are the shards'
	}
	r.base.fill(res, r.eng.Addrs())
	r.win.Finish(res, st)
	if r.shards != nil {
		of := make([]results.ShardOf, len(r.shards))
		for i, s := range r.shards {
			of[i] = results.ShardOf{Server: s.Master, Holds: s.SlotsText()}
		}
		res.Shards = results.NewShards(res, of)
	}
	if r.env.Servers.Service.(*RedisServers).Embedded {
		res.Warnings = append(res.Warnings, "embedded in-process masters (redis-server not found): these are not Redis figures")
	}
}

// Close releases what the cell took: only this cell's own locks go,
// whatever happens (never FLUSHALL): keys under its prefix whose value is
// one of its tokens.
func (r *redisCell) Close() {
	if r.lk.close != nil {
		r.lk.close()
	}
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = r.eng.Cleanup(cctx, r.env.Prefix, append([]string{r.eng.TokenPrefix()}, r.lk.tokenPrefixes...)...)
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
	if b.perMaster, err = eng.BaselineRTT(ctx, key, pool.BaselineSamples); err != nil {
		return b, err
	}
	b.parallel, err = eng.BaselineParallel(ctx, key, pool.BaselineSamples)
	return b, err
}

// fill puts the baselines into the result, by master address.
func (b baselines) fill(res *results.Run, addrs []string) {
	res.BaselineRTT = map[string]results.Latency{}
	for i, addr := range addrs {
		res.BaselineRTT[addr] = results.SummarizeDurations(b.perMaster[i])
	}
	pl := results.SummarizeDurations(b.parallel)
	res.BaselineParallel = &pl
}

// cellLocker is the lock client the workers use: the engine, or redsync
// on the same masters (with the terms it ran on, for the result).
type cellLocker struct {
	lock.Locker
	redsync       *redsyncdriver.Settings
	adapter       *adapter.Client // an external client (--client)
	tokenPrefixes []string        // besides the engine's
	close         func()
}

func newLocker(ctx context.Context, s plan.Settings, cfg engine.Config, eng *engine.Engine) (cellLocker, error) {
	if s.Driver == rueidislockdriver.Name {
		d, err := rueidislockdriver.New(ctx, cfg)
		if err != nil {
			return cellLocker{}, err
		}
		return cellLocker{Locker: d, close: d.Close}, nil
	}
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
