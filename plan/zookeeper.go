package plan

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"lockbench/engine"
	"lockbench/zklock"
)

// TopologyZookeeper is ZooKeeper's lock recipe as the lock service: a
// local ensemble (local: servers) or an external one (zookeeper_servers).
const TopologyZookeeper engine.Topology = "zookeeper"

// DefaultZookeeperServers is a local ensemble's size when local is not
// given.
const DefaultZookeeperServers = 3

// zkMinTTL and zkMaxTTL bound the session timeout a local ensemble is
// set up to grant (its tickTime follows the TTL, within 50 ms..2 s).
const (
	zkMinTTL = 100 * time.Millisecond
	zkMaxTTL = 10 * time.Minute
)

// Zookeeper says the cell locks on ZooKeeper.
func (s Settings) Zookeeper() bool { return s.Topology == string(TopologyZookeeper) }

// ExternalZookeeper says the ensemble is someone else's: its servers were
// given, nothing is started here.
func (s Settings) ExternalZookeeper() bool { return s.Zookeeper() && len(s.ZookeeperServers) > 0 }

// Consensus says the cell locks on a consensus cluster (etcd or
// ZooKeeper): its members have roles, a leader and followers.
func (s Settings) Consensus() bool { return s.Etcd() || s.Zookeeper() }

// checkZookeeperFaultServers: a zookeeper fault cell starts its own
// servers (it crashes them).
func (s Settings) checkZookeeperFaultServers() error {
	if s.ExternalZookeeper() {
		return fmt.Errorf("zookeeper-servers: a fault scenario starts its own ZooKeeper servers (it crashes them); use local: M, not servers")
	}
	return s.checkFaultLoad()
}

// ZookeeperMembers is a local ensemble's size: local as given, 3 when
// local was not given (its default is Redis' 5 masters).
func (s Settings) ZookeeperMembers() int {
	if !s.IsGiven("local") {
		return DefaultZookeeperServers
	}
	return s.Local
}

// ZookeeperMaxClientCnxns is a local server's limit of connections from
// one address: every contender's session may land on one server.
func (s Settings) ZookeeperMaxClientCnxns() int { return max(60, s.Workers*max(1, s.Clients)+10) }

// zookeeperPersistence is what a result records: fsync (forceSync=yes,
// ZooKeeper's default) or no-fsync for local servers, "" for external.
func (s Settings) zookeeperPersistence() string {
	switch {
	case s.ExternalZookeeper():
		return ""
	case s.Persistence == "" || s.Persistence == "none" && !s.IsGiven("persistence"):
		return EtcdFsync
	}
	return s.Persistence
}

// ZookeeperNoFsync says the local servers run with forceSync=no.
func (s Settings) ZookeeperNoFsync() bool { return s.zookeeperPersistence() == EtcdNoFsync }

// checkZookeeper: the settings topology zookeeper takes, each other one
// refused with one line naming it.
func (s Settings) checkZookeeper() error {
	d := Defaults()
	p := s.Persistence
	if p == "none" && !s.IsGiven("persistence") {
		p = ""
	}
	ttl := time.Duration(s.TTL)
	switch {
	case len(s.Masters) > 0:
		return fmt.Errorf("masters: topology zookeeper locks on ZooKeeper; give zookeeper-servers (an external ensemble) or local: M servers, not Redis masters")
	case !s.ExternalZookeeper() && (s.ZookeeperMembers() < 1 || s.ZookeeperMembers() > 7):
		return fmt.Errorf("local: %d is not accepted with topology zookeeper; use 1..7 local servers", s.Local)
	case s.ExternalZookeeper() && p != "":
		return fmt.Errorf("persistence: %q is not accepted with zookeeper-servers; an external ensemble keeps its own forceSync (leave it unset)", p)
	case p != "" && p != EtcdFsync && p != EtcdNoFsync:
		return fmt.Errorf("persistence: %q is not accepted with topology zookeeper; use fsync (forceSync=yes, its default) or no-fsync (forceSync=no)", p)
	case s.Driver != d.Driver || s.IsGiven("driver"):
		return fmt.Errorf("driver: %s is a Redis client; topology zookeeper uses go-zookeeper with the lock recipe (leave driver unset)", s.Driver)
	case s.Mode != d.Mode || s.Wait != d.Wait || s.IsGiven("mode") || s.IsGiven("wait"):
		return fmt.Errorf("mode/wait: %s/%s are Redlock's; ZooKeeper has one quorum of its own (leave them unset)", s.Mode, s.Wait)
	case s.Embedded == "always":
		return fmt.Errorf("embedded: always is not accepted with topology zookeeper; it runs real ZooKeeper servers")
	case s.NetLatency > 0 || s.LocalCPUs != "":
		return fmt.Errorf("net-latency/local-cpus: not yet with topology zookeeper")
	case time.Duration(s.MemberLatency) < 0 || time.Duration(s.MemberLatency)%time.Millisecond != 0 || time.Duration(s.MemberLatency) > 10*time.Second ||
		s.MemberLatency != 0 && (s.ExternalZookeeper() || s.ZookeeperMembers() < 2):
		return fmt.Errorf("member-latency: %v is not accepted; use whole milliseconds up to 10s, with 2 or more local servers (an external ensemble's links are its own)", s.MemberLatency)
	case s.AutoExtend:
		return fmt.Errorf("auto-extend: not with topology zookeeper; a session keeps itself alive with pings")
	case s.WaitReplicas != 0:
		return fmt.Errorf("wait-replicas: %d needs topology replicated; ZooKeeper commits each write on a quorum itself", s.WaitReplicas)
	case len(s.EtcdEndpoints) > 0 || s.PostgresURL != "":
		return fmt.Errorf("etcd-endpoints/postgres-url: need their own topology; topology is zookeeper")
	case ttl%time.Millisecond != 0 || ttl < zkMinTTL || ttl > zkMaxTTL:
		return fmt.Errorf("ttl: %v is not accepted with topology zookeeper; it is the session timeout, whole milliseconds from %v to %v", s.TTL, zkMinTTL, zkMaxTTL)
	}
	if name := s.redisOnlyGiven(); name != "" {
		return fmt.Errorf("%s: is the Redis client's; topology zookeeper does not take it (leave it unset)", FlagName(name))
	}
	if !slices.Contains(zklock.WaitStrategies, s.WaitStrategy) {
		return fmt.Errorf("wait-strategy: %q is not accepted with topology zookeeper; use %s", s.WaitStrategy, strings.Join(zklock.WaitStrategies, ", "))
	}
	return checkZookeeperServers(s.ZookeeperServers)
}

// checkZookeeperServers: each server host:port, once.
func checkZookeeperServers(addrs []string) error {
	seen := map[string]bool{}
	for _, a := range addrs {
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			return fmt.Errorf("zookeeper-servers: %q is not accepted; use host:port (comma-separated)", engine.RedactURL(a))
		}
		if seen[a] {
			return fmt.Errorf("zookeeper-servers: %s is listed twice", a)
		}
		seen[a] = true
	}
	return nil
}
