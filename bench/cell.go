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
	"lockbench/plan"
	"lockbench/report"
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
	OnInterval func(report.Interval)
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
func RunCell(ctx context.Context, s plan.Settings, m *Masters, cellIndex int, opt CellOptions) (*report.Run, error) {
	cfg, err := s.EngineConfig()
	if err != nil {
		return nil, err
	}
	cfg.Masters = m.Addrs
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
	// Only this cell's keys go, whatever happens (never FLUSHALL).
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = CleanupKeys(cctx, eng, prefix)
	}()
	// The floor to compare acquires with: plain SET round trips, one master
	// at a time, measured in this run on these masters.
	rtts, err := eng.BaselineRTT(ctx, prefix+"rtt", BaselineSamples)
	if err != nil {
		return nil, err
	}
	par, err := eng.BaselineParallel(ctx, prefix+"rtt", BaselineSamples)
	if err != nil {
		return nil, err
	}
	rc.ServerCPU = func() []time.Duration { return eng.ServerCPU(context.Background()) }
	var locker workloads.Locker = eng
	if s.Driver == "redsync" {
		rs, err := redsyncdriver.New(ctx, cfg)
		if err != nil {
			return nil, err
		}
		defer rs.Close()
		locker = rs
	}
	started := time.Now()
	st, err := workloads.Run(ctx, locker, rc)
	if err != nil {
		return nil, err
	}
	shown := s.Redacted()
	shown.Masters = m.Display
	if len(s.Masters) == 0 {
		shown.Masters = m.Addrs
		shown.Persistence = orNone(s.Persistence)
	}
	shown.Seed = seed
	shown.KeyPrefix = prefix
	res := st.Result(locker, struct {
		plan.Settings
		Quorum       int    `json:"quorum"`
		Embedded     bool   `json:"embedded_masters"`
		RedisVersion string `json:"redis_server_version,omitempty"`
		Version      string `json:"lockbench_version"`
	}{shown, engine.Quorum(len(m.Addrs)), m.Embedded, m.Version, Version}, started)
	res.BaselineRTT = map[string]report.Latency{}
	for i, addr := range eng.Addrs() {
		h := report.NewHistogram()
		for _, d := range rtts[i] {
			report.RecordDuration(h, d)
		}
		res.BaselineRTT[addr] = report.Summarize(h)
	}
	ph := report.NewHistogram()
	for _, d := range par {
		report.RecordDuration(ph, d)
	}
	pl := report.Summarize(ph)
	res.BaselineParallel = &pl
	if rc.Rate > 0 {
		res.OpenLoop = &report.OpenLoop{OfferedRate: rc.Rate, Offered: st.Offered, Unserved: st.Unserved}
	}
	if m.Embedded {
		res.Warnings = append(res.Warnings, "embedded in-process masters (redis-server not found): these are not Redis figures")
	}
	return &res, nil
}

// CleanupKeys deletes the keys under prefix on every master (SCAN + DEL),
// and nothing else.
func CleanupKeys(ctx context.Context, eng *engine.Engine, prefix string) error {
	for i := range eng.Addrs() {
		c := eng.Client(i)
		var cursor uint64
		for {
			e, err := c.Do(ctx, c.B().Scan().Cursor(cursor).Match(escapeGlob(prefix)+"*").Count(1000).Build()).AsScanEntry()
			if err != nil {
				break // a dead master keeps its keys until their TTL
			}
			if len(e.Elements) > 0 {
				_ = c.Do(ctx, c.B().Del().Key(e.Elements...).Build()).Error()
			}
			cursor = e.Cursor
			if cursor == 0 {
				break
			}
		}
	}
	return nil
}

func escapeGlob(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			out = append(out, '\\')
		}
		out = append(out, s[i])
	}
	return string(out)
}
