package plan

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"lockbench/engine"
	"lockbench/results"
)

// Replicated-set defaults: what `--topology replicated` starts alone.
const (
	DefaultReplicas        = 2
	DefaultSentinels       = 3
	DefaultMasterSet       = "lockbench"
	defaultDownAfter       = time.Second
	defaultFailoverTimeout = 2 * time.Second
	maxReplicatedNodes     = 15 // replicas, and Sentinels: as many as local masters in a fault cell
)

// masterSetName is what Sentinel takes as a set name (localmasters checks
// the same when it writes the Sentinels' config).
var masterSetName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// TopologyOf is the cell's topology ("" is redlock); an unknown name is
// redlock here and an error in Validate.
func (s Settings) TopologyOf() engine.Topology { return engine.Topology(s.Service().Name()) }

// Replicated says the cell runs on a replicated set.
func (s Settings) Replicated() bool { return s.TopologyOf() == engine.Replicated }

// ExternalSentinels says the replicated set is someone else's: its
// Sentinels were given, nothing is started here.
func (s Settings) ExternalSentinels() bool { return s.Replicated() && len(s.SentinelAddrs) > 0 }

// replicatedSetting is one setting only topology replicated takes, with
// whether it differs from its default (was given) and its value as text.
type replicatedSetting struct {
	name  string
	given bool
	value string
	local bool // the local set's own: an external deployment is not started here
}

// replicatedSettings are the settings only topology replicated takes, in
// the order their errors are told.
func (s Settings) replicatedSettings() []replicatedSetting {
	d := Defaults()
	given := func(name string, differs bool) bool { return differs || s.IsGiven(strings.ReplaceAll(name, "-", "_")) }
	return []replicatedSetting{
		{"replicas", given("replicas", s.Replicas != d.Replicas), fmt.Sprint(s.Replicas), true},
		{"sentinels", given("sentinels", s.Sentinels != d.Sentinels), fmt.Sprint(s.Sentinels), true},
		{"sentinel-addrs", given("sentinel-addrs", len(s.SentinelAddrs) > 0), strings.Join(s.Redacted().SentinelAddrs, ","), false},
		{"master-set", given("master-set", s.MasterSet != d.MasterSet), s.MasterSet, false},
		{"wait-replicas", given("wait-replicas", s.WaitReplicas != d.WaitReplicas), fmt.Sprint(s.WaitReplicas), false},
		{"wait-timeout", given("wait-timeout", s.WaitTimeout != d.WaitTimeout), s.WaitTimeout.String(), false},
		{"down-after", given("down-after", s.DownAfter != d.DownAfter), s.DownAfter.String(), true},
		{"failover-timeout", given("failover-timeout", s.FailoverTimeout != d.FailoverTimeout), s.FailoverTimeout.String(), true},
		{"min-replicas-to-write", given("min-replicas-to-write", s.MinReplicasToWrite != d.MinReplicasToWrite), fmt.Sprint(s.MinReplicasToWrite), true},
		{"replica-priority", given("replica-priority", len(s.ReplicaPriority) > 0), fmt.Sprint(s.ReplicaPriority), true},
	}
}

// checkTopology: a known topology, and the settings it takes (its
// kind's, its own, none of a replicated set's elsewhere).
func (s Settings) checkTopology() error {
	if err := s.checkServiceSettings(); err != nil {
		return err
	}
	if !s.knownTopology() {
		return fmt.Errorf("topology: %q is not accepted; use %s", s.Topology, strings.Join(TopologyNames(), ", "))
	}
	t := s.Service()
	for _, check := range []func(Settings) error{t.CheckKind, t.Check, Settings.CheckNotReplicated} {
		if err := check(s); err != nil {
			return err
		}
	}
	return nil
}

// CheckNotReplicated refuses replicated's settings in another topology
// (a service that starts replicas of its own takes replicas:, within its
// bound).
func (s Settings) CheckNotReplicated() error {
	if s.Replicated() {
		return nil // they are its own
	}
	if t := s.Service(); s.IsGiven("replicas") && t.Replicas() > 0 {
		if s.Replicas < 0 || s.Replicas > t.Replicas() {
			return fmt.Errorf("replicas: %d is not accepted with topology %s; use 0..%d (its streaming replicas)", s.Replicas, t.Name(), t.Replicas())
		}
	}
	for _, r := range s.replicatedSettings() {
		if r.name == "replicas" && s.Service().Replicas() > 0 {
			continue
		}
		if r.given {
			return fmt.Errorf("%s: %s needs topology replicated (a master with replicas behind Sentinel); topology is %s", r.name, r.value, s.TopologyOf())
		}
	}
	return nil
}

// checkSingle: one master, local or given.
func (s Settings) checkSingle() error {
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
func (s Settings) checkReplicated() error {
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
	case !masterSetName.MatchString(s.masterSet()):
		return fmt.Errorf("master-set: %q is not accepted; use letters, digits, '.', '_' or '-'", s.MasterSet)
	}
	if s.ExternalSentinels() {
		return s.checkExternalSet()
	}
	return s.checkLocalSet()
}

// checkExternalSet: an external set is only dialled; what starts or
// configures servers does not apply.
func (s Settings) checkExternalSet() error {
	if s.MasterSet == "" {
		return fmt.Errorf("master-set: none given; with sentinel-addrs give the name the Sentinels monitor the master by")
	}
	for _, r := range s.replicatedSettings() {
		if r.given && r.local {
			return fmt.Errorf("%s: %s sets up a local replicated set; with sentinel-addrs the set is not started here (leave it out)", r.name, r.value)
		}
	}
	if s.Persistence != "" {
		return fmt.Errorf("persistence: %q is not accepted with sentinel-addrs; the servers of an external set keep their own (leave it unset)", s.Persistence)
	}
	return nil
}

// checkLocalSet: a local set's sizes, timings and priorities.
func (s Settings) checkLocalSet() error {
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
	case s.DownAfter < Duration(time.Millisecond) || s.FailoverTimeout < Duration(time.Millisecond):
		return fmt.Errorf("down-after: %v and failover-timeout %v are not accepted; use at least 1ms each", s.DownAfter, s.FailoverTimeout)
	case len(s.ReplicaPriority) > s.Replicas:
		return fmt.Errorf("replica-priority: %d priorities for %d replicas; give at most one per replica", len(s.ReplicaPriority), s.Replicas)
	case slices.ContainsFunc(s.ReplicaPriority, func(p int) bool { return p < 0 }):
		return fmt.Errorf("replica-priority: %v is not accepted; use 0 (never promoted) or more per replica", s.ReplicaPriority)
	}
	return nil
}

// masterSet is the set's name: as given, or the local set's default.
func (s Settings) masterSet() string {
	if s.MasterSet == "" {
		return DefaultMasterSet
	}
	return s.MasterSet
}

// topologyEngine sets the engine's topology: one placeholder master for
// single, placeholder Sentinels (or the given ones) for replicated, so
// that the engine's own checks see the shape the runner will give it.
func (s Settings) topologyEngine(c *engine.Config) {
	c.Topology = s.TopologyOf()
	c.WaitReplicas, c.WaitTimeout = s.WaitReplicas, time.Duration(s.WaitTimeout)
	if c.Topology != engine.Replicated {
		return
	}
	c.Masters, c.MasterSet = nil, s.masterSet()
	c.SentinelAddrs = s.SentinelAddrs
	if len(c.SentinelAddrs) == 0 {
		for i := range s.Sentinels {
			c.SentinelAddrs = append(c.SentinelAddrs, fmt.Sprintf("127.0.0.1:%d", i+1))
		}
	}
}

// recordTopology keeps in a result's settings what the topology ran on:
// its kind's, then its own.
func (s Settings) recordTopology(out *results.Settings) {
	t := s.Service()
	out.Topology = t.Name()
	t.RecordKind(s, out)
	t.Record(s, out)
}

// notReplicated: nothing of Redis' replicated set in a result of another
// topology.
func notReplicated(out *results.Settings) {
	out.Sentinels, out.SentinelAddrs, out.MasterSet = 0, nil, ""
	out.WaitTimeout, out.DownAfter, out.FailoverTimeout = 0, 0, 0
	out.MinReplicasToWrite, out.ReplicaPriority = 0, nil
}

// recordReplicated: a replicated set's name and failure timings as they
// ran, WAIT's timeout when there is a WAIT, and no local counts for an
// external set (the set is not this run's).
func (s Settings) recordReplicated(out *results.Settings) {
	out.Local, out.MasterSet = 1, s.masterSet()
	if s.WaitReplicas == 0 {
		out.WaitTimeout = 0
	}
	if s.WaitReplicas > 0 && s.WaitTimeout == 0 {
		out.WaitTimeout = s.Timeout // the engine's: WAIT 0 would block for ever
	}
	if s.ExternalSentinels() {
		out.Replicas, out.Sentinels, out.DownAfter, out.FailoverTimeout = 0, 0, 0, 0
	}
}
