package plan

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// Each bad topology setting is one line naming it.
func TestTopologyValidation(t *testing.T) {
	cases := []struct {
		field  string
		mutate func(*Settings)
	}{
		{"topology", func(s *Settings) { s.Topology = "sharded" }},
		{"replicas", func(s *Settings) { s.Replicas = 3 }},
		{"sentinels", func(s *Settings) { s.Sentinels = 1 }},
		{"sentinel-addrs", func(s *Settings) { s.SentinelAddrs = []string{"127.0.0.1:1"} }},
		{"master-set", func(s *Settings) { s.MasterSet = "x" }},
		{"wait-replicas", func(s *Settings) { s.WaitReplicas = 1 }},
		{"wait-timeout", func(s *Settings) { s.WaitTimeout = Duration(time.Second) }},
		{"down-after", func(s *Settings) { s.DownAfter = Duration(time.Second / 2) }},
		{"failover-timeout", func(s *Settings) { s.FailoverTimeout = Duration(time.Second) }},
		{"min-replicas-to-write", func(s *Settings) { s.MinReplicasToWrite = 1 }},
		{"replica-priority", func(s *Settings) { s.ReplicaPriority = []int{1} }},
		{"wait-replicas", func(s *Settings) { s.Topology, s.Local, s.WaitReplicas = "single", 1, 1 }},
		{"local", func(s *Settings) { s.Topology = "single" }},
		{"masters", func(s *Settings) { s.Topology, s.Masters = "single", []string{"127.0.0.1:1", "127.0.0.1:2"} }},
		{"masters", func(s *Settings) { s.Topology, s.Masters = "replicated", []string{"127.0.0.1:1"} }},
		{"wait-replicas", func(s *Settings) { s.Topology, s.WaitReplicas = "replicated", 3 }},
		{"wait-replicas", func(s *Settings) { s.Topology, s.WaitReplicas = "replicated", -1 }},
		{"wait-timeout", func(s *Settings) { s.Topology, s.WaitTimeout = "replicated", Duration(-time.Second) }},
		{"replicas", func(s *Settings) { s.Topology, s.Replicas = "replicated", 0 }},
		{"sentinels", func(s *Settings) { s.Topology, s.Sentinels = "replicated", 0 }},
		{"min-replicas-to-write", func(s *Settings) { s.Topology, s.MinReplicasToWrite = "replicated", 3 }},
		{"replica-priority", func(s *Settings) { s.Topology, s.ReplicaPriority = "replicated", []int{1, -1} }},
		{"replica-priority", func(s *Settings) { s.Topology, s.ReplicaPriority = "replicated", []int{1, 2, 3} }},
		{"down-after", func(s *Settings) { s.Topology, s.DownAfter = "replicated", 0 }},
		{"master-set", func(s *Settings) { s.Topology, s.MasterSet = "replicated", "a b" }},
		{"embedded", func(s *Settings) { s.Topology, s.Embedded = "replicated", "always" }},
		{"driver", func(s *Settings) { s.Topology, s.Driver = "replicated", "redsync" }},
		{"net-latency", func(s *Settings) { s.Topology, s.NetLatency = "replicated", Duration(time.Millisecond) }},
		{"master-set", func(s *Settings) { s.Topology, s.SentinelAddrs = "replicated", []string{"127.0.0.1:1"} }},
		{"replicas", func(s *Settings) {
			s.Topology, s.SentinelAddrs, s.MasterSet, s.Replicas = "replicated", []string{"127.0.0.1:1"}, "m", 1
		}},
		{"persistence", func(s *Settings) {
			s.Topology, s.SentinelAddrs, s.MasterSet, s.Persistence = "replicated", []string{"127.0.0.1:1"}, "m", "none"
		}},
		{"local-cpus", func(s *Settings) {
			s.Topology, s.SentinelAddrs, s.MasterSet, s.LocalCPUs = "replicated", []string{"127.0.0.1:1"}, "m", "0"
		}},
		{"sentinel-addrs", func(s *Settings) {
			s.Topology, s.SentinelAddrs, s.MasterSet = "replicated", []string{"127.0.0.1:1", "127.0.0.1:1"}, "m"
		}},
	}
	for _, tc := range cases {
		s := Defaults()
		tc.mutate(&s)
		_, err := s.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tc.field+":") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line naming %q", tc.field, err, tc.field)
		}
	}
	good := []func(*Settings){
		func(s *Settings) { s.Topology, s.Local = "single", 1 },
		func(s *Settings) { s.Topology, s.Driver, s.Local = "single", "redsync", 1 },
		func(s *Settings) { s.Topology = "replicated" },
		func(s *Settings) { s.Topology, s.Local = "replicated", 7 }, // local counts redlock's masters; a set has one
		func(s *Settings) {
			s.Topology, s.Replicas, s.WaitReplicas, s.ReplicaPriority, s.MinReplicasToWrite = "replicated", 3, 3, []int{10, 0}, 1
		},
		func(s *Settings) {
			s.Topology, s.SentinelAddrs, s.MasterSet, s.WaitReplicas = "replicated", []string{"h:1", "h:2"}, "m", 2
		},
	}
	for i, mutate := range good {
		s := Defaults()
		mutate(&s)
		if _, err := s.Validate(); err != nil {
			t.Errorf("good %d: %v", i, err)
		}
	}
}

// A result records its topology always, a replicated set's settings only
// when it ran on one (a local set's counts only when local), and WAIT's
// timeout as it ran.
func TestTopologyRecorded(t *testing.T) {
	rec := func(mutate func(*Settings)) map[string]any {
		t.Helper()
		s := Defaults()
		mutate(&s)
		_, cells, err := RunScenario(s, 1)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(cells[0].Recorded)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		return m
	}
	r := rec(func(*Settings) {})
	if r["topology"] != "redlock" || r["wait_replicas"] != 0.0 || r["replicas"] != nil || r["sentinels"] != nil || r["down_after"] != nil || r["master_set"] != nil {
		t.Errorf("redlock records replicated settings: %v", r)
	}
	r = rec(func(s *Settings) { s.Topology, s.WaitReplicas = "replicated", 1 })
	if r["topology"] != "replicated" || r["replicas"] != 2.0 || r["sentinels"] != 3.0 || r["master_set"] != DefaultMasterSet ||
		r["wait_timeout"] != "50ms" || r["down_after"] != "1s" || r["local"] != 1.0 || r["persistence"] != "none" {
		t.Errorf("replicated: %v", r)
	}
	r = rec(func(s *Settings) {
		s.Topology, s.SentinelAddrs, s.MasterSet = "replicated", []string{"redis://u:secret@h:1"}, "m"
	})
	if r["replicas"] != nil || r["down_after"] != nil || r["persistence"] != "" || strings.Contains(r["sentinel_addrs"].([]any)[0].(string), "secret") {
		t.Errorf("external set: %v", r)
	}
}

// topology is a matrix axis and a named cell's setting; the flags reach it,
// and a setting of the replicated set on a redlock cell is refused.
func TestTopologyInScenarios(t *testing.T) {
	sc, err := Parse("t.yaml", []byte(`
settings: {local: 1}
matrix:
  topology: [redlock, single, replicated]
`), false)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := sc.Cells()
	if err != nil || len(cells) != 3 || cells[2].Settings.TopologyOf() != "replicated" || cells[2].Recorded.Replicas != DefaultReplicas {
		t.Fatalf("%d cells (%v)", len(cells), err)
	}
	if cells[1].MastersKey() == cells[2].MastersKey() || cells[0].MastersKey() != cells[1].MastersKey() {
		t.Errorf("servers: redlock N=1 and single share a master, a replicated set is its own: %q %q %q",
			cells[0].MastersKey(), cells[1].MastersKey(), cells[2].MastersKey())
	}
	_, err = Parse("t.yaml", []byte("settings: {wait_replicas: 1}\nmatrix:\n  topology: [replicated, redlock]\n"), false)
	if err == nil || !strings.Contains(err.Error(), "wait-replicas: 1 needs topology replicated") || !strings.Contains(err.Error(), "topology=redlock") {
		t.Errorf("WAIT on a redlock cell: %v", err)
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	var flags Settings
	BindFlags(fs, &flags)
	if err := fs.Parse([]string{"--topology", "replicated", "--replicas", "1", "--wait-replicas", "1", "--replica-priority", "5"}); err != nil {
		t.Fatal(err)
	}
	sc, _ = Parse("t.yaml", []byte("settings: {workers: 2}\n"), false)
	cells, _, err = sc.Expand(fs, BindFlags)
	if err != nil || cells[0].Settings.Replicas != 1 || cells[0].Settings.WaitReplicas != 1 || cells[0].Settings.ReplicaPriority[0] != 5 {
		t.Errorf("flags over a scenario: %+v (%v)", cells, err)
	}
}

// A fault scenario takes a replicated set: failover and replication_lag
// there only, faults by role within the set's sizes, no proxy or fake
// clock in front of a master Sentinel names.
func TestReplicatedFaultScenario(t *testing.T) {
	const base = "settings: {topology: replicated, replicas: 2, sentinels: 3, duration: 5s}\n"
	good := base + `faults:
  - {at: 1s, kind: replication_lag, replica_index: [1], for: 2s}
  - {at: 2s, kind: failover}
  - {at: 3s, kind: crash, replica_index: [0], sentinel_index: [2], restart: never}
  - {at: 3s, kind: crash, master_index: [0]}
  - {at: 4s, kind: pause, client_index: [0], for: 100ms}
`
	sc, err := Parse("f.yaml", []byte(good), true)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := sc.Cells()
	if err != nil || len(cells[0].Faults) != 5 || cells[0].Faults[2].String() != "crash at 3s replicas 0 sentinels 2 restart never" {
		t.Fatalf("%+v (%v)", cells, err)
	}
	for doc, want := range map[string]string{
		"faults: [{at: 1s, kind: failover}]\n":                                     "faults[0].kind: failover needs topology replicated",
		"faults: [{at: 1s, kind: crash, replica_index: [0]}]\n":                    "replica_index and sentinel_index need topology replicated",
		base + "faults: [{at: 1s, kind: partition}]\n":                             "partition is not available with topology replicated",
		base + "faults: [{at: 1s, kind: clock_jump, by: 1s, master_index: [0]}]\n": "clock_jump is not available",
		base + "faults: [{at: 1s, kind: crash, replica_index: [2]}]\n":             "faults[0].replica_index: 2 is not accepted; use 0..1",
		base + "faults: [{at: 1s, kind: crash, master_index: [1]}]\n":              "faults[0].master_index: 1 is not accepted; use 0..0",
		base + "faults: [{at: 1s, kind: failover, replica_index: [0]}]\n":          "replica_index: not used by failover",
	} {
		if _, err := Parse("f.yaml", []byte(doc), true); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", doc, err, want)
		}
	}
}

// Network faults on the lock services: the clients' links on every
// service, a member cut from the other members on a consensus cluster
// only (by index or role), and the link field's own rules.
func TestServiceNetworkFaults(t *testing.T) {
	accepted := map[string]string{
		"etcd":      "partition at 1s the leader from the other members for 2s",
		"zookeeper": "partition at 1s members 1 from the others for 2s",
		"postgres":  "partition at 1s masters all clients 0 for 2s",
		"etcd-lat":  "latency at 1s every link between members 5ms±0s for 2s",
		"cluster":   "partition at 1s members 0 from the others for 2s",
	}
	faultOf := map[string]string{
		"etcd":      "{at: 1s, kind: partition, link: members, role: leader, for: 2s}",
		"zookeeper": "{at: 1s, kind: partition, link: members, master_index: [1], for: 2s}",
		"postgres":  "{at: 1s, kind: partition, client_index: [0], for: 2s}",
		"etcd-lat":  "{at: 1s, kind: latency, link: members, latency: 5ms, for: 2s}",
		"cluster":   "{at: 1s, kind: partition, link: members, master_index: [0], for: 2s}", // a shard's master cut from the bus
	}
	for topo, want := range accepted {
		doc := "settings: {topology: " + strings.TrimSuffix(topo, "-lat") + ", duration: 5s}\nfaults: [" + faultOf[topo] + "]\n"
		sc, err := Parse("f.yaml", []byte(doc), true)
		if err != nil {
			t.Fatalf("%s: %v", topo, err)
		}
		cells, err := sc.Cells()
		if err != nil || cells[0].Faults[0].String() != want {
			t.Errorf("%s: %+v (%v), want %q", topo, cells, err, want)
		}
	}
	for doc, want := range map[string]string{
		"settings: {topology: postgres}\nfaults: [{at: 1s, kind: partition, link: members, master_index: [0]}]\n":           "link: members needs topology cluster or etcd or zookeeper",
		"settings: {topology: redlock}\nfaults: [{at: 1s, kind: partition, link: members, master_index: [0]}]\n":            "link: members needs topology cluster or etcd or zookeeper",
		"settings: {topology: etcd}\nfaults: [{at: 1s, kind: partition, link: members}]\n":                                  "master_index: is needed with link: members",
		"settings: {topology: etcd}\nfaults: [{at: 1s, kind: partition, link: members, client_index: [0], role: leader}]\n": "client_index: not used with link: members",
		"settings: {topology: etcd}\nfaults: [{at: 1s, kind: partition, role: leader}]\n":                                   "add link: members",
		"settings: {topology: etcd}\nfaults: [{at: 1s, kind: partition, link: peers, role: leader}]\n":                      `link: "peers" is not accepted`,
		"settings: {topology: etcd}\nfaults: [{at: 1s, kind: latency, link: members, master_index: [0], latency: 1ms}]\n":   "master_index: not used by latency with link: members",
		"settings: {topology: etcd, member_latency: 1ms}\nfaults: [{at: 1s, kind: latency, link: members, latency: 1ms}]\n": "member_latency: not available in a fault scenario",
		"settings: {topology: etcd}\nfaults: [{at: 1s, kind: reset, link: members}]\n":                                      "link: not used by reset",
		"settings: {topology: cluster}\nfaults: [{at: 1s, kind: partition, link: members, role: leader}]\n":                 "role: needs topology",
		"settings: {topology: cluster}\nfaults: [{at: 1s, kind: partition, master_index: [0]}]\n":                           "partition is not available with topology cluster",
		"settings: {topology: postgres}\nfaults: [{at: 1s, kind: clock_jump, by: 1s, master_index: [0]}]\n":                 "clock_jump is not available with topology postgres",
	} {
		if _, err := Parse("f.yaml", []byte(doc), true); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", doc, err, want)
		}
	}
}

// member_latency delays the links between a consensus cluster's own
// members: etcd's and ZooKeeper's (2 or more local servers), no other's.
func TestMemberLatency(t *testing.T) {
	for doc, want := range map[string]string{
		"settings: {topology: etcd, member_latency: 1ms}":                                               "",
		"settings: {topology: zookeeper, member_latency: 1ms}":                                          "",
		"settings: {topology: zookeeper, local: 1, member_latency: 1ms}":                                "member-latency: 1ms is not accepted",
		"settings: {topology: zookeeper, member_latency: 1500us}":                                       "use whole milliseconds",
		"settings: {topology: postgres, member_latency: 1ms}":                                           "member-latency",
		"settings: {topology: redlock, local: 3, member_latency: 1ms}":                                  "needs topology etcd or zookeeper",
		"settings: {topology: zookeeper, zookeeper_servers: [\"127.0.0.1:2181\"], member_latency: 1ms}": "member-latency: 1ms is not accepted",
	} {
		sc, err := Parse("s.yaml", []byte(doc+"\n"), false)
		if err == nil {
			_, err = sc.Cells()
		}
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: got %v, want %q", doc, err, want)
		}
	}
}

// An unknown topology in a scenario file is one line naming it, in a
// benchmark and a fault scenario alike (resolving a cell before its
// checks must not need the topology to exist).
func TestUnknownTopologyInAFile(t *testing.T) {
	for _, faulty := range []bool{false, true} {
		_, err := Parse("bogus.yaml", []byte("settings:\n  topology: bogus\n"), faulty)
		if err == nil || !strings.Contains(err.Error(), `topology: "bogus" is not accepted`) {
			t.Errorf("faulty %v: %v; want the topology refused", faulty, err)
		}
	}
}

// servers is one word for any service's servers: on a Redis topology they
// are its masters, from the flag and from YAML alike; servers and masters
// both given is refused on one line.
func TestServersAreRedisMasters(t *testing.T) {
	s := Defaults()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	BindFlags(fs, &s)
	if err := fs.Parse([]string{"--servers", "127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Validate(); err != nil {
		t.Fatalf("--servers on topology %s: %v", s.TopologyOf(), err)
	}
	_, cells, err := RunScenario(s, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := cells[0].Settings.Masters; len(got) != 3 || len(cells[0].Settings.Servers) != 0 {
		t.Fatalf("masters %v, servers %v; want the three servers as masters", got, cells[0].Settings.Servers)
	}
	if len(s.Masters) != 0 || s.IsGiven("masters") {
		t.Fatalf("the caller's settings changed: masters %v", s.Masters)
	}
	sc, err := Parse("t", []byte("settings: {servers: [127.0.0.1:7001]}\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	if cells, err := sc.Cells(); err != nil || len(cells[0].Settings.Masters) != 1 {
		t.Fatalf("servers: in YAML: %v, %+v", err, cells)
	}
	s.Masters = []string{"127.0.0.1:7004"}
	if _, err := s.Validate(); err == nil || !strings.HasPrefix(err.Error(), "servers: ") {
		t.Fatalf("servers and masters both: %v; want one line naming servers", err)
	}
}

// A replicated set's start is estimated 3 s longer than a single master's:
// its topology says so (SlowStart), plan does not know it by name.
func TestEstimateAsksTheTopology(t *testing.T) {
	est := func(topology string) time.Duration {
		s := Defaults()
		s.Topology, s.Warmup, s.Duration = topology, 0, Duration(time.Second)
		return EstimatedDuration([]Cell{{ID: "a", Settings: s}})
	}
	if single, repl := est("single"), est("replicated"); repl-single != 3*time.Second {
		t.Errorf("replicated estimated %v, single %v; want 3s more", repl, single)
	}
}
