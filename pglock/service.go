package pglock

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"lockbench/engine"
	"lockbench/faults"
	"lockbench/plan"
	"lockbench/results"
	"lockbench/service"
)

func init() { service.Register(postgres{}) }

// CanServe: a local server needs Debian's binaries.
func (postgres) CanServe(s plan.Settings) error {
	if _, ok := BinDir(); !ok && !s.External() {
		return service.MissingTool{Err: fmt.Errorf("postgres not found in /usr/lib/postgresql/*/bin; topology postgres with a local server runs Debian's (apt-get install %s)", Package)}
	}
	return nil
}

// servers are a postgres cell's server: a local one (nil for an external
// one) and the URL the lock client connects with.
type servers struct {
	local *Server
	url   string
}

// Start starts the cell's local server, or takes an external one's URL
// (connected and checked by the lock client).
func (postgres) Start(ctx context.Context, c plan.Cell, log io.Writer) (service.Servers, error) {
	s := c.Settings
	if s.External() {
		return &servers{url: serverURL(s)}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	srv, err := StartLocal(ctx, Options{MaxConnections: maxConnections(s), Log: log})
	if err != nil {
		return nil, err
	}
	return &servers{local: srv, url: srv.URL()}, nil
}

func (v *servers) Display() []string {
	if v.local == nil {
		return []string{engine.RedactURL(v.url)}
	}
	return []string{v.local.Addr()}
}

func (v *servers) Quorum() int { return 1 }

// Trees: the postmaster's backends do the server's work.
func (v *servers) Trees() bool { return true }

func (v *servers) Version() string {
	if v.local == nil {
		return ""
	}
	return "PostgreSQL " + v.local.Version()
}

func (v *servers) Pids() []int {
	if v.local == nil {
		return nil
	}
	return []int{v.local.Pid()}
}

func (v *servers) Upstreams() []string {
	if v.local == nil {
		return nil
	}
	return []string{v.local.Addr()}
}

// ClientConfig: one connection per worker, through the client's proxy
// when there is one.
func (v *servers) ClientConfig(c plan.Cell, via []string) (json.RawMessage, error) {
	cfg := Config{URL: v.url, Strategy: c.Settings.WaitStrategy, Retry: c.Engine.Retry(), Conns: c.Load.Workers}
	if u, err := url.Parse(v.url); err == nil && via != nil && strings.Contains(v.url, "://") {
		u.Host = via[0]
		cfg.URL = u.String()
	}
	return json.Marshal(cfg)
}

// Targets: the server (a crash or pause of its process group, its
// backends killed).
func (v *servers) Targets(_ plan.Cell, t *faults.Targets) []string {
	if v.local == nil {
		return nil
	}
	t.Masters = append(t.Masters, v.local)
	return []string{v.local.Addr()}
}

func (v *servers) Record(out *results.ServiceSettings, _ results.Settings) {
	out.Server, out.Servers = "server (postmaster and backends)", "1 local server"
	if v.local == nil {
		out.Servers = "given server"
	}
}

func (v *servers) Describe() string {
	return fmt.Sprintf("%s server %s (pid %d)", v.Version(), v.local.Addr(), v.local.Pid())
}

// WatchSessionEnds: the backends a kill_backend fault ended.
func (v *servers) WatchSessionEnds() (service.SessionEnds, error) {
	if v.local == nil {
		return nil, nil
	}
	return func() (map[string]time.Time, string) { return v.local.SessionEnds(), SessionEndSource }, nil
}

func (v *servers) Stop() error {
	if v.local == nil {
		return nil
	}
	return v.local.Stop()
}

// NewClient is the lock client on a config ClientConfig made.
func (postgres) NewClient(ctx context.Context, raw json.RawMessage) (service.Client, error) {
	var cfg Config
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, fmt.Errorf("postgres client config: %w", err)
	}
	l, err := New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return client{l}, nil
}

// client is the Locker as a cell uses it: advisory locks leave no keys,
// and a ping is its baseline.
type client struct{ *Locker }

func (client) CountKeys(context.Context, string) (int64, error) { return 0, nil }
func (c client) Put(ctx context.Context, _ string) error        { return c.Ping(ctx) }
func (client) Delete(context.Context, string) error             { return nil }

// Record: advisory locks have no lease and no token.
func (c client) Record(v *results.ServiceSettings) {
	v.Lease, v.FenceSource = "session advisory locks (no lease, no token)", "none: an advisory lock has no token"
	v.Lost, v.Sessions, v.Calls, v.Baseline = c.LostConnections(), "connections", "lock calls", "a SELECT 1 round trip"
}
