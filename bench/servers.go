package bench

import (
	"context"
	"fmt"
	"os"
	"time"

	"lockbench/faults"
	"lockbench/localmasters"
	"lockbench/plan"
	"lockbench/service"
)

// MissingTool is a program this machine lacks for a cell (redis-server
// for a fault cell, libfaketime for a clock jump): not bad input, but a
// run that cannot be done here.
type MissingTool = service.MissingTool

// startService starts the cell's lock service's servers (each service
// bounds its own start).
func (p *Pool) startService(ctx context.Context, c plan.Cell, m *Masters) error {
	v, err := service.Of(c.Settings).Start(ctx, c, p.Log)
	if err != nil {
		return err
	}
	m.Service, m.Display, m.Version = v, v.Display(), v.Version()
	return nil
}

// CanServe says whether this machine can serve the cell's servers, before
// anything starts: a persistence mode and pinning need real redis-server
// masters, which embedded masters (used when redis-server is missing) are
// not; a fault cell needs real masters it can kill, a local replicated set
// real replicas and Sentinels, and a clock jump libfaketime (MissingTool). The messages name the setting where one is to
// blame, as settings errors do.
func CanServe(c plan.Cell) error {
	s, svc := c.Settings, service.Of(c.Settings)
	_, found := localmasters.RedisServerPath()
	embedded := s.Embedded == "always" || (s.Embedded == "auto" && !found)
	switch {
	case svc != nil && ownServers(c) && !found:
		return MissingTool{Err: fmt.Errorf("redis-server not found in PATH; a %s fault cell keeps its protected resource on a redis-server (apt-get install redis-server)", s.TopologyOf())}
	case svc != nil:
		return svc.CanServe(s)
	case ownServers(c) && !found:
		return MissingTool{Err: fmt.Errorf("redis-server not found in PATH; chaos needs real masters it can kill (apt-get install redis-server)")}
	case len(c.ClockMasters()) > 0:
		if err := faults.FaketimeAvailable(); err != nil {
			return MissingTool{Err: fmt.Errorf("clock_jump: %w", err)}
		}
	case s.ExternalSentinels(), len(s.Masters) > 0:
	case s.Replicated() && !found:
		return MissingTool{Err: fmt.Errorf("redis-server not found in PATH; topology replicated runs real redis-server replicas and Sentinels (apt-get install redis-server)")}
	case s.Persistence != "" && s.Persistence != "none" && embedded:
		return fmt.Errorf("persistence: %q needs real redis-server masters; embedded masters (used when redis-server is missing) support only none", s.Persistence)
	case s.LocalCPUs != "" && embedded:
		return fmt.Errorf("local-cpus: needs real redis-server masters; embedded masters run inside lockbench and cannot be pinned apart")
	case s.LocalCPUs != "":
		_, _, err := localmasters.SplitCPUs(s.LocalCPUs)
		return err
	}
	return nil
}

// startFaultServers starts a fault cell's servers: each master in a set of
// its own (so that one can run under a fake clock) or its replicated set,
// and the protected resource's server, with a temp dir for the clocks.
func (p *Pool) startFaultServers(ctx context.Context, c plan.Cell, m *Masters) error {
	var err error
	if m.TempDir, err = os.MkdirTemp("", "lockbench-chaos-*"); err != nil {
		return err
	}
	switch { // each service bounds its own start (a JVM ensemble takes longer than redis-servers)
	case service.Of(c.Settings) != nil:
		err = p.startService(ctx, c, m)
	default:
		mctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err = p.startFaultMasters(mctx, c, m)
		cancel()
		m.Display, m.Embedded = m.Addrs, false
	}
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return m.startResource(rctx)
}

// startResource starts the protected resource's redis-server.
func (m *Masters) startResource(ctx context.Context) error {
	rset, err := localmasters.Start(ctx, localmasters.Options{N: 1, Persistence: localmasters.PersistNone, Embedded: "never"})
	if err != nil {
		return fmt.Errorf("resource server: %w", err)
	}
	m.sets = append(m.sets, rset)
	m.Resource = rset.Addrs()[0]
	return nil
}

// startFaultMasters starts a fault cell's lock servers: each master in a
// set of its own, or its replicated set (whose master is then its one
// master: a crash of master 0 kills the process started as master).
func (p *Pool) startFaultMasters(ctx context.Context, c plan.Cell, m *Masters) error {
	s := c.Settings
	m.Clocks = map[int]*faults.Clock{}
	if s.Replicated() {
		if err := p.startReplicated(ctx, c, m); err != nil {
			return err
		}
		m.Servers = []*localmasters.Master{m.Replicated.Master()}
		return nil
	}
	persist, err := localmasters.ParsePersistence(s.Persistence)
	if err != nil {
		return err
	}
	clockMasters := c.ClockMasters()
	for i := range s.Local {
		if err := p.startFaultMaster(ctx, m, i, persist, clockMasters[i]); err != nil {
			return fmt.Errorf("master %d: %w", i, err)
		}
	}
	return nil
}

// startFaultMaster starts master i of a fault cell, under a fake clock of
// its own when a fault jumps it.
func (p *Pool) startFaultMaster(ctx context.Context, m *Masters, i int, persist localmasters.Persistence, clock bool) error {
	var env []string
	if clock {
		c, err := faults.NewClock(m.TempDir)
		if err != nil {
			return err
		}
		if env, err = c.Env(); err != nil {
			return err
		}
		m.Clocks[i] = c
	}
	set, err := localmasters.Start(ctx, localmasters.Options{N: 1, Persistence: persist, Embedded: "never", Env: env})
	if err != nil {
		return err
	}
	m.sets = append(m.sets, set)
	m.Servers = append(m.Servers, set.Masters()[0])
	m.Addrs = append(m.Addrs, set.Addrs()[0])
	if m.Version == "" {
		m.Version = set.Version()
	}
	return nil
}

// network makes the cell's proxies between clients and masters: a fault
// cell with network faults gets one per client and master; --net-latency
// one per master, delaying every reply (the baselines go through it too,
// so ratios stay like for like). Its goroutines are labelled so its CPU
// can be told apart.
func (p *Pool) network(c plan.Cell, m *Masters) error {
	if m.Net != nil {
		m.Net.Close()
		m.Net = nil
	}
	s := c.Settings
	var err error
	switch {
	case c.NeedsNetwork():
		m.Net, err = faults.NewNetwork(m.upstreams(), s.Clients)
	case s.NetLatency > 0:
		WithProxyLabel(func() {
			if m.Net, err = faults.NewNetwork(m.Addrs, 1); err == nil {
				err = m.Net.Latency(nil, nil, time.Duration(s.NetLatency), time.Duration(s.NetJitter))
			}
		})
	}
	return err
}
