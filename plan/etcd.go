package plan

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"lockbench/engine"
	"lockbench/etcdlock"
)

// TopologyEtcd is etcd as the lock service: its concurrency.Mutex on a
// local cluster (local: members) or an external one (etcd_endpoints).
const TopologyEtcd engine.Topology = "etcd"

// DefaultEtcdMembers is how many members a local etcd cluster has when
// local is left at its default.
const DefaultEtcdMembers = 3

// etcd's persistence: every write fsynced to its WAL (etcd's default), or
// --unsafe-no-fsync.
const (
	EtcdFsync   = "fsync"
	EtcdNoFsync = "no-fsync"
)

// etcdMinTTL is the shortest lease a default etcd grants as asked: it
// raises a shorter one to its minimum (1.5 election timeouts, 2 s).
const etcdMinTTL = 2 * time.Second

// Etcd says the cell locks on etcd.
func (s Settings) Etcd() bool { return s.Topology == string(TopologyEtcd) }

// ExternalEtcd says the etcd cluster is someone else's: its endpoints were
// given, nothing is started here.
func (s Settings) ExternalEtcd() bool { return s.Etcd() && len(s.EtcdEndpoints) > 0 }

// EtcdMembers is a local cluster's size: local as given, 3 when local was
// not given (its default is Redis' 5 masters).
func (s Settings) EtcdMembers() int {
	if !s.IsGiven("local") {
		return DefaultEtcdMembers
	}
	return s.Local
}

// etcdPersistence is what a result records: fsync or no-fsync for local
// members (fsync when unset: etcd's default), "" for an external cluster.
func (s Settings) etcdPersistence() string {
	switch {
	case s.ExternalEtcd():
		return ""
	case s.Persistence == "" || s.Persistence == "none" && !s.IsGiven("persistence"):
		return EtcdFsync
	}
	return s.Persistence
}

// EtcdNoFsyncSet says the members run with --unsafe-no-fsync.
func (s Settings) EtcdNoFsyncSet() bool { return s.etcdPersistence() == EtcdNoFsync }

// checkEtcd: the settings topology etcd takes, each other one refused with
// one line naming it.
func (s Settings) checkEtcd() error {
	d := Defaults()
	p := s.Persistence
	if p == "none" && !s.IsGiven("persistence") {
		p = "" // a fault scenario's default (Redis' none): etcd runs its own, fsync
	}
	switch {
	case len(s.Masters) > 0:
		return fmt.Errorf("masters: topology etcd locks on etcd; give etcd-endpoints (an external cluster) or local: M members, not Redis masters")
	case !s.ExternalEtcd() && (s.EtcdMembers() < 1 || s.EtcdMembers() > 7):
		return fmt.Errorf("local: %d is not accepted with topology etcd; use 1..7 local members", s.Local)
	case s.ExternalEtcd() && p != "":
		return fmt.Errorf("persistence: %q is not accepted with etcd-endpoints; an external cluster keeps its own fsync setting (leave it unset)", p)
	case p != "" && p != EtcdFsync && p != EtcdNoFsync:
		return fmt.Errorf("persistence: %q is not accepted with topology etcd; use fsync (etcd's default: every write fsynced) or no-fsync (--unsafe-no-fsync)", p)
	case s.Driver != d.Driver || s.IsGiven("driver"):
		return fmt.Errorf("driver: %s is a Redis client; topology etcd uses etcd's own concurrency.Mutex (leave driver unset)", s.Driver)
	case s.Mode != d.Mode || s.Wait != d.Wait || s.IsGiven("mode") || s.IsGiven("wait"):
		return fmt.Errorf("mode/wait: %s/%s are Redlock's (masters one after another or at once); etcd has one quorum of its own (leave them unset)", s.Mode, s.Wait)
	case s.Embedded == "always":
		return fmt.Errorf("embedded: always is not accepted with topology etcd; it runs real etcd members")
	case s.NetLatency > 0:
		return fmt.Errorf("net-latency: not yet with topology etcd (the proxy stands in front of Redis masters only)")
	case s.LocalCPUs != "":
		return fmt.Errorf("local-cpus: not yet with topology etcd (it pins redis-server masters)")
	case s.AutoExtend:
		return fmt.Errorf("auto-extend: not with topology etcd; a session keeps its lease alive by itself")
	case len(s.ZookeeperServers) > 0 || s.PostgresURL != "":
		return fmt.Errorf("zookeeper-servers/postgres-url: need their own topology; topology is etcd")
	case s.WaitReplicas != 0:
		return fmt.Errorf("wait-replicas: %d needs topology replicated; etcd commits each write on a quorum of members itself", s.WaitReplicas)
	}
	if name := s.redisOnlyGiven(); name != "" {
		return fmt.Errorf("%s: is the Redis client's; topology etcd does not take it (etcd's calls have no per-master timeout, drift or batching: leave it unset)", FlagName(name))
	}
	if !slices.Contains(etcdlock.WaitStrategies, s.WaitStrategy) {
		return fmt.Errorf("wait-strategy: %q is not accepted with topology etcd; use %s", s.WaitStrategy, strings.Join(etcdlock.WaitStrategies, ", "))
	}
	if ttl := time.Duration(s.TTL); ttl%time.Second != 0 || ttl < etcdMinTTL {
		return fmt.Errorf("ttl: %v is not accepted with topology etcd; its lease takes whole seconds, at least %v (etcd raises a shorter one to its minimum)", s.TTL, etcdMinTTL)
	}
	if l := time.Duration(s.MemberLatency); l < 0 || l%time.Millisecond != 0 || l > 10*time.Second || l > 0 && s.ExternalEtcd() {
		return fmt.Errorf("member-latency: %v is not accepted; use whole milliseconds up to 10s, with local members (an external cluster's links are its own)", s.MemberLatency)
	}
	return checkEtcdEndpoints(s.EtcdEndpoints)
}

// checkEtcdFaultServers: an etcd fault cell starts its own members (it
// crashes them).
func (s Settings) checkEtcdFaultServers() error {
	if s.ExternalEtcd() {
		return fmt.Errorf("etcd-endpoints: a fault scenario starts its own etcd members (it crashes them); use local: M, not endpoints")
	}
	return s.checkFaultLoad()
}

// redisOnlyGiven is the first setting of the Redis client given (or set
// off its default) in an etcd cell; "" when none.
func (s Settings) redisOnlyGiven() string {
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

// checkEtcdEndpoints: each endpoint host:port or http(s)://[user:pass@]host:port, once.
func checkEtcdEndpoints(eps []string) error {
	seen := map[string]bool{}
	for _, ep := range eps {
		u, err := url.Parse(etcdURL(ep))
		if err != nil || u.Host == "" || u.Port() == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return fmt.Errorf("etcd-endpoints: %q is not accepted; use host:port or http(s)://[user:pass@]host:port", engine.RedactURL(ep))
		}
		if seen[u.Host] {
			return fmt.Errorf("etcd-endpoints: %s is listed twice", u.Host)
		}
		seen[u.Host] = true
	}
	return nil
}

// etcdURL is an endpoint as a URL (host:port alone is http).
func etcdURL(ep string) string {
	if strings.Contains(ep, "://") {
		return ep
	}
	return "http://" + ep
}

// EtcdEndpoints are the external endpoints as the client dials them
// (without credentials) and the credentials, taken from the first that has
// any.
func (s Settings) EtcdClientEndpoints() (eps []string, user, pass string) {
	for _, ep := range s.EtcdEndpoints {
		u, err := url.Parse(etcdURL(ep))
		if err != nil {
			continue
		}
		if u.User != nil && user == "" {
			user = u.User.Username()
			pass, _ = u.User.Password()
		}
		u.User = nil
		eps = append(eps, u.String())
	}
	return eps, user, pass
}

// etcdEngine is the etcd cell's retry terms in the engine's config (its
// strategy queue is etcd's own: the engine's checks see retry).
func (s Settings) etcdEngine(c *engine.Config) {
	c.Topology = engine.Redlock
	c.Masters = []string{"127.0.0.1:1"}
	if c.Strategy == etcdlock.StrategyQueue {
		c.Strategy = engine.StrategyRetry
	}
}
