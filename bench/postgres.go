package bench

import (
	"context"
	"fmt"
	"time"

	"lockbench/engine"
	"lockbench/pglock"
	"lockbench/plan"
)

// PostgresServers are a postgres cell's server: a local one (nil for an
// external one) and the URL the lock client connects with.
type PostgresServers struct {
	Local *pglock.Server
	URL   string
}

// startPostgres starts the cell's local server, or takes an external
// one's URL (connected and checked by the lock client).
func (p *Pool) startPostgres(ctx context.Context, c plan.Cell, m *Masters) error {
	s := c.Settings
	m.Postgres = &PostgresServers{URL: s.PostgresURL}
	if s.ExternalPostgres() {
		m.Display = []string{engine.RedactURL(s.PostgresURL)}
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	srv, err := pglock.StartLocal(ctx, pglock.Options{MaxConnections: s.PostgresMaxConnections(), Log: p.Log})
	if err != nil {
		return err
	}
	m.Postgres.Local, m.Postgres.URL = srv, srv.URL()
	m.Display, m.Version = []string{srv.Addr()}, "PostgreSQL "+srv.Version()
	return nil
}

// canServePostgres: a local server needs Debian's binaries.
func canServePostgres(s plan.Settings) error {
	if s.ExternalPostgres() {
		return nil
	}
	if _, ok := pglock.BinDir(); !ok {
		return MissingTool{fmt.Errorf("postgres not found in /usr/lib/postgresql/*/bin; topology postgres with a local server runs Debian's (apt-get install %s)", pglock.Package)}
	}
	return nil
}

// PostgresConfig is the advisory-lock client's terms for cell c: one
// connection per worker.
func (m *Masters) PostgresConfig(c plan.Cell, client int) pglock.Config {
	return pglock.Config{URL: m.PostgresURL(c, client), Strategy: c.Settings.WaitStrategy, Retry: c.Engine.Retry(), Conns: c.Load.Workers}
}

// NewPostgresWindowReadings reads the machine around a postgres cell's
// window: the local postmaster and its backends are the server's CPU.
func NewPostgresWindowReadings(ctx context.Context, m *Masters) *WindowReadings {
	var pids []int
	addrs := m.Display
	if srv := m.Postgres.Local; srv != nil {
		pids = []int{srv.Pid()}
	}
	w := &WindowReadings{ctx: ctx, addrs: addrs, probe: newMachineProbe(addrs, pids, nil)}
	if w.probe != nil {
		w.probe.trees = true
	}
	return w
}
