package redislock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"lockbench/adapter"
	"lockbench/faults"
	"lockbench/internal/affinity"
	"lockbench/internal/redisserver"
	"lockbench/plan"
	"lockbench/pool"
	"lockbench/redislock/engine"
	"lockbench/redislock/localmasters"
	"lockbench/redislock/redisplan"
	"lockbench/redislock/rueidislockdriver"
	"lockbench/results"
	"lockbench/service"
)

// redisService is one of Redis' topologies as a registered lock service:
// its settings (redisplan), redis-server masters (local, external, a
// replicated set) and the engine as its client.
type redisService struct{ plan.Topology }

func init() {
	for _, t := range redisplan.Topologies() {
		service.Register(redisService{t})
	}
	// Results and manifests written before server_version kept the
	// masters' version bare under this key.
	results.RegisterLegacyVersion(results.LegacyVersion{Key: "redis_server_version", Server: redisServer})
}

// redisServer names Redis' servers in a server version.
const redisServer = "redis-server"

// redisServerVersion is v (INFO's redis_version) as a server version.
func redisServerVersion(v string) string { return redisServer + " " + v }

// Rank: Redis' topologies are listed first, in their order.
func (r redisService) Rank() int { return r.Topology.(plan.Ranked).Rank() }

// Owns: replicated's settings, and a cluster's WAIT settings, are their
// own (plan.SettingsOwner).
func (r redisService) Owns(setting string) bool {
	return r.Topology.(plan.SettingsOwner).Owns(setting)
}

// Labels: Redis' names for its cells on report pages (plan.Labeler).
func (r redisService) Labels(rec results.Settings, servers int) plan.Labels {
	return r.Topology.(plan.Labeler).Labels(rec, servers)
}

// GivenServers: masters or Sentinels given (plan.GivenServers).
func (r redisService) GivenServers(s plan.Settings) bool {
	return r.Topology.(plan.GivenServers).GivenServers(s)
}

// RoleTargets: a replicated set's replicas and Sentinels (plan.RoleTargets).
func (r redisService) RoleTargets() bool { return r.Topology.(plan.RoleTargets).RoleTargets() }

// CutsMemberLinks: a cluster's bus (plan.MemberLinker).
func (r redisService) CutsMemberLinks() bool { return r.Topology.(plan.MemberLinker).CutsMemberLinks() }

// Absences: the matrix faults its designs take no cell of (plan.Absent).
func (r redisService) Absences() map[string]plan.Absence {
	return r.Topology.(plan.Absent).Absences()
}

// ExtraStart: a replicated set's start (plan.SlowStart).
func (r redisService) ExtraStart(s plan.Settings) time.Duration {
	return r.Topology.(plan.SlowStart).ExtraStart(s)
}

// CanServe: a persistence mode and pinning need real redis-server
// masters, which embedded masters (used when redis-server is missing) are
// not; a fault cell needs real masters it can kill, a local replicated set
// real replicas and Sentinels, and a clock jump libfaketime (pool.MissingTool).
// The messages name the setting where one is to blame.
func (redisService) CanServe(c plan.Cell) error {
	s := c.Settings
	if s.Client != "" {
		if err := adapter.CheckCommand(adapter.SplitCommand(s.Client)); err != nil {
			return err // bad input: the program is the user's, not one this machine lacks
		}
	}
	_, found := redisserver.Path()
	embedded := s.Embedded == "always" || (s.Embedded == "auto" && !found)
	switch {
	case c.OwnServers() && !found:
		return pool.MissingTool{Err: fmt.Errorf("redis-server not found in PATH; chaos needs real masters it can kill (apt-get install redis-server)")}
	case len(c.ClockMasters()) > 0:
		if err := faults.FaketimeAvailable(); err != nil {
			return pool.MissingTool{Err: fmt.Errorf("clock_jump: %w", err)}
		}
	case redisplan.ExternalSentinels(s), len(s.Masters) > 0:
	case redisplan.Replicated(s) && !found:
		return pool.MissingTool{Err: fmt.Errorf("redis-server not found in PATH; topology replicated runs real redis-server replicas and Sentinels (apt-get install redis-server)")}
	case isCluster(s) && !found:
		return pool.MissingTool{Err: fmt.Errorf("redis-server not found in PATH; topology cluster runs real cluster-enabled redis-server nodes (apt-get install redis-server)")}
	case s.Persistence != "" && s.Persistence != "none" && embedded:
		return fmt.Errorf("persistence: %q needs real redis-server masters; embedded masters (used when redis-server is missing) support only none", s.Persistence)
	case s.LocalCPUs != "" && embedded:
		return fmt.Errorf("local-cpus: needs real redis-server masters; embedded masters run inside lockbench and cannot be pinned apart")
	case s.LocalCPUs != "":
		_, _, err := affinity.SplitCPUs(s.LocalCPUs)
		return err
	}
	return nil
}

// Start gets cell c's masters ready: a fault cell's own (each in a set of
// its own, so that one can run under a fake clock, or its replicated
// set), a local replicated set or local masters (pinned with
// --local-cpus), an external set's Sentinels, or external masters (with
// the cell's persistence, restored when they stop).
func (redisService) Start(ctx context.Context, c plan.Cell, log io.Writer) (_ service.Servers, err error) {
	s := c.Settings
	r := &RedisServers{log: log}
	defer func() {
		if err != nil {
			err = errors.Join(err, r.Stop())
		}
	}()
	switch {
	case isCluster(s) && len(s.Masters) == 0:
		err = r.startCluster(ctx, c)
	case isCluster(s):
		r.addrs, r.display, r.cluster = s.Masters, s.Masters, true // an external cluster's nodes: the seeds the engine discovers it from
	case c.OwnServers():
		mctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		err = r.startFaultMasters(mctx, c)
		r.display, r.Embedded = r.addrs, false
	case redisplan.ExternalSentinels(s):
		r.SentinelAddrs, r.MasterSet = s.SentinelAddrs, s.MasterSet
		r.display = []string{s.MasterSet + " (via Sentinel)"} // its master's address is Sentinel's to tell; the engine checks them as it connects
	case redisplan.Replicated(s):
		err = r.startReplicated(ctx, c)
	case len(s.Masters) == 0:
		err = r.startLocal(ctx, c)
	default:
		err = r.takeMasters(ctx, c)
	}
	return r, err
}

// NewClient is the engine on the configuration ClientConfig made.
func (redisService) NewClient(ctx context.Context, raw json.RawMessage) (service.Client, error) {
	var cc clientConfig
	if err := json.Unmarshal(raw, &cc); err != nil {
		return nil, fmt.Errorf("redis client config: %w", err)
	}
	cfg := cc.Config
	if cc.Client != "" {
		a, err := startAdapter(ctx, cc.Client, cfg, cc.Workers)
		if err != nil {
			return nil, err
		}
		return &adapterClient{Client: a, cfg: cfg}, nil
	}
	if cfg.Driver == rueidislockdriver.Name {
		return rueidislockdriver.New(ctx, cfg)
	}
	eng, err := engine.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &RedisClient{Engine: eng}, nil
}

// RedisClient is the engine as a lock service's client: its CountKeys,
// Put, Delete, RPCs and Record are service.Client's; its benchmark cell's
// readings (cell.go) are pool's capabilities, the engine's own.
type RedisClient struct {
	*engine.Engine
	// What the cell learnt as it opened: the workers' lock, a cluster's
	// shards (nil otherwise: per-server rows are theirs), embedded
	// masters, an external client's adapter (its library, its process).
	lk       cellLocker
	shards   []engine.Shard
	embedded bool
	adapter  *adapter.Client
}

// CountKeys counts the keys under prefix on every master.
func (c *RedisClient) CountKeys(ctx context.Context, prefix string) (int64, error) {
	var total int64
	for i, addr := range c.Addrs() {
		n, err := c.Engine.CountKeys(ctx, i, prefix)
		if err != nil {
			return 0, fmt.Errorf("master %s: %w", addr, err)
		}
		total += int64(n)
	}
	return total, nil
}

// Put is the engine's plain SET round trip on every master at once.
func (c *RedisClient) Put(ctx context.Context, key string) error {
	_, err := c.BaselineParallel(ctx, key, 1)
	return err
}

// Delete: the baseline's keys expire by themselves.
func (*RedisClient) Delete(context.Context, string) error { return nil }

// RPCs are the commands the engine sent.
func (c *RedisClient) RPCs() int64 { return c.Commands().Total() }

// Record: the engine's figures are the result's own fields.
func (*RedisClient) Record(*results.ServiceSettings) {}

// RedisServers are a cell's Redis masters, ready: their addresses and,
// for local ones, their processes; a fault cell's masters each in a set
// of its own with a fake clock per master it jumps; a replicated set's
// Sentinels and its processes when it is this run's.
type RedisServers struct {
	log            io.Writer
	addrs, display []string // what the engine dials (external: as given, with credentials), and without secrets
	cluster        bool     // a Redis Cluster's nodes (local or given)
	version        string   // redis_version from INFO (first master)
	Local          *localmasters.Set
	Embedded       bool
	restore        []func(context.Context) error

	// LocalCPUs pin the local masters and ClientCPUs lockbench (--local-cpus).
	LocalCPUs, ClientCPUs []int
	unpin                 func() error

	servers  []*localmasters.Master // a fault cell's, each of its own set
	clocks   map[int]*faults.Clock
	sets     []*localmasters.Set
	clockDir string

	// A replicated cell's: the Sentinels the engine asks for the master
	// of MasterSet, and the local set when it is this run's (nil for an
	// external one). addrs are then the master's address.
	SentinelAddrs []string
	MasterSet     string
	Replicated    *localmasters.Replicated

	// Cluster is a local Redis Cluster when the cell runs on one (addrs
	// are then its nodes, the engine's seeds).
	Cluster *localmasters.Cluster
}

func (r *RedisServers) Display() []string                              { return r.display }
func (r *RedisServers) Version() string                                { return r.version }
func (r *RedisServers) Trees() bool                                    { return false }
func (r *RedisServers) Upstreams() []string                            { return r.addrs }
func (r *RedisServers) WatchSessionEnds() (service.SessionEnds, error) { return nil, nil } // no sessions

// Quorum is Redlock's majority of the masters (a replicated set has one;
// a cluster's lock is one key on one shard).
func (r *RedisServers) Quorum() int {
	if r.cluster {
		return 1
	}
	return engine.Quorum(len(r.addrs))
}

// Pids are the local masters' and a replicated set's processes.
func (r *RedisServers) Pids() []int {
	var out []int
	for _, s := range append([]*localmasters.Set{r.Local}, r.sets...) {
		if s != nil {
			out = append(out, pidsOf(s.Masters())...)
		}
	}
	out = append(out, pidsOf(r.replicatedProcesses())...)
	if r.Cluster != nil {
		out = append(out, pidsOf(r.Cluster.Nodes())...)
	}
	return out
}

// Record: the masters' version, their quorum, and whether they were
// embedded.
func (r *RedisServers) Record(cc *results.CellConfig, _ results.Settings) {
	cc.Quorum, cc.Embedded = r.Quorum(), r.Embedded
	if r.version != "" {
		cc.ServerVersion = redisServerVersion(r.version)
	}
	if len(r.SentinelAddrs) > 0 {
		cc.SentinelAddrs = nil
		for _, a := range r.SentinelAddrs {
			cc.SentinelAddrs = append(cc.SentinelAddrs, engine.RedactURL(a))
		}
	}
}

// ClientConfig is the cell's engine configuration pointed at these
// masters as a client dials them: via its proxies, or the Sentinels.
func (r *RedisServers) ClientConfig(c plan.Cell, via []string) (json.RawMessage, error) {
	return json.Marshal(clientConfig{Config: r.LockConfig(engineConfig(c), via), Client: c.Settings.Client, Workers: c.Settings.Workers})
}

// LockConfig is cfg pointed at the masters (via: through these proxies),
// or at the Sentinels.
func (r *RedisServers) LockConfig(cfg engine.Config, via []string) engine.Config {
	if cfg.Topology == engine.Replicated {
		cfg.SentinelAddrs, cfg.MasterSet = r.SentinelAddrs, r.MasterSet
		return cfg
	}
	cfg.Masters = r.addrs
	if via != nil {
		cfg.Masters = via
	}
	return cfg
}

// Targets are the masters (crash, pause), their clocks and a replicated
// set's processes; the addresses they listen on.
func (r *RedisServers) Targets(_ plan.Cell, t *faults.Targets) []string {
	for _, sm := range r.servers {
		t.Masters = append(t.Masters, sm)
	}
	t.Clocks = r.clocks
	if c := r.Cluster; c != nil {
		return r.clusterTargets(t)
	}
	addrs := slices.Clone(r.addrs)
	if set := r.Replicated; set != nil {
		t.Replicas, t.Monitors = processes(set.Replicas()), processes(set.Sentinels())
		t.Replication, t.Failover = set, sentinelSet{set}
		addrs = append(addrs, append(set.ReplicaAddrs(), set.SentinelAddrs()...)...)
	}
	return addrs
}

// sentinelSet is a replicated set's failover as faults see it: Sentinel
// promotes a replica, and its kills and +switch-master announcements are
// the failover's log.
type sentinelSet struct{ *localmasters.Replicated }

func (s sentinelSet) PrimaryKills() []faults.PrimaryKill {
	var out []faults.PrimaryKill
	for _, k := range s.Kills() {
		out = append(out, faults.PrimaryKill{At: k.At, Reaped: k.Reaped})
	}
	return out
}

func (s sentinelSet) Promotions() []faults.Promotion {
	var out []faults.Promotion
	for _, sw := range s.Switches() {
		out = append(out, faults.Promotion{At: sw.At, From: sw.From, To: sw.To, Detail: "+switch-master, first from sentinel " + sw.Sentinel})
	}
	return out
}

// processes are a replicated set's replicas or Sentinels as faults act
// on them.
func processes(ms []*localmasters.Master) []faults.Process {
	out := make([]faults.Process, len(ms))
	for i, m := range ms {
		out[i] = m
	}
	return out
}

// Describe is a fault cell's servers as its log line says them.
func (r *RedisServers) Describe() string {
	if c := r.Cluster; c != nil {
		return fmt.Sprintf("cluster masters %s, replicas %s (pids %s)", strings.Join(c.MasterAddrs(), " "),
			strings.Join(addrsOfNodes(c.Replicas()), " "), service.PidList(pidsOf(c.Nodes())))
	}
	if set := r.Replicated; set != nil {
		return fmt.Sprintf("master %s, replicas %s, sentinels %s (pids %s)", set.MasterAddr(), strings.Join(set.ReplicaAddrs(), " "),
			strings.Join(set.SentinelAddrs(), " "), service.PidList(pidsOf(r.replicatedProcesses())))
	}
	return fmt.Sprintf("masters %s (pids %s)", strings.Join(r.addrs, " "), service.PidList(pidsOf(r.servers)))
}

// replicatedProcesses are a local replicated set's master, replicas and
// Sentinels (none without one).
func (r *RedisServers) replicatedProcesses() []*localmasters.Master {
	set := r.Replicated
	if set == nil {
		return nil
	}
	return append(append([]*localmasters.Master{set.Master()}, set.Replicas()...), set.Sentinels()...)
}

// Stop stops the local masters and sets, removes the clocks' dir, unpins
// lockbench and restores external masters' persistence.
func (r *RedisServers) Stop() error {
	var errs []error
	if r.Replicated != nil {
		errs = append(errs, r.Replicated.Stop())
	}
	if r.Cluster != nil {
		errs = append(errs, r.Cluster.Stop())
	}
	for _, s := range append([]*localmasters.Set{r.Local}, r.sets...) {
		if s != nil {
			errs = append(errs, s.Stop())
		}
	}
	if r.clockDir != "" {
		errs = append(errs, os.RemoveAll(r.clockDir))
	}
	if r.unpin != nil {
		errs = append(errs, r.unpin())
		r.unpin = nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, rs := range r.restore {
		errs = append(errs, rs(ctx))
	}
	r.restore = nil
	return errors.Join(errs...)
}

// takeMasters takes external masters: each checked, with the cell's
// persistence set.
func (r *RedisServers) takeMasters(ctx context.Context, c plan.Cell) error {
	for _, a := range c.Settings.Masters {
		_, display, err := engine.ParseMaster(a)
		if err != nil {
			return err
		}
		r.addrs = append(r.addrs, a)
		r.display = append(r.display, display)
	}
	return r.checkAndConfigure(ctx, c.Settings.Persistence, c.Terms.TLS)
}

// startLocal starts the cell's local masters, pinned with --local-cpus.
func (r *RedisServers) startLocal(ctx context.Context, c plan.Cell) error {
	s := c.Settings
	persist, err := localmasters.ParsePersistence(c.Recorded.Persistence) // "none" when unset
	if err != nil {
		return err
	}
	local, client, err := splitCPUs(s.LocalCPUs)
	if err != nil {
		return err
	}
	set, err := localmasters.Start(ctx, localmasters.Options{N: s.Local, Persistence: persist, Embedded: s.Embedded, Log: r.log, CPUs: local})
	if err != nil {
		return err
	}
	r.Local = set
	if err := r.pinClient(local, client); err != nil {
		return err
	}
	r.Embedded, r.version = set.Embedded(), set.Version()
	r.addrs, r.display = set.Addrs(), set.Addrs()
	return nil
}

// startReplicated starts the cell's replicated set: a master, its
// replicas and the Sentinels watching them, all with the cell's
// persistence and pinned with --local-cpus.
func (r *RedisServers) startReplicated(ctx context.Context, c plan.Cell) error {
	s, rec := c.Settings, c.Recorded
	persist, err := localmasters.ParsePersistence(rec.Persistence)
	if err != nil {
		return err
	}
	local, client, err := splitCPUs(s.LocalCPUs)
	if err != nil {
		return err
	}
	set, err := localmasters.StartReplicated(ctx, localmasters.ReplicatedOptions{
		Replicas: s.Replicas, Sentinels: s.Sentinels, MasterSet: rec.MasterSet,
		DownAfter: time.Duration(s.DownAfter), FailoverTimeout: time.Duration(s.FailoverTimeout),
		ReplicaPriority: s.ReplicaPriority, MinReplicasToWrite: s.MinReplicasToWrite,
		Persistence: persist, Log: r.log, CPUs: local,
	})
	if err != nil {
		return err
	}
	r.Replicated, r.version = set, set.Version()
	if err := r.pinClient(local, client); err != nil {
		return err
	}
	r.SentinelAddrs, r.MasterSet = set.SentinelAddrs(), set.MasterSet()
	r.addrs, r.display = []string{set.MasterAddr()}, []string{set.MasterAddr()}
	return nil
}

// startFaultMasters starts a fault cell's lock servers: each master in a
// set of its own, or its replicated set (whose master is then its one
// master: a crash of master 0 kills the process started as master).
func (r *RedisServers) startFaultMasters(ctx context.Context, c plan.Cell) error {
	s := c.Settings
	r.clocks = map[int]*faults.Clock{}
	if redisplan.Replicated(s) {
		if err := r.startReplicated(ctx, c); err != nil {
			return err
		}
		r.servers = []*localmasters.Master{r.Replicated.Master()}
		return nil
	}
	persist, err := localmasters.ParsePersistence(s.Persistence)
	if err != nil {
		return err
	}
	clockMasters := c.ClockMasters()
	for i := range s.Local {
		if err := r.startFaultMaster(ctx, i, persist, clockMasters[i]); err != nil {
			return fmt.Errorf("master %d: %w", i, err)
		}
	}
	return nil
}

// startFaultMaster starts master i of a fault cell, under a fake clock of
// its own when a fault jumps it.
func (r *RedisServers) startFaultMaster(ctx context.Context, i int, persist localmasters.Persistence, clock bool) error {
	var env []string
	if clock {
		c, err := r.newClock()
		if err != nil {
			return err
		}
		if env, err = c.Env(); err != nil {
			return err
		}
		r.clocks[i] = c
	}
	set, err := localmasters.Start(ctx, localmasters.Options{N: 1, Persistence: persist, Embedded: "never", Env: env})
	if err != nil {
		return err
	}
	r.sets = append(r.sets, set)
	r.servers = append(r.servers, set.Masters()[0])
	r.addrs = append(r.addrs, set.Addrs()[0])
	if r.version == "" {
		r.version = set.Version()
	}
	return nil
}

// newClock is a fake clock in the servers' own temp dir.
func (r *RedisServers) newClock() (*faults.Clock, error) {
	if r.clockDir == "" {
		dir, err := os.MkdirTemp("", "lockbench-clocks-*")
		if err != nil {
			return nil, err
		}
		r.clockDir = dir
	}
	return faults.NewClock(r.clockDir)
}

// pinClient pins lockbench to client once the local servers run on local.
func (r *RedisServers) pinClient(local, client []int) error {
	r.LocalCPUs, r.ClientCPUs = local, client
	if len(client) == 0 {
		return nil
	}
	var err error
	r.unpin, err = pinSelf(client)
	return err
}

// checkAndConfigure pings every external master (a clear error naming the
// address before any load) and, when a persistence mode is asked for, sets
// it with CONFIG SET and remembers how to restore the original.
func (r *RedisServers) checkAndConfigure(ctx context.Context, persistence string, tlsFiles engine.TLSFiles) error {
	for i, a := range r.addrs {
		c, display, info, err := checkMaster(ctx, a, tlsFiles)
		if err != nil {
			return err
		}
		if i == 0 {
			r.version = engine.ParseInfo(info)["redis_version"]
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
		r.restore = append(r.restore, restore)
	}
	return nil
}

// engineConfig is the engine's configuration for cell c, its masters not
// set (LockConfig points it at the servers): its settings were checked
// when the cell was made.
func engineConfig(c plan.Cell) engine.Config {
	cfg, _ := redisplan.EngineConfig(c.Settings)
	return cfg
}
