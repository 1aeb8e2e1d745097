// Package bench is a cell's topology: it gets the lock servers ready for
// a cell (local or external masters; a fault cell's own masters, clocks,
// resource server and proxies), says whether this machine can serve a
// cell, and reads the machine and the masters around a measured window.
package bench

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

// Masters are the lock servers of a cell, ready: its masters' addresses
// and, for local ones, their processes; for a fault cell also a fake clock
// per master it jumps, the protected resource's server and a temp dir; and
// the cell's proxies between clients and masters, if it has any.
type Masters struct {
	key      string
	Addrs    []string // what the engine dials (external: as given, with credentials)
	Display  []string // without secrets
	Local    *localmasters.Set
	Embedded bool
	Version  string // redis_version from INFO (first master)
	restore  []func(context.Context) error
	served   map[string]bool // cell IDs measured on this set

	// LocalCPUs pin the local masters and ClientCPUs lockbench (--local-cpus).
	LocalCPUs, ClientCPUs []int

	// A fault cell's: each master in a set of its own (so one can run on a
	// fake clock), the clocks by master index, the resource's server.
	Servers  []*localmasters.Master
	Clocks   map[int]*faults.Clock
	Resource string
	TempDir  string
	sets     []*localmasters.Set // stopped with the cell

	// Net is the cell's proxies (--net-latency, or a fault cell's network
	// faults); nil without. Made for every cell anew.
	Net *faults.Network

	// A replicated cell's: the Sentinels the engine asks for the master
	// of MasterSet, and the local set when it is this run's (nil for an
	// external one). Addrs and Display are then the master's address.
	SentinelAddrs []string
	MasterSet     string
	Replicated    *localmasters.Replicated

	// Service is a lock service's servers (nil for Redis).
	Service service.Servers
}

// LockConfig is cfg (a cell's resolved engine configuration) pointed at
// these servers, as client c dials them: the masters, or the Sentinels.
func (m *Masters) LockConfig(cfg engine.Config, c int) engine.Config {
	if cfg.Topology == engine.Replicated {
		cfg.SentinelAddrs, cfg.MasterSet = m.SentinelAddrs, m.MasterSet
		return cfg
	}
	cfg.Masters = m.ClientAddrs(c)
	return cfg
}

// ClientAddrs are the addresses client c dials: its proxies, or the masters.
func (m *Masters) ClientAddrs(c int) []string {
	if m.Net != nil {
		return m.Net.Addrs(c)
	}
	return m.Addrs
}

// Pids are the local masters', a replicated set's and the resource's
// processes (0: none).
func (m *Masters) Pids() []int {
	var out []int
	for _, s := range append([]*localmasters.Set{m.Local}, m.sets...) {
		if s != nil {
			for _, lm := range s.Masters() {
				out = append(out, lm.Pid())
			}
		}
	}
	for _, lm := range m.replicatedProcesses() {
		out = append(out, lm.Pid())
	}
	if m.Service != nil {
		out = append(out, m.Service.Pids()...)
	}
	return out
}

// Describe is a fault cell's servers as its log line says them: the
// masters, a replicated set's processes, or a service's servers.
func (m *Masters) Describe() string {
	switch r := m.Replicated; {
	case m.Service != nil:
		return m.Service.Describe()
	case r != nil:
		return fmt.Sprintf("master %s, replicas %s, sentinels %s (pids %s)", r.MasterAddr(), strings.Join(r.ReplicaAddrs(), " "),
			strings.Join(r.SentinelAddrs(), " "), service.PidList(pidsOf(m.replicatedProcesses())))
	}
	return fmt.Sprintf("masters %s (pids %s)", strings.Join(m.Addrs, " "), service.PidList(pidsOf(m.Servers)))
}

// SplitCPUs is --local-cpus' split: the masters' CPUs and lockbench's.
func SplitCPUs(list string) (local, client []int, err error) { return localmasters.SplitCPUs(list) }

// ResourcePid is a fault cell's protected resource's process (0: none):
// the last set's one master.
func (m *Masters) ResourcePid() int {
	if len(m.sets) == 0 {
		return 0
	}
	return m.sets[len(m.sets)-1].Masters()[0].Pid()
}

// replicatedProcesses are a local replicated set's master, replicas and
// Sentinels (none without one).
func (m *Masters) replicatedProcesses() []*localmasters.Master {
	r := m.Replicated
	if r == nil {
		return nil
	}
	return append(append([]*localmasters.Master{r.Master()}, r.Replicas()...), r.Sentinels()...)
}

// Pool keeps the masters of consecutive cells: local masters are restarted
// only when N or the persistence mode changes; external masters get the
// cell's persistence by CONFIG SET, restored to the original when done. A
// fault cell always gets servers of its own (it crashes them).
type Pool struct {
	Log   io.Writer
	cur   *Masters
	unpin func() error // undoes pinning lockbench (--local-cpus)
}

// ownServers says the cell gets servers of its own, which no other cell
// shares: a fault cell's (it crashes them), with its protected resource.
func ownServers(c plan.Cell) bool { return c.Faulty }

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
func (p *Pool) Prepare(ctx context.Context, c plan.Cell) (*Masters, error) {
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

func (p *Pool) start(ctx context.Context, c plan.Cell, key string) (*Masters, error) {
	s := c.Settings
	m := &Masters{key: key, served: map[string]bool{}}
	p.cur = m
	switch {
	case ownServers(c): // its own servers of any service, and the resource's
		return m, p.startFaultServers(ctx, c, m)
	case service.Of(s) != nil:
		return m, p.startService(ctx, c, m)
	case s.ExternalSentinels():
		m.SentinelAddrs, m.MasterSet = s.SentinelAddrs, s.MasterSet
		m.Display = []string{s.MasterSet + " (via Sentinel)"} // its master's address is Sentinel's to tell; the engine checks them as it connects
		return m, nil
	case s.Replicated():
		return m, p.startReplicated(ctx, c, m)
	case len(s.Masters) == 0:
		return m, p.startLocal(ctx, c, m)
	}
	for _, a := range s.Masters {
		_, display, err := engine.ParseMaster(a)
		if err != nil {
			return nil, err
		}
		m.Addrs = append(m.Addrs, a)
		m.Display = append(m.Display, display)
	}
	return m, m.checkAndConfigure(ctx, s.Persistence, c.Engine.TLS)
}

// startLocal starts the cell's local masters, pinned with --local-cpus.
func (p *Pool) startLocal(ctx context.Context, c plan.Cell, m *Masters) error {
	s := c.Settings
	persist, err := localmasters.ParsePersistence(c.Recorded.Persistence) // "none" when unset
	if err != nil {
		return err
	}
	local, client, err := splitCPUs(s.LocalCPUs)
	if err != nil {
		return err
	}
	set, err := localmasters.Start(ctx, localmasters.Options{N: s.Local, Persistence: persist, Embedded: s.Embedded, Log: p.Log, CPUs: local})
	if err != nil {
		return err
	}
	m.Local = set
	if err := p.pinClient(m, local, client); err != nil {
		return err
	}
	m.Embedded, m.Version = set.Embedded(), set.Version()
	m.Addrs, m.Display = set.Addrs(), set.Addrs()
	return nil
}

// startReplicated starts the cell's replicated set: a master, its
// replicas and the Sentinels watching them, all with the cell's
// persistence and pinned with --local-cpus.
func (p *Pool) startReplicated(ctx context.Context, c plan.Cell, m *Masters) error {
	s, rec := c.Settings, c.Recorded
	persist, err := localmasters.ParsePersistence(rec.Persistence)
	if err != nil {
		return err
	}
	local, client, err := splitCPUs(s.LocalCPUs)
	if err != nil {
		return err
	}
	r, err := localmasters.StartReplicated(ctx, localmasters.ReplicatedOptions{
		Replicas: s.Replicas, Sentinels: s.Sentinels, MasterSet: rec.MasterSet,
		DownAfter: time.Duration(s.DownAfter), FailoverTimeout: time.Duration(s.FailoverTimeout),
		ReplicaPriority: s.ReplicaPriority, MinReplicasToWrite: s.MinReplicasToWrite,
		Persistence: persist, Log: p.Log, CPUs: local,
	})
	if err != nil {
		return err
	}
	m.Replicated, m.Version = r, r.Version()
	if err := p.pinClient(m, local, client); err != nil {
		return err
	}
	m.SentinelAddrs, m.MasterSet = r.SentinelAddrs(), r.MasterSet()
	m.Addrs, m.Display = []string{r.MasterAddr()}, []string{r.MasterAddr()}
	return nil
}

// splitCPUs is --local-cpus as the local servers' CPUs and lockbench's
// (none without it).
func splitCPUs(cpus string) (local, client []int, err error) {
	if cpus == "" {
		return nil, nil, nil
	}
	return localmasters.SplitCPUs(cpus)
}

// pinClient pins lockbench to client once the local servers run on local.
func (p *Pool) pinClient(m *Masters, local, client []int) error {
	m.LocalCPUs, m.ClientCPUs = local, client
	if len(client) == 0 {
		return nil
	}
	var err error
	p.unpin, err = pinSelf(client)
	return err
}

// Close stops the current servers (local masters, a fault cell's servers,
// proxies, temp dir) or restores external masters' settings.
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
	if m.Replicated != nil {
		errs = append(errs, m.Replicated.Stop())
	}
	if m.Service != nil {
		errs = append(errs, m.Service.Stop())
	}
	for _, s := range append([]*localmasters.Set{m.Local}, m.sets...) {
		if s != nil {
			errs = append(errs, s.Stop())
		}
	}
	if m.TempDir != "" {
		errs = append(errs, os.RemoveAll(m.TempDir))
	}
	if p.unpin != nil {
		errs = append(errs, p.unpin())
		p.unpin = nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, r := range m.restore {
		errs = append(errs, r(ctx))
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

// checkAndConfigure pings every external master (a clear error naming the
// address before any load) and, when a persistence mode is asked for, sets
// it with CONFIG SET and remembers how to restore the original.
func (m *Masters) checkAndConfigure(ctx context.Context, persistence string, tlsFiles engine.TLSFiles) error {
	for i, a := range m.Addrs {
		c, display, info, err := checkMaster(ctx, a, tlsFiles)
		if err != nil {
			return err
		}
		if i == 0 {
			m.Version = engine.ParseInfo(info)["redis_version"]
		}
		if persistence == "" {
			c.Close()
			continue
		}
		restore, err := setPersistence(ctx, c, display, persistence)
		if err != nil {
			c.Close()
			return err
		}
		m.restore = append(m.restore, restore)
	}
	return nil
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
