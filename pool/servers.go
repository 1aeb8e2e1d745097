package pool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"lockbench/check"
	"lockbench/faults"
	"lockbench/plan"
	"lockbench/service"
)

// MissingTool is a program this machine lacks for a cell (the protected
// resource's server for a fault cell, libfaketime for a clock jump): not
// bad input, but a run that cannot be done here.
type MissingTool = service.MissingTool

// startService starts the cell's lock service's servers (each service
// bounds its own start).
func (p *Pool) startService(ctx context.Context, c plan.Cell, m *CellServers) error {
	svc, err := registered(c)
	if err != nil {
		return err
	}
	v, err := svc.Start(ctx, c, p.Log)
	if err != nil {
		return err
	}
	m.Service, m.Display = v, v.Display()
	return nil
}

// CanServe says whether this machine can serve the cell's servers, before
// anything starts (a MissingTool when a program is missing): its
// topology's, and a fault cell's protected resource's (check's server).
// The messages name the setting where one is to blame, as settings errors
// do.
func CanServe(c plan.Cell) error {
	svc, err := registered(c)
	if err != nil {
		return err
	}
	if err := svc.CanServe(c); err != nil {
		return err
	}
	if err := check.ServerMissing(string(c.Settings.TopologyOf())); ownServers(c) && err != nil {
		return MissingTool{Err: err}
	}
	return nil
}

// startFaultServers starts a fault cell's servers and the protected
// resource's server, with a temp dir for the clients' logs.
func (p *Pool) startFaultServers(ctx context.Context, c plan.Cell, m *CellServers) error {
	var err error
	if m.TempDir, err = os.MkdirTemp("", "lockbench-chaos-*"); err != nil {
		return err
	}
	if err := p.startService(ctx, c, m); err != nil { // each topology bounds its own start (a JVM ensemble takes longer than redis-servers)
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return m.startResource(rctx)
}

// startResource starts the protected resource's server (check's), in
// the cell's temp dir.
func (m *CellServers) startResource(ctx context.Context) error {
	dir := filepath.Join(m.TempDir, "resource")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("resource server: %w", err)
	}
	srv, err := check.StartServer(ctx, dir)
	if err != nil { // nothing is left running then
		return fmt.Errorf("resource server: %w", err)
	}
	m.resource, m.Resource = srv, srv.Addr()
	return nil
}

// network makes the cell's proxies between clients and masters: a fault
// cell with network faults gets one per client and master; --net-latency
// one per master, delaying every reply (the baselines go through it too,
// so ratios stay like for like). Its goroutines are labelled so its CPU
// can be told apart.
func (p *Pool) network(c plan.Cell, m *CellServers) error {
	if m.Net != nil {
		m.Net.Close()
		m.Net = nil
	}
	s := c.Settings
	var err error
	switch {
	case c.NeedsNetwork():
		m.Net, err = faults.NewNetwork(m.Service.Upstreams(), s.Clients)
	case s.NetLatency > 0:
		WithProxyLabel(func() {
			if m.Net, err = faults.NewNetwork(m.Service.Upstreams(), 1); err == nil {
				err = m.Net.Latency(nil, nil, time.Duration(s.NetLatency), time.Duration(s.NetJitter))
			}
		})
	}
	return err
}

// registered is the service cell c locks on; plan knows every topology,
// but one no package registered (the program imports none) has no servers.
func registered(c plan.Cell) (service.Service, error) {
	if svc := service.Of(c.Settings); svc != nil {
		return svc, nil
	}
	return nil, fmt.Errorf("topology %s: no lock service registered for it (the program imports none)", c.Settings.TopologyOf())
}
