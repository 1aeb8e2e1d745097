package plan

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"lockbench/lock"
	"lockbench/results"
)

// Topology is what plan needs of a lock service, a topology of its own:
// its settings' checks, how many servers it runs and what a result
// records of them. Package service registers one for each service
// (Redis' three: redislock/redisplan, which also registers them itself
// for a program or test that runs plan alone). plan looks them up by name
// and names only the default's.
type Topology interface {
	Name() string
	// About says what it locks with, for --topology's help ("etcd's
	// concurrency.Mutex; --local members, default 3, or --etcd-endpoints").
	About() string
	// Check: the settings the service takes; each other one refused with
	// one line naming it.
	Check(s Settings) error
	// CheckFault: a fault kind the service cannot take, where naming it.
	CheckFault(where string, s Settings, f Fault) error
	// Members is how many local servers the cell starts: local as given,
	// or the service's own default.
	Members(s Settings) int
	// Record keeps in a result's settings what the servers ran on:
	// persistence, TTL (plan records the local count).
	Record(s Settings, out *results.Settings)
	// ServersKey says which cells can share the servers: those whose keys
	// are equal, of any topology (Redis' redlock and single share masters);
	// a service's starts with its name.
	ServersKey(s Settings) string
	// Describe is what the cell runs on, as the plan lists it.
	Describe(s Settings) string
	// ServersSetting is the service's own name for servers: (its
	// external servers), with its flag's usage; other topologies refuse
	// it.
	ServersSetting() ServersSetting
	// WaitStrategies are the waits its client has (wait_strategy).
	WaitStrategies() []string
	// Replicas is how many replicas of its own it can start (replicas:,
	// 0: none).
	Replicas() int
	// Roles says its servers are members with roles (a leader and
	// followers) that talk to each other: role: and link: members apply.
	Roles() bool
	// Designs are the ways lockbench choose deploys it.
	Designs() []Design

	// What a topology of its kind checks and records besides its own (a
	// lock service's: ServiceBase, which a service embeds).

	// CheckKind runs before Check: the client and server settings its
	// kind takes.
	CheckKind(s Settings) error
	// CheckClient: the lock client's settings (the engine's checks).
	CheckClient(s Settings) error
	// CheckFaultServers: a fault cell's servers and load, within bounds.
	CheckFaultServers(s Settings) error
	// FaultWarnings: fault-cell settings that work but may make the
	// checkers report what the faults did not cause.
	FaultWarnings(s Settings) []string
	// N is how many servers a lock reaches.
	N(s Settings) int
	// RecordKind runs before Record: what its kind keeps in a result.
	RecordKind(s Settings, out *results.Settings)
	// KeepsData says it can keep the protected counter itself, written
	// only under the lock (guarded_write).
	KeepsData() bool
	// Terms are the plan's mode and wait columns: Redlock's, or "-" and
	// the service's wait.
	Terms(s Settings) (mode, wait string)
	// KillWindow is what a kill of one of its servers opens: "election"
	// (members with roles), "recovery" (a server whose restart serves
	// again), "" (none timed).
	KillWindow(s Settings) string
}

var (
	topologyMu sync.RWMutex
	topologies = map[string]Topology{}
)

// RegisterTopology makes a service's topology known (package service's
// Register calls it).
func RegisterTopology(t Topology) {
	topologyMu.Lock()
	defer topologyMu.Unlock()
	topologies[t.Name()] = t
}

// DefaultTopology is the topology of a cell that names none: Redlock.
const DefaultTopology = "redlock"

// Ranked is a topology listed before the unranked ones, by its rank (Redis':
// the default's family first).
type Ranked interface{ Rank() int }

// rank is t's rank, -1 when it has none.
func rank(t Topology) int {
	if r, ok := t.(Ranked); ok {
		return r.Rank()
	}
	return -1
}

// topologyNamed is the registered topology named name (nil: none; ""
// names the default).
func topologyNamed(name string) Topology {
	if name == "" {
		name = DefaultTopology
	}
	topologyMu.RLock()
	defer topologyMu.RUnlock()
	return topologies[name]
}

// TopologyNamed is the registered topology named name (nil: none).
func TopologyNamed(name string) Topology { return topologyNamed(name) }

// Service is the lock service the cell locks on: an unknown name is
// the default's, until Validate refuses it (knownTopology).
func (s Settings) Service() Topology {
	if t := topologyNamed(s.Topology); t != nil {
		return t
	}
	return topologyNamed(DefaultTopology)
}

// knownTopology says the cell's topology is a registered one.
func (s Settings) knownTopology() bool { return topologyNamed(s.Topology) != nil }

// Roles says the cell locks on a cluster whose members have roles.
func (s Settings) Roles() bool {
	t := s.Service()
	return t != nil && t.Roles()
}

// ServiceBase is what every lock service but Redis shares: its own
// servers and its own client. A service's Topology embeds it, and writes
// only Name, About and Check itself: every other method here is a default
// it may replace (an optional capability).
type ServiceBase struct{}

// Members: local: as given, else one server.
func (ServiceBase) Members(s Settings) int { return s.LocalMembers(1) }

// Record: nothing of its own to keep in a result's settings.
func (ServiceBase) Record(Settings, *results.Settings) {}

// ServersKey: cells share servers only when every setting is the same
// (a service that knows which settings its servers depend on says so).
func (ServiceBase) ServersKey(s Settings) string { return fmt.Sprintf("%s|%+v", s.Topology, s) }

// Describe: the servers by their count.
func (ServiceBase) Describe(s Settings) string {
	if s.External() {
		return fmt.Sprintf("%s: %d given servers", s.Topology, len(s.Servers))
	}
	return fmt.Sprintf("%s: %d local servers", s.Topology, s.Service().Members(s))
}

// ServersSetting: no external servers of its own (servers: is refused).
func (ServiceBase) ServersSetting() ServersSetting { return ServersSetting{} }

// WaitStrategies: its client tries again (retry, backoff, spin).
func (ServiceBase) WaitStrategies() []string {
	return []string{lock.StrategyRetry, lock.StrategyBackoff, lock.StrategySpin}
}

// Replicas: none of its own.
func (ServiceBase) Replicas() int { return 0 }

// Roles: its servers are not members with roles.
func (ServiceBase) Roles() bool { return false }

// Designs: none in lockbench choose.
func (ServiceBase) Designs() []Design { return nil }

// CheckFault: without fault targets of its own (its servers' Targets),
// a fault cell can pause its clients only.
func (ServiceBase) CheckFault(where string, s Settings, f Fault) error {
	if f.Kind == results.FaultPause && len(f.Masters) == 0 && f.Role == "" {
		return nil
	}
	return fmt.Errorf("%s.kind: %s is not available with topology %s (its servers name no fault targets); use pause with client_index", where, f.Kind, s.Topology)
}

// CanServe: this machine can serve its cells (a service whose servers
// need a program says when it is missing).
func (ServiceBase) CanServe(Cell) error { return nil }

// CheckKind refuses the masters' client's settings.
func (ServiceBase) CheckKind(s Settings) error { return s.checkServiceClient(s.Service()) }

// CheckClient: the client's terms, as every lock client checks them (a
// service's own queue is retry to them).
func (ServiceBase) CheckClient(s Settings) error {
	t, err := s.clientTerms()
	if err != nil {
		return err
	}
	if t.Retry.Strategy == StrategyQueue {
		t.Retry.Strategy = lock.StrategyRetry
	}
	return lock.CheckTerms(t.TTL, t.Timeout, t.DriftFactor, t.Retry)
}

// CheckFaultServers: a fault cell starts its own servers (it crashes
// them).
func (ServiceBase) CheckFaultServers(s Settings) error {
	if err := s.checkServiceFaultServers(s.Service()); err != nil {
		return err
	}
	return s.CheckFaultLoad()
}

// FaultWarnings: none. Only Redis' lock expires at its TTL under a long
// hold: a service's is a session's, its lease kept alive while the
// holder lives.
func (ServiceBase) FaultWarnings(Settings) []string { return nil }

// N is the servers given, or the local ones it starts.
func (ServiceBase) N(s Settings) int { return s.serviceServers(s.Service()) }

// RecordKind: its local members (none of an external one's), the
// replicas it asked for and nothing of Redis' replicated set.
func (ServiceBase) RecordKind(s Settings, out *results.Settings) {
	out.Local = s.Service().Members(s)
	if s.External() {
		out.Local = 0 // the servers are not this run's
	}
	out.Replicas = s.ServiceReplicas()
	NotReplicated(out)
}

// KeepsData: a service keeps data, so it can keep the counter too.
func (ServiceBase) KeepsData() bool { return true }

// Terms: Redlock's terms do not apply; the service's wait does.
func (ServiceBase) Terms(s Settings) (string, string) { return "-", s.WaitStrategy }

// KillWindow: a member's kill is an election, one server's its restart.
func (ServiceBase) KillWindow(s Settings) string {
	if s.Roles() {
		return "election"
	}
	return "recovery"
}

// StrategyQueue is a service's own wait: its FIFO queue (etcd's
// revisions, ZooKeeper's sequence, PostgreSQL's lock queue).
const StrategyQueue = "queue"

// TopologyNames are the ranked topologies (Redis'), by rank, and then
// the other registered services', by name.
func TopologyNames() []string {
	topologyMu.RLock()
	defer topologyMu.RUnlock()
	return slices.SortedFunc(maps.Keys(topologies), func(a, b string) int {
		ra, rb := rank(topologies[a]), rank(topologies[b])
		if ra < 0 && rb < 0 {
			return strings.Compare(a, b)
		}
		return cmpRank(ra, rb)
	})
}

// cmpRank orders ranked topologies by their rank, before the others (-1).
func cmpRank(a, b int) int {
	switch {
	case a < 0:
		return 1
	case b < 0:
		return -1
	}
	return a - b
}

// ServersSetting is a service's own name for servers: ("etcd_endpoints"),
// a YAML key and a flag; Usage is the flag's. One: the service takes one
// server, as a URL its flag never splits (a multi-host URL has commas).
type ServersSetting struct {
	Name, Usage string
	One         bool
}

// serversAlias is "servers" when name is a service's own name for it.
func serversAlias(name string) (string, bool) {
	topologyMu.RLock()
	defer topologyMu.RUnlock()
	for _, t := range topologies {
		if t.ServersSetting().Name == name {
			return "servers", true
		}
	}
	return name, false
}

// checkServiceSettings refuses the servers of another service than the
// cell's (by its own name), servers: where its topology has none of its
// own, and member links without members.
func (s Settings) checkServiceSettings() error {
	svc := s.Service()
	for _, n := range TopologyNames() {
		if own := topologyNamed(n).ServersSetting().Name; own != "" && s.IsGiven(own) && svc.Name() != n {
			return fmt.Errorf("%s: needs topology %s; topology is %s", FlagName(own), n, s.TopologyOf())
		}
	}
	switch {
	case svc.ServersSetting().Name == "" && s.isSet("servers") && s.isSet("masters"):
		return fmt.Errorf("servers: are the masters here (topology %s names its servers masters); give servers or masters, not both", s.TopologyOf())
	case !s.Roles() && s.isSet("member_latency"):
		return fmt.Errorf("member-latency: %v needs topology %s (their members' links); topology is %s (use net-latency)", s.MemberLatency, roleTopologies(), s.TopologyOf())
	}
	return nil
}

// serversAsMasters makes servers, one word for any service's servers,
// Redis' masters where the topology is Redis' (its own name for them):
// --servers and servers: work for every service.
func (s *Settings) serversAsMasters() {
	if len(s.Servers) == 0 || len(s.Masters) > 0 || s.Service().ServersSetting().Name != "" {
		return
	}
	for _, n := range serverTopologies() {
		if s.IsGiven(topologyNamed(n).ServersSetting().Name) {
			return // another service's servers by their own name: checkServiceSettings says so
		}
	}
	s.Masters, s.Servers = s.Servers, nil
	s.Given = maps.Clone(s.Given) // a copy's marks must not reach the settings it was copied from
	delete(s.Given, "servers")
	s.MarkGiven("masters")
}

// isSet says the setting named name (its YAML name) was given or differs
// from its zero value.
func (s Settings) isSet(name string) bool {
	if s.IsGiven(name) {
		return true
	}
	v := reflect.ValueOf(s)
	for i := range v.NumField() {
		if strings.Split(v.Type().Field(i).Tag.Get("yaml"), ",")[0] == name {
			return !v.Field(i).IsZero()
		}
	}
	return false
}

// topologiesWith are the registered topologies that have has, in
// TopologyNames' order.
func topologiesWith(has func(Topology) bool) []string {
	var out []string
	for _, n := range TopologyNames() {
		if has(topologyNamed(n)) {
			out = append(out, n)
		}
	}
	return out
}

// masterTopologies names those whose servers are masters: (no name of
// their own for servers:), whose client takes driver, mode, wait and the
// per-master settings.
func masterTopologies() string {
	return orList(topologiesWith(func(t Topology) bool { return t.ServersSetting().Name == "" }))
}

// orList is names as a sentence lists them: "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// serverTopologies are those that take servers: (a lock service's own).
func serverTopologies() []string {
	return topologiesWith(func(t Topology) bool { return t.ServersSetting().Name != "" })
}

// dataTopologies are those that keep data (guarded_write).
func dataTopologies() string {
	return strings.Join(topologiesWith(Topology.KeepsData), ", ")
}

// roleTopologies names the services whose members have roles.
func roleTopologies() string {
	return strings.Join(topologiesWith(Topology.Roles), " or ")
}

// checkServiceClient refuses the masters' client's settings in a service
// cell (the service has a client of its own), and a wait strategy it has
// not.
func (s Settings) checkServiceClient(t Topology) error {
	d, name := Defaults(), t.Name()
	switch {
	case len(s.Masters) > 0:
		return fmt.Errorf("masters: topology %s locks on its own servers; give its external servers (%s) or local: M, not masters (those of topology %s)", name, FlagName(t.ServersSetting().Name), masterTopologies())
	case s.Client != "":
		return fmt.Errorf("client: an adapter runs on the servers of topology %s; topology %s has its own client", strings.Join(slices.Sorted(maps.Keys(clientBases)), " or "), name)
	case s.Driver != d.Driver || s.IsGiven("driver"):
		return fmt.Errorf("driver: %s is a client of topology %s; topology %s uses its own client (leave driver unset)", s.Driver, masterTopologies(), name)
	case s.Mode != d.Mode || s.Wait != d.Wait || s.IsGiven("mode") || s.IsGiven("wait"):
		return fmt.Errorf("mode/wait: %s/%s are Redlock's (masters one after another or at once); topology %s has one quorum of its own (leave them unset)", s.Mode, s.Wait, name)
	case s.Embedded == "always":
		return fmt.Errorf("embedded: always is not accepted with topology %s; it runs real servers", name)
	case s.NetLatency > 0:
		return fmt.Errorf("net-latency: not yet with topology %s (the proxy stands in front of masters only)", name)
	case s.LocalCPUs != "":
		return fmt.Errorf("local-cpus: not yet with topology %s (it pins local masters only)", name)
	case s.AutoExtend:
		return fmt.Errorf("auto-extend: not with topology %s; its session keeps its lock by itself", name)
	case s.Watchdog:
		return fmt.Errorf("watchdog: not with topology %s; its session keeps its lock by itself", name)
	case s.WaitReplicas != 0:
		return fmt.Errorf("wait-replicas: %d needs topology replicated; topology %s commits each write itself", s.WaitReplicas, name)
	}
	if n := s.masterClientGiven(); n != "" {
		return fmt.Errorf("%s: is the masters' client's (topology %s); topology %s does not take it (its calls have no per-master timeout, drift or batching: leave it unset)", FlagName(n), masterTopologies(), name)
	}
	if !slices.Contains(t.WaitStrategies(), s.WaitStrategy) {
		return fmt.Errorf("wait-strategy: %q is not accepted with topology %s; use %s", s.WaitStrategy, name, strings.Join(t.WaitStrategies(), ", "))
	}
	return nil
}

// masterClientGiven is the first setting of the masters' client given
// (or set off its default) in a service cell; "" when none.
func (s Settings) masterClientGiven() string {
	d := Defaults()
	for _, r := range []struct {
		name    string
		differs bool
	}{
		{"timeout", s.Timeout != d.Timeout}, {"drift_factor", s.DriftFactor != d.DriftFactor}, {"batch", s.Batch != d.Batch},
		{"dispatchers", s.Dispatchers != d.Dispatchers}, {"flush_delay", s.FlushDelay != d.FlushDelay},
		{"notify_timeout", s.NotifyTimeout != d.NotifyTimeout},
	} {
		if r.differs || s.IsGiven(r.name) {
			return r.name
		}
	}
	return ""
}

// ServicePersistence is a service cell's persistence as given: "" for
// unset (a fault scenario's default, Redis' none, counts as unset).
func (s Settings) ServicePersistence() string {
	if s.Persistence == "none" && !s.IsGiven("persistence") {
		return ""
	}
	return s.Persistence
}

// LocalMembers is a service's local servers: local as given, def when
// local was not given (its default is Redis' 5 masters).
func (s Settings) LocalMembers(def int) int {
	if !s.IsGiven("local") {
		return def
	}
	return s.Local
}

// External says a service cell's servers are someone else's: their
// addresses were given (servers:), nothing is started here.
func (s Settings) External() bool { return len(s.Servers) > 0 }

// FsyncPersistence is what a result records of a service that fsyncs
// every write or not: fsync when unset (its default), "" for external
// servers (theirs to say).
func (s Settings) FsyncPersistence() string {
	switch p := s.ServicePersistence(); {
	case s.External():
		return ""
	case p == "":
		return "fsync"
	default:
		return p
	}
}

// serviceServers is how many servers a service cell's lock reaches.
func (s Settings) serviceServers(t Topology) int {
	if s.External() {
		return len(s.Servers)
	}
	return t.Members(s)
}

// checkServiceFaultServers: a fault cell starts its own servers (it
// crashes them).
func (s Settings) checkServiceFaultServers(t Topology) error {
	if s.External() {
		return fmt.Errorf("%s: a fault scenario starts its own %s servers (it crashes them); use local: M, not external ones", FlagName(t.ServersSetting().Name), t.Name())
	}
	return nil
}

// ServiceReplicas is how many replicas a service cell asked for: replicas
// as given, 0 when not given (its default is a replicated set's).
func (s Settings) ServiceReplicas() int {
	if !s.IsGiven("replicas") {
		return 0
	}
	return s.Replicas
}

// ServersName is how a message names the servers the user gave: by the
// service's own name (own) when given so, else servers.
func (s Settings) ServersName(own string) string {
	if s.IsGiven(own) {
		return FlagName(own)
	}
	return "servers"
}

// Labeler is a topology that names its cells on report pages itself,
// from what a result recorded (Redis': "redlock (multiplexed)", "1 master
// + 2 replicas, 3 Sentinels"); one without is named by its servers' count.
type Labeler interface {
	Labels(rec results.Settings, servers int) Labels
}

// Labels are a topology's names for one cell on report pages; "": the
// generic one.
type Labels struct {
	Topology string // what sets it apart: "redlock (multiplexed)", "replicated, WAIT 1"
	Servers  string // what it ran on: "1 master + 2 replicas, 3 Sentinels"
	Short    string // two short lines, for a plot's axis
	Mode     string // the client's mode, kept with the cell's price ("": none)
	// Wait is how its callers waited where its client waits its own way
	// and takes no wait_strategy ("": as wait_strategy says).
	Wait string
	// Reference: the price table's ratios are to this topology's cells
	// (one server alone: Redis' single master).
	Reference bool
}

// LabelsOf are the labels the topology named name ("": the default)
// gives a cell; none when it is not registered or names none.
func LabelsOf(name string, rec results.Settings, servers int) Labels {
	if l, ok := topologyNamed(name).(Labeler); ok {
		return l.Labels(rec, servers)
	}
	return Labels{}
}

// GivenServers is a topology whose servers may be someone else's by
// settings of its own (Redis: masters:, a replicated set's
// sentinel_addrs:): nothing is started here then.
type GivenServers interface {
	GivenServers(s Settings) bool
}

// serversGiven says the cell's servers are not started here, by its
// topology's own settings (masters: where it has none of its own).
func (s Settings) serversGiven() bool {
	if g, ok := s.Service().(GivenServers); ok {
		return g.GivenServers(s)
	}
	return len(s.Masters) > 0
}

// RoleTargets is a topology whose faults can name its replicas and
// monitors by index (replica_index, sentinel_index).
type RoleTargets interface {
	RoleTargets() bool
}

// roleTargetTopologies names the topologies whose faults take
// replica_index and sentinel_index.
func roleTargetTopologies() string {
	return strings.Join(topologiesWith(hasRoleTargets), " or ")
}

// hasRoleTargets says t's faults take replica_index and sentinel_index.
func hasRoleTargets(t Topology) bool {
	r, ok := t.(RoleTargets)
	return ok && r.RoleTargets()
}

// MemberLinker is a topology without roles whose members still talk to
// each other over links a fault can cut (a Redis Cluster's bus): it takes
// a partition with link: members, by master_index.
type MemberLinker interface {
	CutsMemberLinks() bool
}

// cutsMemberLinks says t takes a partition with link: members: a
// topology with roles does, or one that says so.
func cutsMemberLinks(t Topology) bool {
	if l, ok := t.(MemberLinker); ok && l.CutsMemberLinks() {
		return true
	}
	return t.Roles()
}

// memberLinkTopologies names the topologies that take link: members.
func memberLinkTopologies() string {
	return strings.Join(topologiesWith(cutsMemberLinks), " or ")
}

// SlowStart is a topology whose servers take longer to start than a
// plain server set (plan's guess: 2 s): ExtraStart is how much more
// (Redis' replicated set: its replicas sync, its Sentinels find each
// other).
type SlowStart interface {
	ExtraStart(s Settings) time.Duration
}

// extraStart is the cell's topology's extra start time (0: none).
func (s Settings) extraStart() time.Duration {
	if t, ok := s.Service().(SlowStart); ok {
		return t.ExtraStart(s)
	}
	return 0
}
