package redisplan

import (
	"fmt"
	"regexp"
	"slices"
	"time"

	"lockbench/plan"
	"lockbench/redislock/engine"
	"lockbench/results"
)

// maxReplicatedNodes bounds a local set's replicas, and Sentinels: as
// many as local masters in a fault cell.
const maxReplicatedNodes = 15

// masterSetName is what Sentinel takes as a set name (localmasters checks
// the same when it writes the Sentinels' config).
var masterSetName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// checkMasters: external masters that parse and are each listed once.
func checkMasters(s plan.Settings) error {
	seen := map[string]bool{}
	for _, m := range s.Masters {
		_, display, err := engine.ParseMaster(m)
		if err != nil {
			return err
		}
		if seen[display] {
			return fmt.Errorf("masters: %q is listed twice; each master must be independent", display)
		}
		seen[display] = true
	}
	return nil
}

// checkSingle: one master, local or given.
func checkSingle(s plan.Settings) error {
	switch {
	case len(s.Masters) > 1:
		return fmt.Errorf("masters: topology single locks on one master; %d are given", len(s.Masters))
	case len(s.Masters) == 0 && s.Local != 1:
		return fmt.Errorf("local: %d is not accepted with topology single; it locks on one master: use local: 1 (or one address in masters)", s.Local)
	}
	return nil
}

// checkReplicated: a local set in bounds, or an external one's Sentinels
// and set name; WAIT within the replicas; what a replicated set cannot
// take (master addresses, a proxy in front of a master Sentinel moves,
// embedded servers).
func checkReplicated(s plan.Settings) error {
	switch {
	case len(s.Masters) > 0:
		return fmt.Errorf("masters: topology replicated finds its master through Sentinel; give sentinel-addrs and master-set (an external set) or neither (a local one), not masters")
	case s.NetLatency > 0:
		return fmt.Errorf("net-latency: not with topology replicated; Sentinel hands out the master's own address, which the proxy cannot stand in for")
	case s.Driver == "redsync":
		return fmt.Errorf("driver: redsync does not take topology replicated (go-redsync has no Sentinel link and no WAIT); use driver lockbench")
	case s.WaitReplicas < 0:
		return fmt.Errorf("wait-replicas: %d is not accepted; use 0 (no WAIT) or the replicas each SET must reach", s.WaitReplicas)
	case s.WaitTimeout < 0:
		return fmt.Errorf("wait-timeout: %v is not accepted; use 0 (the per-master timeout) or a positive duration", s.WaitTimeout)
	case !masterSetName.MatchString(masterSet(s)):
		return fmt.Errorf("master-set: %q is not accepted; use letters, digits, '.', '_' or '-'", s.MasterSet)
	}
	if ExternalSentinels(s) {
		return checkExternalSet(s)
	}
	return checkLocalSet(s)
}

// checkExternalSet: an external set is only dialled; what starts or
// configures servers does not apply.
func checkExternalSet(s plan.Settings) error {
	if s.MasterSet == "" {
		return fmt.Errorf("master-set: none given; with sentinel-addrs give the name the Sentinels monitor the master by")
	}
	for _, r := range s.ReplicatedSettings() {
		if r.Given && r.Local {
			return fmt.Errorf("%s: %s sets up a local replicated set; with sentinel-addrs the set is not started here (leave it out)", r.Name, r.Value)
		}
	}
	if s.Persistence != "" {
		return fmt.Errorf("persistence: %q is not accepted with sentinel-addrs; the servers of an external set keep their own (leave it unset)", s.Persistence)
	}
	return nil
}

// checkLocalSet: a local set's sizes, timings and priorities.
func checkLocalSet(s plan.Settings) error {
	switch {
	case s.Embedded == "always":
		return fmt.Errorf("embedded: always is not accepted with topology replicated; a replicated set runs real redis-server replicas and Sentinels")
	case s.Replicas < 1 || s.Replicas > maxReplicatedNodes:
		return fmt.Errorf("replicas: %d is not accepted; use 1..%d (Sentinel needs a replica to promote)", s.Replicas, maxReplicatedNodes)
	case s.Sentinels < 1 || s.Sentinels > maxReplicatedNodes:
		return fmt.Errorf("sentinels: %d is not accepted; use 1..%d local Sentinels (their quorum is sentinels/2+1)", s.Sentinels, maxReplicatedNodes)
	case s.WaitReplicas > s.Replicas:
		return fmt.Errorf("wait-replicas: %d is more than the %d replicas; use 0..%d (WAIT could never be acknowledged)", s.WaitReplicas, s.Replicas, s.Replicas)
	case s.MinReplicasToWrite < 0 || s.MinReplicasToWrite > s.Replicas:
		return fmt.Errorf("min-replicas-to-write: %d is not accepted; use 0 (off)..%d (the replicas)", s.MinReplicasToWrite, s.Replicas)
	case s.DownAfter < plan.Duration(time.Millisecond) || s.FailoverTimeout < plan.Duration(time.Millisecond):
		return fmt.Errorf("down-after: %v and failover-timeout %v are not accepted; use at least 1ms each", s.DownAfter, s.FailoverTimeout)
	case len(s.ReplicaPriority) > s.Replicas:
		return fmt.Errorf("replica-priority: %d priorities for %d replicas; give at most one per replica", len(s.ReplicaPriority), s.Replicas)
	case slices.ContainsFunc(s.ReplicaPriority, func(p int) bool { return p < 0 }):
		return fmt.Errorf("replica-priority: %v is not accepted; use 0 (never promoted) or more per replica", s.ReplicaPriority)
	}
	return nil
}

// masterSet is the set's name: as given, or the local set's default.
func masterSet(s plan.Settings) string {
	if s.MasterSet == "" {
		return plan.DefaultMasterSet
	}
	return s.MasterSet
}

// recordReplicated: a replicated set's name and failure timings as they
// ran, WAIT's timeout when there is a WAIT, and no local counts for an
// external set (the set is not this run's).
func recordReplicated(s plan.Settings, out *results.Settings) {
	out.Local, out.MasterSet = 1, masterSet(s)
	if s.WaitReplicas == 0 {
		out.WaitTimeout = 0
	}
	if s.WaitReplicas > 0 && s.WaitTimeout == 0 {
		out.WaitTimeout = s.Timeout // the engine's: WAIT 0 would block for ever
	}
	if ExternalSentinels(s) {
		out.Replicas, out.Sentinels, out.DownAfter, out.FailoverTimeout = 0, 0, 0, 0
	}
}

// EngineConfig is the engine's configuration for a cell's settings, its
// masters and Sentinels not set (the servers' addresses are known once
// they run); an error when the TLS files do not load.
func EngineConfig(s plan.Settings) (engine.Config, error) {
	c, err := checkedConfig(s)
	c.Masters, c.SentinelAddrs = nil, nil
	return c, err
}

// checkedConfig is EngineConfig with the masters given, or placeholders
// for the local ones (one for single, Sentinels for replicated), so that
// the engine's own checks see the shape the runner will give it.
func checkedConfig(s plan.Settings) (engine.Config, error) {
	c := engine.DefaultConfig()
	c.Masters = s.Masters
	if len(c.Masters) == 0 {
		// Placeholders so validation sees N distinct masters.
		for i := range s.Local {
			c.Masters = append(c.Masters, fmt.Sprintf("127.0.0.1:%d", i+1))
		}
	}
	c.Mode, c.Wait = engine.Mode(s.Mode), engine.Wait(s.Wait)
	c.TTL, c.Timeout, c.DriftFactor = time.Duration(s.TTL), time.Duration(s.Timeout), s.DriftFactor
	c.Retries, c.RetryMin, c.RetryMax = s.Retries, time.Duration(s.RetryMin), time.Duration(s.RetryMax)
	c.Strategy, c.BackoffBase, c.BackoffCap, c.WaitTime = s.WaitStrategy, time.Duration(s.BackoffBase), time.Duration(s.BackoffCap), time.Duration(s.WaitTime)
	if c.NotifyTimeout = time.Duration(s.NotifyTimeout); s.NotifyTimeout == 0 {
		c.NotifyTimeout = c.TTL // unset: the lease, as Redisson
	}
	c.MaxBatch, c.Dispatchers, c.FlushDelay = s.Batch, s.Dispatchers, time.Duration(s.FlushDelay)
	c.Watchdog = s.Watchdog
	if s.Driver == RueidislockDriver {
		c.Driver = s.Driver
	}
	c.Topology = engine.Topology(s.TopologyOf())
	c.WaitReplicas, c.WaitTimeout = s.WaitReplicas, time.Duration(s.WaitTimeout)
	if c.Topology == engine.Replicated {
		c.Masters, c.MasterSet = nil, masterSet(s)
		c.SentinelAddrs = s.SentinelAddrs
		if len(c.SentinelAddrs) == 0 {
			for i := range s.Sentinels {
				c.SentinelAddrs = append(c.SentinelAddrs, fmt.Sprintf("127.0.0.1:%d", i+1))
			}
		}
	}
	c.TLS = engine.TLSFiles{CA: s.TLSCA, Cert: s.TLSCert, Key: s.TLSKey, Insecure: s.TLSInsecure}
	if !c.TLS.Empty() {
		if _, err := c.TLS.Config(""); err != nil {
			return c, err
		}
	}
	return c, nil
}

// designs are Redlock's, one master's and a replicated one's, each run as
// Redis' lock clients run them: a watchdog renews the lease in the
// background while the holder lives (Redisson's lockWatchdogTimeout, here
// the cells' TTL, renewed every third of it). single-fixed-ttl is the one
// lock of fixed TTL kept, to show what the watchdog changes. rueidislock is
// rueidis' own lock on one master (redislock/rueidislockdriver: 3 keys, a
// majority of them; extended every ttl/2 by itself). The cluster designs
// are a Redis Cluster of 3 masters with a replica each: one SET NX PX on
// the key's shard (cluster), the same with WAIT 1 on that shard after it
// (cluster-wait1), and rueidislock on the cluster client
// (rueidislock-cluster), whose keys rueidislock:0:name, :1: and :2: hash
// to three slots, which at 3 shards fall on three different shards for
// few names (4.5% of 100,000 names lockbench:kN; CRC16 is linear, so
// slots of keys that differ in one character differ by a fixed pattern,
// not at random), else one shard holds a majority of its keys (all three
// for 14.5%).
var designs = []plan.Design{
	{Name: "redlock-5-mux", Settings: "topology: redlock, local: 5, persistence: none, mode: multiplexed, watchdog: true"},
	{Name: "redlock-5-seq", Settings: "topology: redlock, local: 5, persistence: none, mode: sequential, watchdog: true"},
	{Name: "single", Settings: "topology: single, local: 1, persistence: none, watchdog: true"},
	{Name: "single-fixed-ttl", Settings: "topology: single, local: 1, persistence: none", FixedTTL: true},
	{Name: "rueidislock", Settings: "topology: single, local: 1, persistence: none, driver: rueidislock"},
	{Name: "single-aof-always", Settings: "topology: single, local: 1, persistence: aof-always, watchdog: true"},
	{Name: "replicated-wait0", Settings: "topology: replicated, replicas: 2, sentinels: 3, wait_replicas: 0, persistence: none, watchdog: true"},
	{Name: "replicated-wait1", Settings: "topology: replicated, replicas: 2, sentinels: 3, wait_replicas: 1, persistence: none, watchdog: true"},
	{Name: "replicated-wait2", Settings: "topology: replicated, replicas: 2, sentinels: 3, wait_replicas: 2, persistence: none, watchdog: true"},
	{Name: "cluster", Settings: "topology: cluster, local: 3, replicas: 1, persistence: none, watchdog: true"},
	{Name: "cluster-wait1", Settings: "topology: cluster, local: 3, replicas: 1, wait_replicas: 1, persistence: none, watchdog: true"},
	{Name: "rueidislock-cluster", Settings: "topology: cluster, local: 3, replicas: 1, persistence: none, driver: rueidislock"},
}
