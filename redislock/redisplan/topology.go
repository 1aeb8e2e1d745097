// Package redisplan is Redis' part of the plan: its four topologies
// (Redlock on N masters, one master, a master with replicas behind
// Sentinel, a Redis Cluster) as plan.Topology, their settings' checks and designs, and the
// engine's configuration a cell's settings make. Its init registers them
// with plan; package redislock registers them as lock services. A test
// that runs plan on Redis' topologies imports it (blank).
package redisplan

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"lockbench/plan"
	"lockbench/redislock/engine"
	"lockbench/results"
)

// topologies are Redis' own, in the order help lists them (Rank).
var topologies = []topology{
	{engine.Redlock, "N independent masters"},
	{engine.Single, "one master"},
	{engine.Replicated, "a master with replicas behind Sentinel"},
	{engine.Cluster, "a Redis Cluster: --local masters (default 3), --replicas each (default 1); a lock is one key on its slot's shard"},
}

// Topologies are Redis' topologies, in the order help lists them.
func Topologies() []plan.Topology {
	var out []plan.Topology
	for _, t := range topologies {
		out = append(out, t)
	}
	return out
}

func init() {
	for _, t := range topologies {
		plan.RegisterTopology(t)
	}
}

// topology is one of Redis' topologies, registered as every lock
// service's is: the engine is its client, redis-server its servers.
type topology struct {
	t     engine.Topology
	about string
}

func (r topology) Name() string                              { return string(r.t) }
func (r topology) About() string                             { return r.about }
func (r topology) Rank() int                                 { return slices.Index(topologies, r) }
func (topology) ServersSetting() plan.ServersSetting         { return plan.ServersSetting{} } // masters: are its own
func (topology) WaitStrategies() []string                    { return engine.WaitStrategies }
func (topology) Roles() bool                                 { return false }
func (topology) KeepsData() bool                             { return false }
func (topology) CheckKind(plan.Settings) error               { return nil }
func (topology) Terms(s plan.Settings) (mode, wait string)   { return s.Mode, s.Wait }
func (topology) KillWindow(plan.Settings) string             { return "" } // a master's restart is not timed
func (topology) RecordKind(plan.Settings, *results.Settings) {}

// CutsMemberLinks: a cluster's nodes talk over the cluster bus, which a
// partition with link: members cuts for one shard's master.
func (r topology) CutsMemberLinks() bool { return r.t == engine.Cluster }

// Replicas: a cluster's per master (replicas:, up to 3); replicated's are
// its set's, not replicas: of its own.
func (r topology) Replicas() int {
	if r.t == engine.Cluster {
		return maxClusterReplicas
	}
	return 0
}

// Members: the local masters (a cluster's: 3 unless local: is given).
func (r topology) Members(s plan.Settings) int {
	if r.t == engine.Cluster {
		return clusterMasters(s)
	}
	return s.Local
}

// Owns: replicated's settings are its own, and a cluster's WAIT settings
// (plan.SettingsOwner).
func (r topology) Owns(setting string) bool {
	return r.t == engine.Replicated || r.t == engine.Cluster && (setting == "wait-replicas" || setting == "wait-timeout")
}

// Designs are this topology's designs among Redis' (designs).
func (r topology) Designs() []plan.Design {
	return slices.DeleteFunc(slices.Clone(designs), func(d plan.Design) bool {
		return !strings.HasPrefix(d.Settings, "topology: "+r.Name()+",")
	})
}

// Check: the masters given, and the topology's own settings.
func (r topology) Check(s plan.Settings) error {
	if err := checkMasters(s); err != nil {
		return err
	}
	if s.LocalCPUs != "" && s.Embedded == "always" {
		return fmt.Errorf("local-cpus: needs real redis-server masters; embedded masters run inside lockbench and cannot be pinned apart")
	}
	switch r.t {
	case engine.Replicated:
		return checkReplicated(s)
	case engine.Single:
		return checkSingle(s)
	case engine.Cluster:
		return checkCluster(s)
	}
	return nil
}

// persistenceModes are the persistence a redis-server runs with.
var persistenceModes = []string{"none", "aof-no", "aof-everysec", "aof-always"}

// CheckClient: a persistence mode Redis has; the driver, mode and wait,
// and the engine's own checks.
func (topology) CheckClient(s plan.Settings) error {
	if s.Persistence != "" && !slices.Contains(persistenceModes, s.Persistence) {
		return fmt.Errorf("persistence: %q is not accepted; use %s", s.Persistence, strings.Join(persistenceModes, ", "))
	}
	if s.Driver != "lockbench" && s.Driver != "redsync" && s.Driver != RueidislockDriver {
		return fmt.Errorf("driver: %q is not accepted; use lockbench, redsync or rueidislock", s.Driver)
	}
	if err := checkRueidislock(s); err != nil {
		return err
	}
	if err := checkAdapter(s); err != nil {
		return err
	}
	if _, err := engine.ParseMode(s.Mode); err != nil {
		return err
	}
	if s.Driver == "redsync" && s.Mode != string(engine.Multiplexed) {
		return fmt.Errorf("mode: %q is not available with driver redsync; redsync acquires on all masters at once (multiplexed)", s.Mode)
	}
	if s.Driver == "redsync" && s.Watchdog {
		return fmt.Errorf("watchdog: is lockbench's Redis client's (driver lockbench); redsync extends only when asked")
	}
	if s.Watchdog && s.AutoExtend {
		return fmt.Errorf("watchdog: give watchdog (renewals in the background) or auto_extend (inline in the hold), not both")
	}
	if s.Driver == "redsync" && s.WaitStrategy == engine.StrategyNotify {
		return fmt.Errorf("wait-strategy: notify is not accepted with driver redsync; use retry, backoff or spin")
	}
	if _, err := engine.ParseWait(s.Wait); err != nil {
		return err
	}
	ec, err := checkedConfig(s)
	if err != nil {
		return err
	}
	return ec.Validate()
}

// faultKinds are the kinds Redis' topologies take (each its own).
var faultKinds = []results.FaultKind{results.FaultCrash, results.FaultPartition, results.FaultLatency, results.FaultReset,
	results.FaultPause, results.FaultClockJump, results.FaultFailover, results.FaultReplicationLag}

// CheckFault: a replicated set's faults on a replicated set only, and
// none there that it cannot take (its clients find the master through
// Sentinel, so no proxy stands between them; masters under a fake clock
// are Redlock's).
func (r topology) CheckFault(where string, s plan.Settings, f plan.Fault) error {
	repl := r.t == engine.Replicated
	if r.t == engine.Cluster {
		return checkClusterFault(where, f)
	}
	switch {
	case !slices.Contains(faultKinds, f.Kind):
		return fmt.Errorf("%s.kind: %s needs the topology of a lock service that has it; topology is %s", where, f.Kind, r.t)
	case !repl && (f.Kind == results.FaultFailover || f.Kind == results.FaultReplicationLag):
		return fmt.Errorf("%s.kind: %s needs topology replicated (a master with replicas behind Sentinel); topology is %s", where, f.Kind, r.t)
	case repl && (f.Kind == results.FaultPartition || f.Kind == results.FaultLatency || f.Kind == results.FaultReset):
		return fmt.Errorf("%s.kind: %s is not available with topology replicated: its clients reach the master Sentinel names, with no proxy between; use replication_lag, failover, crash or pause", where, f.Kind)
	case repl && f.Kind == results.FaultClockJump:
		return fmt.Errorf("%s.kind: clock_jump is not available with topology replicated (fake clocks run Redlock's masters); use failover, crash or pause", where)
	}
	return nil
}

// CheckFaultServers: a fault cell starts its own masters (it crashes and
// restarts them), within bounds.
func (r topology) CheckFaultServers(s plan.Settings) error {
	if r.t == engine.Cluster && len(s.Masters) > 0 {
		return fmt.Errorf("masters: a fault scenario starts its own cluster (it kills its nodes); leave masters out")
	}
	switch {
	case len(s.Masters) > 0:
		return fmt.Errorf("masters: a fault scenario starts its own masters (it crashes and restarts them); use local: N (how many), not addresses")
	case s.Local < 1 || s.Local > 15:
		return fmt.Errorf("local: %d is not accepted; use 1..15 local masters", s.Local)
	case s.Persistence == "":
		return fmt.Errorf("persistence: \"\" is not accepted; use none, aof-no, aof-everysec or aof-always")
	case s.Driver == "redsync":
		return fmt.Errorf("driver: redsync is not measured in a fault cell yet (its clients run lockbench's engine); use lockbench or rueidislock")
	}
	return s.CheckFaultLoad()
}

// FaultWarnings: Redis' lock expires at its TTL under a long hold.
func (topology) FaultWarnings(s plan.Settings) []string {
	longest := time.Duration(s.Hold)
	switch s.HoldDist {
	case "uniform":
		longest *= 2
	case "exponential", "exp":
		longest *= 5 // past the 99th percentile
	}
	if s.Hold > 0 && longest >= time.Duration(s.TTL)-time.Duration(s.Timeout) && !s.CheckValidity && !s.Watchdog {
		return []string{fmt.Sprintf("holds reach %v (hold %v, %s) against ttl %v: some writes land after the lock expired, "+
			"so lost updates can appear without any fault; shorten the hold or set check_validity", longest, s.Hold, s.HoldDist, s.TTL)}
	}
	return nil
}

// N is the number of masters: one for a replicated set (its replicas are
// not masters), else the given or local ones.
func (r topology) N(s plan.Settings) int {
	switch {
	case r.t == engine.Replicated, r.t == engine.Cluster:
		return 1 // a cluster's lock is one key on one shard
	case len(s.Masters) > 0:
		return len(s.Masters)
	}
	return s.Local
}

// Record: a replicated set's, or nothing of one.
func (r topology) Record(s plan.Settings, out *results.Settings) {
	if r.t == engine.Replicated {
		recordReplicated(s, out)
		return
	}
	if r.t == engine.Cluster {
		recordCluster(s, out)
		return
	}
	out.Replicas = 0
	plan.NotReplicated(out)
}

// ServersKey: the masters, or the replicated set, and what they run
// with.
func (r topology) ServersKey(s plan.Settings) string {
	if r.t == engine.Cluster {
		return fmt.Sprintf("cluster|%v|%d|%d", s.Masters, clusterMasters(s), clusterReplicas(s))
	}
	if r.t == engine.Replicated {
		return fmt.Sprintf("replicated|%v|%d|%d|%s|%v|%v|%d|%v|%s|%s", s.SentinelAddrs, s.Replicas, s.Sentinels, masterSet(s),
			s.DownAfter, s.FailoverTimeout, s.MinReplicasToWrite, s.ReplicaPriority, s.Persistence, s.LocalCPUs)
	}
	return fmt.Sprintf("redis|%v|%d|%s|%s|%s", s.Masters, s.Local, s.Persistence, s.Embedded, s.LocalCPUs)
}

// Describe is what the cell runs on, as the plan lists it.
func (r topology) Describe(s plan.Settings) string {
	switch {
	case ExternalSentinels(s):
		return fmt.Sprintf("replicated %s via %d given sentinels, WAIT %d", s.MasterSet, len(s.SentinelAddrs), s.WaitReplicas)
	case r.t == engine.Replicated:
		return fmt.Sprintf("replicated: 1 master + %d replicas, %d sentinels, WAIT %d", s.Replicas, s.Sentinels, s.WaitReplicas)
	case r.t == engine.Cluster && len(s.Masters) > 0:
		return fmt.Sprintf("cluster: via %d given nodes, WAIT %d", len(s.Masters), s.WaitReplicas)
	case r.t == engine.Cluster:
		return fmt.Sprintf("cluster: %d masters, %d %s each, WAIT %d", clusterMasters(s), clusterReplicas(s), plural(clusterReplicas(s), "replica", "replicas"), s.WaitReplicas)
	case len(s.Masters) > 0:
		return fmt.Sprintf("%s: %d given", r.t, len(s.Masters))
	}
	return fmt.Sprintf("%s: %d local", r.t, s.Local)
}

// RueidislockDriver is rueidis' own lock (redislock/rueidislockdriver).
const RueidislockDriver = "rueidislock"

// checkRueidislock: rueidislock sets its keys on one deployment and keeps
// its lock alive itself; the engine's settings for several masters, its
// watchdog and its wait strategies are not its.
func checkRueidislock(s plan.Settings) error {
	if s.Driver != RueidislockDriver {
		return nil
	}
	switch t := s.TopologyOf(); {
	case t != string(engine.Single) && t != string(engine.Cluster):
		return fmt.Errorf("driver: rueidislock runs on one master or a cluster (topology single or cluster: its majority is over keys, not masters); topology is %s", t)
	case s.Watchdog || s.AutoExtend:
		return fmt.Errorf("watchdog: rueidislock extends its own keys (every ttl/2); leave watchdog and auto_extend unset")
	case s.WaitStrategy == engine.StrategyNotify:
		return fmt.Errorf("wait-strategy: notify is the engine's; rueidislock waits on its keys' invalidations itself (give wait_time)")
	}
	return nil
}

// checkAdapter: an external client (an adapter) is the lock client on
// Redlock's masters or one master, in place of lockbench's driver.
func checkAdapter(s plan.Settings) error {
	switch {
	case s.Client == "" && !s.IsGiven("client"):
		return nil
	case strings.TrimSpace(s.Client) == "":
		return fmt.Errorf("client: empty; give the adapter's command (docs/adapters.md)")
	case s.Driver != "lockbench":
		return fmt.Errorf("driver: %s is lockbench's client; with client the adapter is the lock client (leave driver unset)", s.Driver)
	case s.TopologyOf() == string(engine.Replicated), s.TopologyOf() == string(engine.Cluster):
		return fmt.Errorf("client: runs on topology redlock or single (the adapter gets the masters' addresses); topology is %s", s.TopologyOf())
	case s.AutoExtend:
		return fmt.Errorf("auto-extend: not with client yet; give watchdog (the adapter's library renews in the background) or neither")
	}
	return nil
}
