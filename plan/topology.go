package plan

import (
	"fmt"
	"strings"
	"time"

	"lockbench/results"
)

// Replicated-set defaults: what `--topology replicated` starts alone.
const (
	DefaultReplicas        = 2
	DefaultSentinels       = 3
	DefaultMasterSet       = "lockbench"
	defaultDownAfter       = time.Second
	defaultFailoverTimeout = 2 * time.Second
)

// TopologyOf is the cell's topology ("" is the default, redlock); an
// unknown name is the default here and an error in Validate.
func (s Settings) TopologyOf() string {
	if t := s.Service(); t != nil {
		return t.Name()
	}
	return DefaultTopology // not registered in this program
}

// ReplicatedSetting is one setting only topology replicated takes, with
// whether it differs from its default (was given) and its value as text.
type ReplicatedSetting struct {
	Name  string
	Given bool
	Value string
	Local bool // the local set's own: an external deployment is not started here
}

// ReplicatedSettings are the settings only topology replicated takes, in
// the order their errors are told.
func (s Settings) ReplicatedSettings() []ReplicatedSetting {
	d := Defaults()
	given := func(name string, differs bool) bool { return differs || s.IsGiven(strings.ReplaceAll(name, "-", "_")) }
	return []ReplicatedSetting{
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
	if t := s.Service(); s.IsGiven("replicas") && t.Replicas() > 0 {
		if s.Replicas < 0 || s.Replicas > t.Replicas() {
			return fmt.Errorf("replicas: %d is not accepted with topology %s; use 0..%d (its streaming replicas)", s.Replicas, t.Name(), t.Replicas())
		}
	}
	owner, _ := s.Service().(SettingsOwner)
	for _, r := range s.ReplicatedSettings() {
		if r.Name == "replicas" && s.Service().Replicas() > 0 || owner != nil && owner.Owns(r.Name) {
			continue
		}
		if r.Given {
			return fmt.Errorf("%s: %s needs topology replicated (a master with replicas behind Sentinel); topology is %s", r.Name, r.Value, s.TopologyOf())
		}
	}
	return nil
}

// SettingsOwner is a topology that takes some of replicated's settings
// as its own (by their flag names), checked by its Check.
type SettingsOwner interface{ Owns(setting string) bool }

// recordTopology keeps in a result's settings what the topology ran on:
// its kind's, then its own.
func (s Settings) recordTopology(out *results.Settings) {
	t := s.Service()
	out.Topology = t.Name()
	t.RecordKind(s, out)
	t.Record(s, out)
}

// NotReplicated: nothing of a replicated set's in a result of another
// topology.
func NotReplicated(out *results.Settings) {
	out.Sentinels, out.SentinelAddrs, out.MasterSet = 0, nil, ""
	out.WaitTimeout, out.DownAfter, out.FailoverTimeout = 0, 0, 0
	out.MinReplicasToWrite, out.ReplicaPriority = 0, nil
}
