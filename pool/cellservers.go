// Package pool is the server pool: it gets a cell's lock servers ready
// (any service's, kept for the next cell while they fit; a fault cell's
// own, with clocks, the protected resource's server and proxies), says
// whether this machine can serve a cell, and reads the machine and the
// servers around a measured window.
package pool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"lockbench/engine"
	"lockbench/faults"
	"lockbench/localmasters"
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
	resource *localmasters.Set

	// Net is the cell's proxies (--net-latency, or a fault cell's network
	// faults); nil without. Made for every cell anew.
	Net *faults.Network
}

// Pids are the servers' and the resource's processes (0: none).
func (m *CellServers) Pids() []int {
	out := m.Service.Pids()
	if m.resource != nil {
		out = append(out, pidsOf(m.resource.Masters())...)
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

// SplitCPUs is --local-cpus' split: the masters' CPUs and lockbench's.
func SplitCPUs(list string) (local, client []int, err error) { return localmasters.SplitCPUs(list) }

// ResourcePid is a fault cell's protected resource's process (0: none).
func (m *CellServers) ResourcePid() int {
	if m.resource == nil {
		return 0
	}
	return m.resource.Masters()[0].Pid()
}

// Pool keeps the masters of consecutive cells: local masters are restarted
// only when N or the persistence mode changes; external masters get the
// cell's persistence by CONFIG SET, restored to the original when done. A
// fault cell always gets servers of its own (it crashes them).
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

// splitCPUs is --local-cpus as the local servers' CPUs and lockbench's
// (none without it).
func splitCPUs(cpus string) (local, client []int, err error) {
	if cpus == "" {
		return nil, nil, nil
	}
	return localmasters.SplitCPUs(cpus)
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

// pinSelf runs lockbench on cpus only, with as many Go processors, and
// returns how to undo it.
func pinSelf(cpus []int) (func() error, error) {
	before, err := localmasters.AllowedCPUs(0)
	if err != nil {
		return nil, err
	}
	if err := localmasters.PinProcess(0, cpus); err != nil {
		return nil, err
	}
	procs := runtime.GOMAXPROCS(len(cpus))
	return func() error {
		runtime.GOMAXPROCS(procs)
		return localmasters.PinProcess(0, before)
	}, nil
}

// aofSettings maps a persistence mode onto appendonly/appendfsync.
func aofSettings(p string) (appendonly, appendfsync string) {
	switch p {
	case "aof-no":
		return "yes", "no"
	case "aof-everysec":
		return "yes", "everysec"
	case "aof-always":
		return "yes", "always"
	}
	return "no", ""
}

// checkMaster connects to the master at addr and reads its INFO server
// section; display is the address without a password. The caller closes c.
func checkMaster(ctx context.Context, addr string, tlsFiles engine.TLSFiles) (c rueidis.Client, display, info string, err error) {
	opt, display, err := engine.MasterOption(addr, tlsFiles)
	if err != nil {
		return nil, "", "", err
	}
	opt.Dialer.Timeout = 3 * time.Second
	c, err = engine.NewSingleClient(opt)
	if err != nil {
		return nil, "", "", fmt.Errorf("master %s: %v", display, redactErr(err, addr))
	}
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	info, err = c.Do(cctx, c.B().Info().Section("server").Build()).ToString()
	cancel()
	if err != nil {
		c.Close()
		return nil, "", "", fmt.Errorf("master %s: not a usable Redis server: %v", display, redactErr(err, addr))
	}
	return c, display, info, nil
}

// setPersistence sets the persistence mode on the master with CONFIG SET
// and returns how to restore its original appendonly/appendfsync (which
// then closes c).
func setPersistence(ctx context.Context, c rueidis.Client, display, persistence string) (restore func(context.Context) error, err error) {
	orig := map[string]string{}
	for _, k := range []string{"appendonly", "appendfsync"} {
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		kv, err := c.Do(cctx, c.B().ConfigGet().Parameter(k).Build()).AsStrMap()
		cancel()
		if err != nil {
			return nil, fmt.Errorf("persistence: master %s refused CONFIG GET %s (%v); leave persistence unset to use the server's own", display, k, err)
		}
		orig[k] = kv[k]
	}
	set := func(ctx context.Context, ao, af string) error {
		if af != "" {
			if err := c.Do(ctx, c.B().ConfigSet().ParameterValue().ParameterValue("appendfsync", af).Build()).Error(); err != nil {
				return err
			}
		}
		return c.Do(ctx, c.B().ConfigSet().ParameterValue().ParameterValue("appendonly", ao).Build()).Error()
	}
	ao, af := aofSettings(persistence)
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err = set(cctx, ao, af)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("persistence: master %s refused CONFIG SET (%v); leave persistence unset to use the server's own", display, err)
	}
	return func(ctx context.Context) error {
		defer c.Close()
		if err := set(ctx, orig["appendonly"], orig["appendfsync"]); err != nil {
			return fmt.Errorf("master %s: restoring appendonly=%s appendfsync=%s: %v", display, orig["appendonly"], orig["appendfsync"], err)
		}
		return nil
	}, nil
}

// redactErr keeps a password that a client library echoed out of errors.
func redactErr(err error, url string) string {
	s := err.Error()
	if i := strings.Index(url, "://"); i >= 0 {
		if at := strings.Index(url[i+3:], "@"); at >= 0 {
			cred := url[i+3 : i+3+at]
			if _, pw, ok := strings.Cut(cred, ":"); ok && pw != "" {
				s = strings.ReplaceAll(s, pw, "xxxxx")
			}
		}
	}
	return s
}
