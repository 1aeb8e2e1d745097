// Command lockbench-adapter-redlock is the reference lock-client adapter:
// lockbench's own Redlock engine (engine/) served over the adapter
// protocol (docs/adapters.md). The same lock in-process and behind the
// protocol, on the same servers, shows what the protocol costs.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"lockbench/adapter"
	"lockbench/lock"
	"lockbench/redislock/engine"
)

func main() {
	if err := adapter.Serve(adapter.PolledStdin(), os.Stdout, open); err != nil {
		fmt.Fprintln(os.Stderr, "lockbench-adapter-redlock:", err)
		os.Exit(1)
	}
}

// settings are hello's settings this adapter reads (docs/adapters.md);
// absent ones keep the engine's defaults.
type settings struct {
	Topology     string   `json:"topology"`
	Mode         string   `json:"mode"`
	Wait         string   `json:"wait"`
	TimeoutMs    int64    `json:"timeout_ms"`
	DriftFactor  *float64 `json:"drift_factor"`
	Retries      int      `json:"retries"`
	RetryMinMs   int64    `json:"retry_delay_min_ms"`
	RetryMaxMs   int64    `json:"retry_delay_max_ms"`
	WaitStrategy string   `json:"wait_strategy"`
	Watchdog     bool     `json:"watchdog"`
}

// open is the engine on hello's servers and settings.
func open(ctx context.Context, h adapter.Msg) (lock.Locker, adapter.HelloOK, error) {
	cfg, err := config(h)
	if err != nil {
		return nil, adapter.HelloOK{}, err
	}
	eng, err := engine.New(ctx, cfg)
	if err != nil {
		return nil, adapter.HelloOK{}, err
	}
	ok := adapter.HelloOK{
		Library:      adapter.Library{Name: "lockbench-engine", Version: version(), Language: "go"},
		Capabilities: adapter.Capabilities{Extend: true, AutoExtend: cfg.Watchdog, LostNotice: cfg.Watchdog},
		Validity:     adapter.ValidityMethod{Method: "drift", DriftFactor: cfg.DriftFactor, DriftMs: float64(engine.Drift(0, 0)) / float64(time.Millisecond)},
	}
	return eng, ok, nil
}

func config(h adapter.Msg) (engine.Config, error) {
	var s settings
	if len(h.Settings) > 0 {
		if err := json.Unmarshal(h.Settings, &s); err != nil {
			return engine.Config{}, fmt.Errorf("settings: %w", err)
		}
	}
	cfg := engine.DefaultConfig()
	cfg.Masters, cfg.TTL, cfg.NotifyTimeout = h.Servers, time.Duration(h.TTLms)*time.Millisecond, time.Duration(h.TTLms)*time.Millisecond
	if h.WaitMs != nil && *h.WaitMs > 0 {
		cfg.WaitTime = time.Duration(*h.WaitMs) * time.Millisecond
	}
	var err error
	if s.Mode != "" {
		if cfg.Mode, err = engine.ParseMode(s.Mode); err != nil {
			return cfg, err
		}
	}
	if s.Wait != "" {
		if cfg.Wait, err = engine.ParseWait(s.Wait); err != nil {
			return cfg, err
		}
	}
	if s.Topology != "" {
		cfg.Topology = engine.Topology(s.Topology)
	}
	if s.TimeoutMs > 0 {
		cfg.Timeout = time.Duration(s.TimeoutMs) * time.Millisecond
	}
	if s.DriftFactor != nil {
		cfg.DriftFactor = *s.DriftFactor
	}
	if s.RetryMinMs > 0 || s.RetryMaxMs > 0 {
		cfg.RetryMin, cfg.RetryMax = time.Duration(s.RetryMinMs)*time.Millisecond, time.Duration(s.RetryMaxMs)*time.Millisecond
	}
	if s.WaitStrategy != "" {
		cfg.Strategy = s.WaitStrategy
	}
	cfg.Retries, cfg.Watchdog = s.Retries, s.Watchdog
	return cfg, cfg.Validate()
}

// version is the build's commit (the engine is lockbench's own), and
// "dev" without one.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return s.Value[:12]
		}
	}
	return "dev"
}
