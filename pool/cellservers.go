// Package pool is the server pool: it gets a cell's lock servers ready
// (any service's, kept for the next cell while they fit; a fault cell's
// own, with clocks, the protected resource's server and proxies), says
// whether this machine can serve a cell, and reads the machine and the
// servers around a measured window.
package pool

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"

	"lockbench/faults"
	"lockbench/plan"
	"lockbench/service"
)

// CellServers are the lock servers of a cell, ready: its topology's servers
// (Redis masters or a lock service's), and for a fault cell also the
// protected resource's server and a temp dir; the cell's proxies between
// clients and servers, if it has any.
type CellServers struct {
	key     string
	Display []string        // the servers, without secrets
	served  map[string]bool // cell IDs measured on these servers

	// Service is the servers of the cell's topology.
	Service service.Servers

	// A fault cell's: the resource's server and a temp dir.
	Resource string
	TempDir  string
	resource interface { // what Pids and Close need of startResource's server
		Pid() int
		Stop() error
	}

	// Net is the cell's proxies (--net-latency, or a fault cell's network
	// faults); nil without. Made for every cell anew.
	Net *faults.Network
}

// Pids are the servers' and the resource's processes (0: none).
func (m *CellServers) Pids() []int {
	out := m.Service.Pids()
	if m.resource != nil {
		out = append(out, m.resource.Pid())
	}
	return out
}

// Describe is a fault cell's servers as its log line says them.
func (m *CellServers) Describe() string {
	if d := m.Service.Describe(); d != "" {
		return d
	}
	return "servers " + strings.Join(m.Service.Display(), " ") // a service's default says nothing
}

// ResourcePid is a fault cell's protected resource's process (0: none).
func (m *CellServers) ResourcePid() int {
	if m.resource == nil {
		return 0
	}
	return m.resource.Pid()
}

// Pool keeps the servers of consecutive cells while their service says
// the cells can share them (plan.Cell.MastersKey: Redis' local masters
// until N or the persistence mode changes); a repeat whose persistence
// keeps state, and a fault cell (it crashes them), get servers of their
// own.
type Pool struct {
	Log io.Writer
	cur *CellServers
}

// ownServers is plan's: the cell gets servers of its own.
func ownServers(c plan.Cell) bool { return c.OwnServers() }

// Release stops cell c's servers if they are its own, as soon as it is
// done; other cells' stay for the next cell.
func (p *Pool) Release(c plan.Cell) error {
	if !ownServers(c) {
		return nil
	}
	return p.Close()
}

// Prepare returns the servers for cell c, reusing the current masters
// when possible: not for a fault cell, and
// not for a repeat of a cell whose persistence keeps state (an AOF file
// that grows with every write), so that every repeat starts alike. The
// cell's proxies are made anew.
func (p *Pool) Prepare(ctx context.Context, c plan.Cell) (*CellServers, error) {
	key := c.MastersKey()
	if m := p.cur; m != nil && m.key == key && !ownServers(c) && !(m.served[c.ID] && plan.RepeatsNeedFreshMasters(c.Settings)) {
		m.served[c.ID] = true
		return m, p.network(c, m)
	}
	if err := p.Close(); err != nil {
		return nil, err
	}
	m, err := p.start(ctx, c, key)
	if err != nil {
		return nil, errors.Join(err, p.Close())
	}
	m.served[c.ID] = true
	return m, p.network(c, m)
}

func (p *Pool) start(ctx context.Context, c plan.Cell, key string) (*CellServers, error) {
	m := &CellServers{key: key, served: map[string]bool{}}
	p.cur = m
	if ownServers(c) { // its own servers of any topology, and the resource's
		return m, p.startFaultServers(ctx, c, m)
	}
	return m, p.startService(ctx, c, m)
}

// Close stops the current servers (the topology's, a fault cell's
// resource, proxies, temp dir; external masters' settings restored).
func (p *Pool) Close() error {
	m := p.cur
	p.cur = nil
	if m == nil {
		return nil
	}
	var errs []error
	if m.Net != nil {
		m.Net.Close()
	}
	if m.Service != nil {
		errs = append(errs, m.Service.Stop())
	}
	if m.resource != nil {
		errs = append(errs, m.resource.Stop())
	}
	if m.TempDir != "" {
		errs = append(errs, os.RemoveAll(m.TempDir))
	}
	return errors.Join(errs...)
}
