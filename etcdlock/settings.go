package etcdlock

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"lockbench/internal/redact"
	"lockbench/plan"
	"lockbench/results"
)

// Name is the topology that locks on etcd: its concurrency.Mutex on a
// local cluster (local: members) or an external one (etcd_endpoints).
const Name = "etcd"

// DefaultMembers is how many members a local cluster has when local is
// left at its default.
const DefaultMembers = 3

// etcd's persistence: every write fsynced to its WAL (etcd's default), or
// --unsafe-no-fsync.
const (
	Fsync   = "fsync"
	NoFsync = "no-fsync"
)

// minTTL is the shortest lease a default etcd grants as asked: it raises
// a shorter one to its minimum (1.5 election timeouts, 2 s).
const minTTL = 2 * time.Second

// etcd is the service's plan.Topology and service.Service.
type etcd struct{ plan.ServiceBase }

func (etcd) About() string {
	return "etcd's concurrency.Mutex; --local members, default 3, or --etcd-endpoints"
}
func (etcd) Name() string { return Name }
func (etcd) ServersSetting() plan.ServersSetting {
	return plan.ServersSetting{Name: "etcd_endpoints", Usage: "etcd, an external cluster: its client endpoints as host:port or http(s)://[user:pass@]host:port (comma-separated); nothing is started"}
}
func (etcd) WaitStrategies() []string { return WaitStrategies }
func (etcd) Replicas() int            { return 0 }
func (etcd) Roles() bool              { return true }

// members is a local cluster's size.
func members(s plan.Settings) int { return s.LocalMembers(DefaultMembers) }

// Check: the settings topology etcd takes, each other one refused with
// one line naming it.
func (etcd) Check(s plan.Settings) error {
	p := s.ServicePersistence()
	switch {
	case !s.External() && (members(s) < 1 || members(s) > 7):
		return fmt.Errorf("local: %d is not accepted with topology etcd; use 1..7 local members", s.Local)
	case s.External() && p != "":
		return fmt.Errorf("persistence: %q is not accepted with %s; an external cluster keeps its own fsync setting (leave it unset)", p, s.ServersName("etcd_endpoints"))
	case p != "" && p != Fsync && p != NoFsync:
		return fmt.Errorf("persistence: %q is not accepted with topology etcd; use fsync (etcd's default: every write fsynced) or no-fsync (--unsafe-no-fsync)", p)
	}
	if ttl := time.Duration(s.TTL); ttl%time.Second != 0 || ttl < minTTL {
		return fmt.Errorf("ttl: %v is not accepted with topology etcd; its lease takes whole seconds, at least %v (etcd raises a shorter one to its minimum)", s.TTL, minTTL)
	}
	if l := time.Duration(s.MemberLatency); l < 0 || l%time.Millisecond != 0 || l > 10*time.Second || l > 0 && s.External() {
		return fmt.Errorf("member-latency: %v is not accepted; use whole milliseconds up to 10s, with local members (an external cluster's links are its own)", s.MemberLatency)
	}
	return checkEndpoints(s.ServersName("etcd_endpoints"), s.Servers)
}

// CheckFault: crash, pause and the network faults; a fake clock does not
// move etcd's.
func (etcd) CheckFault(where string, s plan.Settings, f plan.Fault) error {
	switch {
	case f.Kind == results.FaultClockJump:
		return fmt.Errorf("%s.kind: clock_jump is not available with topology etcd: libfaketime does not move a Go program's clock (etcd's or lockbench's); use crash or pause", where)
	case f.Kind != results.FaultCrash && f.Kind != results.FaultPause && !plan.IsNetwork(f.Kind):
		return fmt.Errorf("%s.kind: %s is not available with topology etcd; use crash or pause (master_index or role: leader|follower), or partition, latency or reset", where, f.Kind)
	}
	return nil
}

// Members: 3 unless local is given.
func (etcd) Members(s plan.Settings) int { return members(s) }

// Record: the members' fsync.
func (etcd) Record(s plan.Settings, out *results.Settings) { out.Persistence = s.FsyncPersistence() }

func (etcd) ServersKey(s plan.Settings) string {
	return fmt.Sprintf("%s|%v|%d|%s|%v", Name, s.Servers, members(s), s.FsyncPersistence(), s.MemberLatency)
}

func (etcd) Describe(s plan.Settings) string {
	if s.External() {
		return fmt.Sprintf("etcd: %d given endpoints", len(s.Servers))
	}
	return fmt.Sprintf("etcd: %d local members", members(s))
}

// checkEndpoints: each endpoint host:port or http(s)://[user:pass@]host:port, once.
func checkEndpoints(name string, eps []string) error {
	seen := map[string]bool{}
	for _, ep := range eps {
		u, err := url.Parse(endpointURL(ep))
		if err != nil || u.Host == "" || u.Port() == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return fmt.Errorf("%s: %q is not accepted; use host:port or http(s)://[user:pass@]host:port", name, redact.URL(ep))
		}
		if seen[u.Host] {
			return fmt.Errorf("%s: %s is listed twice", name, u.Host)
		}
		seen[u.Host] = true
	}
	return nil
}

// endpointURL is an endpoint as a URL (host:port alone is http).
func endpointURL(ep string) string {
	if strings.Contains(ep, "://") {
		return ep
	}
	return "http://" + ep
}

// clientEndpoints are the external endpoints as the client dials them
// (without credentials) and the credentials, taken from the first that
// has any.
func clientEndpoints(s plan.Settings) (eps []string, user, pass string) {
	for _, ep := range s.Servers {
		u, err := url.Parse(endpointURL(ep))
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

// Designs: three members with and without fsync, and with the lock's
// revision as a fencing token.
func (etcd) Designs() []plan.Design {
	return []plan.Design{
		{Name: "etcd", Settings: "topology: etcd, local: 3, persistence: fsync, wait_strategy: queue"},
		{Name: "etcd-no-fsync", Settings: "topology: etcd, local: 3, persistence: no-fsync, wait_strategy: queue"},
		{Name: "etcd-fencing", Settings: "topology: etcd, local: 3, persistence: fsync, wait_strategy: queue, fencing: true"},
	}
}
