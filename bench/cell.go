package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"time"

	"lockbench/drivers/redsyncdriver"
	"lockbench/engine"
	"lockbench/faults"
	"lockbench/metrics"
	"lockbench/plan"
	"lockbench/results"
	"lockbench/workloads"
)

// Version is lockbench's version, stamped into results.
var Version = "dev"

// BaselineSamples SET round trips per master before the load starts.
const BaselineSamples = 500

// CellOptions are the per-cell extras around the settings.
type CellOptions struct {
	RunID      string            // names the keys: lockbench:RUNID:…
	Logs       map[int]io.Writer // .hlog writers by report metric
	OnInterval func(results.Interval)
	// Metrics, when set, get the cell's live figures, labelled with
	// Scenario and CellID and the cell's settings.
	Metrics  *metrics.Exporter
	Scenario string
	CellID   string
}

// NewRunID is a short random id for key prefixes.
func NewRunID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// KeyPrefix is where a cell's keys live.
func KeyPrefix(s plan.Settings, runID string, cellIndex int) string {
	if s.KeyPrefix != "" {
		return s.KeyPrefix
	}
	return fmt.Sprintf("lockbench:%s:%d:", runID, cellIndex)
}

// RunCell runs one cell on ready masters and returns its result. Settings
// must have been validated.
func RunCell(ctx context.Context, s plan.Settings, m *Masters, cellIndex int, opt CellOptions) (*results.Run, error) {
	cfg, closeNet, err := engineConfig(s, m)
	defer closeNet()
	if err != nil {
		return nil, err
	}
	prefix := KeyPrefix(s, opt.RunID, cellIndex)
	seed := s.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	rc, err := s.RunConfig(prefix, seed)
	if err != nil {
		return nil, err
	}
	rc.Logs, rc.OnInterval = opt.Logs, opt.OnInterval
	eng, err := engine.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	if err := checkPrefixFree(ctx, eng, prefix, s.Force); err != nil {
		return nil, err
	}
	tokenPrefixes := []string{eng.TokenPrefix()}
	// Only this cell's own locks go, whatever happens (never FLUSHALL):
	// keys under its prefix whose value is one of its tokens.
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = eng.Cleanup(cctx, prefix, tokenPrefixes...)
	}()
	base, err := measureBaselines(ctx, eng, prefix+"rtt")
	if err != nil {
		return nil, err
	}
	rc.ServerCPU = func() []time.Duration { return eng.ServerCPU(context.Background()) }
	win := newWindowReadings(ctx, eng, m, s.NetLatency > 0)
	rc.OnWindow = win.mark
	lk, err := newLocker(ctx, s, cfg, eng)
	if err != nil {
		return nil, err
	}
	defer lk.close()
	tokenPrefixes = append(tokenPrefixes, lk.tokenPrefixes...)
	waitSegmentStart(ctx, s)
	defer observe(opt, s, m, &rc)()
	started := time.Now()
	st, err := workloads.Run(ctx, lk.Locker, rc)
	if err != nil {
		return nil, err
	}
	res := st.Result(lk.Locker, cellConfig(s, m, seed, prefix, lk.redsync), started)
	base.fill(&res, eng.Addrs())
	win.finish(&res, st)
	if m.Embedded {
		res.Warnings = append(res.Warnings, "embedded in-process masters (redis-server not found): these are not Redis figures")
	}
	return &res, nil
}

// engineConfig is the cell's lock client configuration on masters m,
// through a delaying proxy with --net-latency; closeNet stops the proxy
// (a no-op without one).
func engineConfig(s plan.Settings, m *Masters) (cfg engine.Config, closeNet func(), err error) {
	closeNet = func() {}
	if cfg, err = s.EngineConfig(); err != nil {
		return cfg, closeNet, err
	}
	cfg.Masters = m.Addrs
	if s.NetLatency > 0 {
		net, err := latencyProxy(s, m.Addrs)
		if net != nil {
			closeNet = func() { net.Close() }
		}
		if err != nil {
			return cfg, closeNet, err
		}
		cfg.Masters = net.Addrs(0)
	}
	return cfg, closeNet, nil
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
	workloads.Locker
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

// observe hands the cell's live figures to the metrics exporter, if any;
// the returned func marks the cell's workers gone.
func observe(opt CellOptions, s plan.Settings, m *Masters, rc *workloads.RunConfig) func() {
	if opt.Metrics == nil {
		return func() {}
	}
	mc := opt.Metrics.Cell(MetricLabels(s, len(s.Masters) == 0, opt.Scenario, opt.CellID), m.Display)
	mc.SetWorkers(rc.Workers)
	mc.SetRate(rc.Rate)
	rc.Observer = mc
	return func() { mc.SetWorkers(0) }
}

// latencyProxy puts every master behind a proxy that delays its replies;
// the baselines go through it too, so ratios stay like for like. Its
// goroutines are labelled so its CPU can be told apart.
func latencyProxy(s plan.Settings, addrs []string) (*faults.Network, error) {
	var net *faults.Network
	var err error
	withProxyLabel(func() {
		if net, err = faults.NewNetwork(addrs, 1); err == nil {
			err = net.Latency(nil, nil, time.Duration(s.NetLatency), time.Duration(s.NetJitter))
		}
	})
	return net, err
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

// cellConfig is the result's config: the settings the cell ran on (this
// segment's share, secrets redacted, the masters as shown) and what else
// decided its figures.
func cellConfig(s plan.Settings, m *Masters, seed uint64, prefix string, rs *redsyncdriver.Settings) *results.CellConfig {
	seg, _, _ := s.ForSegment()
	shown := seg.Redacted()
	shown.Masters = m.Display
	if len(s.Masters) == 0 {
		shown.Masters = m.Addrs
		shown.Persistence = orNone(s.Persistence)
	}
	shown.Seed = seed
	shown.KeyPrefix = prefix
	return &results.CellConfig{Settings: results.Settings(shown), Quorum: engine.Quorum(len(m.Addrs)), Embedded: m.Embedded,
		RedisVersion: m.Version, Version: Version, Redsync: rs}
}

// summarizeDurations is the latency summary of a baseline's samples.
func summarizeDurations(ds []time.Duration) results.Latency {
	h := results.NewHistogram()
	for _, d := range ds {
		results.RecordDuration(h, d)
	}
	return results.Summarize(h)
}

// MetricLabels are a cell's live-metric labels: bounded values from its
// settings (persistence "server" on external masters left as they are).
func MetricLabels(s plan.Settings, local bool, scenario, cellID string) metrics.Labels {
	p := s.Persistence
	if p == "" {
		p = map[bool]string{true: "none", false: "server"}[local]
	}
	return metrics.Labels{Scenario: scenario, Cell: cellID, Segment: s.Segment, Mode: s.Mode, Wait: s.Wait, Persistence: p, Driver: s.Driver}
}
