package redislock

import (
	"context"
	"os"
	"time"

	"lockbench/adapter"
	"lockbench/metrics"
	"lockbench/pool"
	"lockbench/redislock/engine"
	"lockbench/results"
	"lockbench/service"
	"lockbench/workloads"
)

// clientConfig is a Redis client's config: the engine's, and an external
// client's adapter command when the cell runs one (--client), with the
// most requests it will have in flight (its workers).
type clientConfig struct {
	engine.Config
	Client  string `json:",omitempty"`
	Workers int    `json:",omitempty"`
}

// adapterClient is an external client on Redis' masters, as a lock
// service's client: no plain write of its own, its calls not counted; its
// benchmark cell is measured as the engine's (per-master baselines,
// command counters, clean-up), by an engine of its own on the same
// masters, opened when the cell first asks (a fault cell's clients never
// do), the adapter its workers' lock.
type adapterClient struct {
	*adapter.Client
	service.ClientBase
	cfg engine.Config
	rc  *RedisClient
}

// measured is the engine that measures the cell, opened once.
func (c *adapterClient) measured(ctx context.Context) (*RedisClient, error) {
	if c.rc == nil {
		eng, err := engine.New(ctx, c.cfg)
		if err != nil {
			return nil, err
		}
		c.rc = &RedisClient{Engine: eng, adapter: c.Client}
	}
	return c.rc, nil
}

// CountKeys: the cell's first question, on the masters by the engine.
func (c *adapterClient) CountKeys(ctx context.Context, prefix string) (int64, error) {
	rc, err := c.measured(ctx)
	if err != nil {
		return 0, err
	}
	return rc.CountKeys(ctx, prefix)
}

func (c *adapterClient) Baselines(ctx context.Context, key string) (pool.Baselines, error) {
	rc, err := c.measured(ctx)
	if err != nil {
		return pool.Baselines{}, err
	}
	return rc.Baselines(ctx, key)
}

func (c *adapterClient) CellWindow(ctx context.Context, m *pool.CellServers) (pool.Window, error) {
	rc, err := c.measured(ctx)
	if err != nil {
		return pool.Window{}, err
	}
	return rc.CellWindow(ctx, m)
}

func (c *adapterClient) ServerCPU(ctx context.Context) []time.Duration { return c.rc.ServerCPU(ctx) }

func (c *adapterClient) LiveServers() ([]string, metrics.ReadFunc) { return c.rc.LiveServers() }

func (c *adapterClient) RecordCell(res *results.Run, st *workloads.Stats) { c.rc.RecordCell(res, st) }

// Cleanup: nothing to clean when the measuring engine never opened (the
// cell failed as it asked its first question).
func (c *adapterClient) Cleanup(ctx context.Context, prefix string) {
	if c.rc != nil {
		c.rc.Cleanup(ctx, prefix)
	}
}

// Close ends the adapter and the engine that measured its cell.
func (c *adapterClient) Close() {
	c.Client.Close()
	if c.rc != nil {
		c.rc.Close()
	}
}

// startAdapter runs the cell's adapter on cfg's masters (a fault cell's
// client: through its proxies), told the design's settings.
func startAdapter(ctx context.Context, command string, cfg engine.Config, workers int) (*adapter.Client, error) {
	return adapter.Start(ctx, adapter.Options{Argv: adapter.SplitCommand(command), Stderr: os.Stderr, Hello: adapterHello(cfg, workers)})
}

// adapterHello is what the adapter is told: the masters, the TTL, how
// long an acquire may keep trying, and the engine's settings by name.
func adapterHello(cfg engine.Config, workers int) adapter.Hello {
	topology := cfg.Topology
	if topology == "" {
		topology = engine.Redlock
	}
	return adapter.Hello{Servers: cfg.Masters, TTL: cfg.TTL, Wait: waitBound(cfg), MaxFlight: max(workers, 1), Settings: map[string]any{
		"topology": string(topology), "mode": string(cfg.Mode), "wait": string(cfg.Wait), "timeout_ms": cfg.Timeout.Milliseconds(),
		"drift_factor": cfg.DriftFactor, "retries": cfg.Retries, "retry_delay_min_ms": cfg.RetryMin.Milliseconds(),
		"retry_delay_max_ms": cfg.RetryMax.Milliseconds(), "wait_time_ms": cfg.WaitTime.Milliseconds(),
		"wait_strategy": cfg.Strategy, "watchdog": cfg.Watchdog}}
}

// waitBound is the longest an acquire of these settings keeps trying:
// its wait time, or its retries' delays and per-master timeouts.
func waitBound(cfg engine.Config) time.Duration {
	if cfg.WaitTime > 0 {
		return cfg.WaitTime
	}
	return time.Duration(cfg.Retries)*(cfg.RetryMax+cfg.Timeout) + cfg.Timeout
}

// AdapterSettings: a fault cell's client records its adapter's library
// (a benchmark cell's is recorded by its cell).
func (c *adapterClient) AdapterSettings() *results.AdapterSettings { return adapterSettings(c.Client) }

// adapterSettings are what a result records of the adapter.
func adapterSettings(a *adapter.Client) *results.AdapterSettings {
	h := a.Hello()
	out := &results.AdapterSettings{Library: h.Library.Name, Version: h.Library.Version, Language: h.Library.Language,
		Capabilities: []string{}, Validity: h.Validity.Method, LateGrants: a.LateGrants(), Indefinite: a.Indefinite(), Cancels: a.Cancels()}
	for _, c := range []struct {
		name string
		on   bool
	}{{"extend", h.Capabilities.Extend}, {"auto_extend", h.Capabilities.AutoExtend}, {"fence", h.Capabilities.Fence}, {"lost_notice", h.Capabilities.LostNotice}} {
		if c.on {
			out.Capabilities = append(out.Capabilities, c.name)
		}
	}
	return out
}
