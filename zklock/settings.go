package zklock

import (
	"fmt"
	"net"
	"time"

	"lockbench/internal/redact"
	"lockbench/plan"
	"lockbench/results"
)

// Name is the topology that locks with ZooKeeper's lock recipe: a local
// ensemble (local: servers) or an external one (zookeeper_servers).
const Name = "zookeeper"

// DefaultServers is a local ensemble's size when local is not given.
const DefaultServers = 3

// ZooKeeper's persistence: forceSync=yes (its default), or no.
const (
	Fsync   = "fsync"
	NoFsync = "no-fsync"
)

// minTTL and maxTTL bound the session timeout a local ensemble is set up
// to grant (its tickTime follows the TTL, within 50 ms..2 s).
const (
	minTTL = 100 * time.Millisecond
	maxTTL = 10 * time.Minute
)

// zookeeper is the service's plan.Topology and service.Service.
type zookeeper struct{ plan.ServiceBase }

func (zookeeper) About() string {
	return "the lock recipe; --local servers, default 3, or --zookeeper-servers"
}
func (zookeeper) Name() string { return Name }
func (zookeeper) ServersSetting() plan.ServersSetting {
	return plan.ServersSetting{Name: "zookeeper_servers", Usage: "zookeeper, an external ensemble: its servers as host:port (comma-separated); nothing is started"}
}
func (zookeeper) WaitStrategies() []string { return WaitStrategies }
func (zookeeper) Replicas() int            { return 0 }
func (zookeeper) Roles() bool              { return true }

func members(s plan.Settings) int { return s.LocalMembers(DefaultServers) }

// maxClientCnxns is a local server's limit of connections from one
// address: every contender's session may land on one server.
func maxClientCnxns(s plan.Settings) int { return max(60, s.Workers*max(1, s.Clients)+10) }

// Check: the settings topology zookeeper takes, each other one refused
// with one line naming it.
func (zookeeper) Check(s plan.Settings) error {
	p, ttl, lat := s.ServicePersistence(), time.Duration(s.TTL), time.Duration(s.MemberLatency)
	switch {
	case !s.External() && (members(s) < 1 || members(s) > 7):
		return fmt.Errorf("local: %d is not accepted with topology zookeeper; use 1..7 local servers", s.Local)
	case s.External() && p != "":
		return fmt.Errorf("persistence: %q is not accepted with %s; an external ensemble keeps its own forceSync (leave it unset)", p, s.ServersName("zookeeper_servers"))
	case p != "" && p != Fsync && p != NoFsync:
		return fmt.Errorf("persistence: %q is not accepted with topology zookeeper; use fsync (forceSync=yes, its default) or no-fsync (forceSync=no)", p)
	case lat < 0 || lat%time.Millisecond != 0 || lat > 10*time.Second || lat != 0 && (s.External() || members(s) < 2):
		return fmt.Errorf("member-latency: %v is not accepted; use whole milliseconds up to 10s, with 2 or more local servers (an external ensemble's links are its own)", s.MemberLatency)
	case ttl%time.Millisecond != 0 || ttl < minTTL || ttl > maxTTL:
		return fmt.Errorf("ttl: %v is not accepted with topology zookeeper; it is the session timeout, whole milliseconds from %v to %v", s.TTL, minTTL, maxTTL)
	}
	return checkServers(s.ServersName("zookeeper_servers"), s.Servers)
}

// CheckFault: crash, pause and the network faults; a fake clock is not
// shown to move a JVM's.
func (zookeeper) CheckFault(where string, s plan.Settings, f plan.Fault) error {
	switch {
	case f.Kind == results.FaultClockJump:
		return fmt.Errorf("%s.kind: clock_jump is not available with topology zookeeper: libfaketime is not shown to move a JVM's clock, nor a Go client's; use crash or pause", where)
	case f.Kind != results.FaultCrash && f.Kind != results.FaultPause && !plan.IsNetwork(f.Kind):
		return fmt.Errorf("%s.kind: %s is not available with topology zookeeper; use crash or pause (master_index or role: leader|follower), or partition, latency or reset", where, f.Kind)
	}
	return nil
}

// Members: 3 unless local is given.
func (zookeeper) Members(s plan.Settings) int { return members(s) }

// Record: the servers' forceSync.
func (zookeeper) Record(s plan.Settings, out *results.Settings) {
	out.Persistence = s.FsyncPersistence()
}

func (zookeeper) ServersKey(s plan.Settings) string {
	return fmt.Sprintf("%s|%v|%d|%s|%v|%d|%v", Name, s.Servers, members(s), s.FsyncPersistence(), s.TTL, maxClientCnxns(s), s.MemberLatency)
}

func (zookeeper) Describe(s plan.Settings) string {
	if s.External() {
		return fmt.Sprintf("zookeeper: %d given servers", len(s.Servers))
	}
	return fmt.Sprintf("zookeeper: %d local servers", members(s))
}

// checkServers: each server host:port, once.
func checkServers(name string, addrs []string) error {
	seen := map[string]bool{}
	for _, a := range addrs {
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			return fmt.Errorf("%s: %q is not accepted; use host:port (comma-separated)", name, redact.URL(a))
		}
		if seen[a] {
			return fmt.Errorf("%s: %s is listed twice", name, a)
		}
		seen[a] = true
	}
	return nil
}

// Designs: three servers with forceSync on and off, and with the lock
// node's sequence as a fencing token.
func (zookeeper) Designs() []plan.Design {
	return []plan.Design{
		{Name: "zookeeper", Settings: "topology: zookeeper, local: 3, persistence: fsync, wait_strategy: queue"},
		{Name: "zookeeper-no-fsync", Settings: "topology: zookeeper, local: 3, persistence: no-fsync, wait_strategy: queue"},
		{Name: "zookeeper-fencing", Settings: "topology: zookeeper, local: 3, persistence: fsync, wait_strategy: queue, fencing: true"},
	}
}
