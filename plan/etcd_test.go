package plan

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// etcdSettings are the defaults with topology etcd, then mutate.
func etcdSettings(mutate func(*Settings)) Settings {
	s := Defaults()
	s.Topology = "etcd"
	if mutate != nil {
		mutate(&s)
	}
	return s
}

// Topology etcd takes local members (1..7), fsync or no-fsync, etcd's own
// wait strategies and external endpoints.
func TestEtcdAccepted(t *testing.T) {
	cases := []struct {
		name    string
		mutate  func(*Settings)
		members int // EtcdMembers() of a local cluster; 0: not checked
	}{
		{"defaults", nil, 3},
		{"local 1", func(s *Settings) { s.Local = 1; s.MarkGiven("local") }, 1},
		// local 5 given is 5 members; left unset (the Redis default 5), 3.
		{"local 5 given", func(s *Settings) { s.Local = 5; s.MarkGiven("local") }, 5},
		{"local 5 not given", func(s *Settings) { s.Local = 5 }, 3},
		{"persistence fsync", func(s *Settings) { s.Persistence = "fsync" }, 0},
		{"persistence no-fsync", func(s *Settings) { s.Persistence = "no-fsync" }, 0},
		{"wait-strategy queue", func(s *Settings) { s.WaitStrategy = "queue" }, 0},
		{"wait-strategy retry", func(s *Settings) { s.WaitStrategy = "retry" }, 0},
		{"wait-strategy backoff", func(s *Settings) { s.WaitStrategy = "backoff" }, 0},
		{"wait-strategy spin", func(s *Settings) { s.WaitStrategy = "spin" }, 0},
		{"external endpoints", func(s *Settings) {
			s.Servers = []string{"127.0.0.1:2379", "http://u:p@127.0.0.1:2380"}
		}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := etcdSettings(tc.mutate)
			if _, err := s.Validate(); err != nil {
				t.Errorf("refused: %v", err)
			}
			if tc.members != 0 && s.N() != tc.members {
				t.Errorf("N() = %d, want %d", s.N(), tc.members)
			}
		})
	}
}

// Each setting topology etcd does not take is refused with one line that
// starts with its name.
func TestEtcdRefused(t *testing.T) {
	cases := []struct {
		name   string
		field  string
		mutate func(*Settings)
	}{
		{"masters given", "masters", func(s *Settings) { s.Masters = []string{"127.0.0.1:6379"} }},
		{"local 9", "local", func(s *Settings) { s.Local = 9; s.MarkGiven("local") }},
		{"persistence aof-always", "persistence", func(s *Settings) { s.Persistence = "aof-always" }},
		{"external endpoints with persistence fsync", "persistence", func(s *Settings) {
			s.Servers, s.Persistence = []string{"127.0.0.1:2379"}, "fsync"
		}},
		{"driver redsync", "driver", func(s *Settings) { s.Driver = "redsync" }},
		{"mode sequential", "mode/wait", func(s *Settings) { s.Mode = "sequential" }},
		{"wait-strategy notify", "wait-strategy", func(s *Settings) { s.WaitStrategy = "notify" }},
		{"ttl 1500ms", "ttl", func(s *Settings) { s.TTL = Duration(1500 * time.Millisecond) }},
		{"ttl 1s", "ttl", func(s *Settings) { s.TTL = Duration(time.Second) }},
		{"replicas 3", "replicas", func(s *Settings) { s.Replicas = 3 }},
		{"wait_replicas 1", "wait-replicas", func(s *Settings) { s.WaitReplicas = 1 }},
		{"net_latency 1ms", "net-latency", func(s *Settings) { s.NetLatency = Duration(time.Millisecond) }},
		{"auto_extend", "auto-extend", func(s *Settings) { s.AutoExtend = true }},
		{"endpoint bad scheme", "etcd-endpoints", func(s *Settings) { s.Servers = []string{"ftp://x:1"}; s.MarkGiven("etcd_endpoints") }},
		{"servers bad scheme", "servers", func(s *Settings) { s.Servers = []string{"ftp://x:1"} }},
		{"endpoint listed twice", "etcd-endpoints", func(s *Settings) {
			s.Servers = []string{"127.0.0.1:2379", "127.0.0.1:2379"}
			s.MarkGiven("etcd_endpoints")
		}},
		{"topology redlock with endpoints", "etcd-endpoints", func(s *Settings) {
			s.Topology, s.Servers = "redlock", []string{"127.0.0.1:2379"}
			s.MarkGiven("etcd_endpoints")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := etcdSettings(tc.mutate)
			_, err := s.Validate()
			if err == nil {
				t.Fatalf("accepted, want an error naming %q", tc.field)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, tc.field+":") || strings.Contains(msg, "\n") {
				t.Errorf("got %q, want one line starting %q", msg, tc.field+":")
			}
		})
	}
}

// No error message shows the password of an endpoint URL.
func TestEtcdErrorsHidePassword(t *testing.T) {
	const secret = "secretpw"
	cases := []struct {
		name   string
		mutate func(*Settings)
	}{
		{"bad scheme", func(s *Settings) { s.Servers = []string{"ftp://u:" + secret + "@127.0.0.1:1"} }},
		{"no port", func(s *Settings) { s.Servers = []string{"http://u:" + secret + "@127.0.0.1"} }},
		{"listed twice", func(s *Settings) {
			s.Servers = []string{"http://u:" + secret + "@127.0.0.1:1", "http://u:" + secret + "@127.0.0.1:1"}
		}},
		{"with persistence", func(s *Settings) {
			s.Servers, s.Persistence = []string{"http://u:" + secret + "@127.0.0.1:1"}, "fsync"
		}},
		{"topology redlock", func(s *Settings) {
			s.Topology, s.Servers = "redlock", []string{"http://u:" + secret + "@127.0.0.1:1"}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := etcdSettings(tc.mutate).Validate()
			if err == nil {
				t.Fatal("accepted, want an error")
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error shows the password: %q", err)
			}
		})
	}
}

// An even local cluster is warned about once, as etcd members.
func TestEtcdWarnings(t *testing.T) {
	w, err := etcdSettings(func(s *Settings) { s.Local = 4; s.MarkGiven("local") }).Validate()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range w {
		if strings.Contains(m, "etcd members") {
			n++
		}
	}
	if n != 1 || len(w) != 1 {
		t.Errorf("warnings %q, want one mentioning etcd members", w)
	}
}

// Redacted hides the password of an etcd endpoint URL and leaves the
// settings it copies alone.
func TestEtcdRedacted(t *testing.T) {
	s := etcdSettings(func(s *Settings) {
		s.Servers = []string{"127.0.0.1:2379", "http://u:secretpw@127.0.0.1:1"}
	})
	r := s.Redacted()
	if len(r.Servers) != 2 || r.Servers[0] != "127.0.0.1:2379" ||
		strings.Contains(r.Servers[1], "secretpw") || !strings.Contains(r.Servers[1], "127.0.0.1:1") {
		t.Errorf("redacted endpoints %q", r.Servers)
	}
	if s.Servers[1] != "http://u:secretpw@127.0.0.1:1" {
		t.Errorf("Redacted changed the settings: %q", s.Servers)
	}
}

// A resolved etcd cell records its topology, its members as local and
// its persistence (fsync when unset; none of either for an external
// cluster, whose endpoints are recorded without passwords).
func TestEtcdRecorded(t *testing.T) {
	cases := []struct {
		name        string
		mutate      func(*Settings)
		local       int
		persistence string
	}{
		{"defaults", nil, 3, "fsync"},
		{"local 1 no-fsync", func(s *Settings) { s.Local, s.Persistence = 1, "no-fsync"; s.MarkGiven("local") }, 1, "no-fsync"},
		{"external", func(s *Settings) {
			s.Servers = []string{"127.0.0.1:2379", "http://u:secretpw@127.0.0.1:2380"}
		}, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, cells, err := RunScenario(etcdSettings(tc.mutate), 1)
			if err != nil {
				t.Fatal(err)
			}
			r := cells[0].Recorded
			if r.Topology != "etcd" || r.Local != tc.local || r.Persistence != tc.persistence {
				t.Errorf("recorded topology %q local %d persistence %q, want etcd %d %q",
					r.Topology, r.Local, r.Persistence, tc.local, tc.persistence)
			}
			if slices.ContainsFunc(r.Servers, func(e string) bool { return strings.Contains(e, "secretpw") }) {
				t.Errorf("recorded endpoints show the password: %q", r.Servers)
			}
		})
	}
}

// A replicated set's roles are refused on a service at plan time, as
// before the registry: not when the servers have started.
func TestServiceRefusesReplicaIndex(t *testing.T) {
	for _, topo := range []string{"etcd", "zookeeper", "postgres"} {
		doc := "settings: {topology: " + topo + "}\nfaults: [{at: 1s, kind: crash, replica_index: [0]}]\n"
		_, err := Parse("x.yaml", []byte(doc), true)
		if err == nil || !strings.Contains(err.Error(), "replica_index and sentinel_index need topology replicated") {
			t.Errorf("%s: %v; want replica_index refused", topo, err)
		}
	}
}
