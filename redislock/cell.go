package redislock

import (
	"context"
	"time"

	"lockbench/lock"
	"lockbench/metrics"
	"lockbench/plan"
	"lockbench/pool"
	"lockbench/redislock/engine"
	"lockbench/redislock/redsyncdriver"
	"lockbench/results"
	"lockbench/workloads"
)

// The engine measures its benchmark cell beyond a service's plain writes
// (pool's capabilities): per-master baselines, the masters' command
// counters and INFO CPU, a cluster's shards, redsync as the workers' lock,
// the live metrics' readings and the clean-up of its own tokens.

// Baselines are plain SET round trips, one master at a time and all at
// once, measured in this run on these masters.
func (c *RedisClient) Baselines(ctx context.Context, key string) (pool.Baselines, error) {
	per, err := c.BaselineRTT(ctx, key, pool.BaselineSamples)
	if err != nil {
		return pool.Baselines{}, err
	}
	b := pool.Baselines{PerServer: map[string][]time.Duration{}}
	for i, addr := range c.Addrs() {
		b.PerServer[addr] = per[i]
	}
	b.Parallel, err = c.BaselineParallel(ctx, key, pool.BaselineSamples)
	return b, err
}

// CellWindow is what the masters give the window readings (a cluster's
// shards one by one); it learns the cell's servers and shards.
func (c *RedisClient) CellWindow(ctx context.Context, m *pool.CellServers) (pool.Window, error) {
	rs := m.Service.(*RedisServers)
	c.embedded = rs.Embedded
	var err error
	if c.shards, err = c.Shards(ctx); err != nil {
		return pool.Window{}, err
	}
	w := rs.window(ctx, c.Engine, m.Net != nil)
	if c.shards != nil {
		c.shardWindow(ctx, &w)
	}
	if c.adapter != nil {
		w.AdapterPid = c.adapter.Pid()
	}
	return w, nil
}

// ServerCPU is the masters' CPU from INFO (a cluster's: its shards').
func (c *RedisClient) ServerCPU(ctx context.Context) []time.Duration {
	if c.shards != nil {
		return c.ServerCPUOf(ctx, c.shardAddrs())
	}
	return c.Engine.ServerCPU(ctx)
}

// LiveServers: the live metrics read the masters' INFO.
func (c *RedisClient) LiveServers() ([]string, metrics.ReadFunc) {
	return c.Addrs(), InfoReading(c.InfoAt)
}

// WorkersLocker is the engine, or redsync on the same masters (through
// client 0's proxies, if any).
func (c *RedisClient) WorkersLocker(ctx context.Context, cell plan.Cell, m *pool.CellServers) (lock.Locker, error) {
	var via []string
	if m.Net != nil {
		via = m.Net.Addrs(0)
	}
	var err error
	c.lk, err = newLocker(ctx, cell.Settings, m.Service.(*RedisServers).LockConfig(engineConfig(cell), via), c.Engine)
	return c.lk.Locker, err
}

// RecordCell records what only the engine knows: redsync's terms, an
// external client's library, the masters' (or shards') rows.
func (c *RedisClient) RecordCell(res *results.Run, st *workloads.Stats) {
	res.Config.Redsync = c.lk.redsync
	if a := c.adapter; a != nil {
		res.Config.Adapter = adapterSettings(a)
		res.Servers = st.ServersOf(c.Addrs()) // the adapter reports no masters: read them by the engine's
	}
	if c.shards != nil {
		res.Servers = st.ServersOf(c.shardAddrs()) // the engine's one link is the cluster's: its rows are the shards'
	}
	if c.embedded {
		res.Warnings = append(res.Warnings, "embedded in-process masters (redis-server not found): these are not Redis figures")
	}
}

// Cleanup releases what the cell took: only this cell's own locks go,
// whatever happens (never FLUSHALL): keys under its prefix whose value is
// one of its tokens.
func (c *RedisClient) Cleanup(ctx context.Context, prefix string) {
	if c.lk.close != nil {
		c.lk.close()
	}
	_, _ = c.Engine.Cleanup(ctx, prefix, append([]string{c.TokenPrefix()}, c.lk.tokenPrefixes...)...)
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
func (c *RedisClient) shardWindow(ctx context.Context, w *pool.Window) {
	addrs := c.shardAddrs()
	w.Addrs, w.ProbeAddrs, w.SelfPids = addrs, addrs, c.ServerPIDsOf(ctx, addrs)
	w.Counters = func(ctx context.Context) []map[string]results.CommandCount {
		return commandCountsOf(c.CommandStatsOf(ctx, addrs))
	}
	w.Shards = make([]results.ShardOf, len(c.shards))
	for i, s := range c.shards {
		w.Shards[i] = results.ShardOf{Server: s.Master, Holds: s.SlotsText()}
	}
}

// shardAddrs are the cluster's shards' masters, in slot order.
func (c *RedisClient) shardAddrs() []string {
	out := make([]string, len(c.shards))
	for i, s := range c.shards {
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

// cellLocker is the lock the workers use: the engine, or redsync on the
// same masters (with the terms it ran on, for the result).
type cellLocker struct {
	lock.Locker
	redsync       *redsyncdriver.Settings
	tokenPrefixes []string // besides the engine's
	close         func()
}

// newLocker: rueidislock on Redis' servers is a client of its own
// (NewClient), never the engine's cell.
func newLocker(ctx context.Context, s plan.Settings, cfg engine.Config, eng *engine.Engine) (cellLocker, error) {
	if s.Driver != "redsync" {
		return cellLocker{Locker: eng}, nil
	}
	rs, err := redsyncdriver.New(ctx, cfg, s.Workers)
	if err != nil {
		return cellLocker{}, err
	}
	st := rs.Settings()
	return cellLocker{Locker: rs, redsync: &st, tokenPrefixes: []string{rs.TokenPrefix()}, close: func() { rs.Close() }}, nil
}
