package pglock

import (
	"fmt"
	"net/url"

	"lockbench/internal/redact"
	"lockbench/plan"
	"lockbench/results"
)

// Name is the topology that locks with PostgreSQL's session advisory
// locks: a local server or an external one (postgres_url).
const Name = "postgres"

// persistenceNA is what a postgres cell records: advisory locks live in
// the server's memory, not in its WAL.
const persistenceNA = "not applicable"

// postgres is the service's plan.Topology and service.Service.
type postgres struct{ plan.ServiceBase }

func (postgres) About() string { return "advisory locks; a local server or --postgres-url" }
func (postgres) Name() string  { return Name }
func (postgres) ServersSetting() plan.ServersSetting {
	return plan.ServersSetting{Name: "postgres_url", Usage: "postgres, an external server: postgres://user[:pass]@host:port/db; nothing is started", One: true}
}
func (postgres) WaitStrategies() []string { return WaitStrategies }

// Replicas: one streaming replica, to promote (a failover).
func (postgres) Replicas() int { return 1 }
func (postgres) Roles() bool   { return false }

// serverURL is the external server's URL ("" : a local server).
func serverURL(s plan.Settings) string {
	if len(s.Servers) == 0 {
		return ""
	}
	return s.Servers[0]
}

// maxConnections is a local server's max_connections: the contenders
// (every client's workers) and a few of lockbench's own (the baseline, a
// fault's own connection), at least PostgreSQL's default (so that cells
// of other sizes share the server).
func maxConnections(s plan.Settings) int { return max(100, s.Workers*max(1, s.Clients)+10) }

// Check: the settings topology postgres takes, each other one refused
// with one line naming it.
func (postgres) Check(s plan.Settings) error {
	switch {
	case s.IsGiven("local") && s.Local != 1:
		return fmt.Errorf("local: %d is not accepted with topology postgres; it runs one server (local: 1)", s.Local)
	case s.Persistence != "" && s.Persistence != "none" || s.IsGiven("persistence"):
		return fmt.Errorf("persistence: %q does not apply to topology postgres; advisory locks live in the server's memory, not its WAL (leave it unset)", s.Persistence)
	case s.IsGiven("ttl") || s.IsGiven("lease_time"):
		return fmt.Errorf("ttl: does not apply to topology postgres; an advisory lock has no lease, it holds until released or its connection ends (leave ttl unset)")
	case s.Fencing:
		return fmt.Errorf("fencing: an advisory lock has no token to fence with (topology postgres); leave fencing unset")
	case s.External() && s.ServiceReplicas() > 0:
		return fmt.Errorf("replicas: %d is not accepted with %s; a replica is started beside a local server only (an external one's are its own)", s.ServiceReplicas(), s.ServersName("postgres_url"))
	case s.Workers > 5000:
		return fmt.Errorf("workers: %d is not accepted with topology postgres; each is a connection (a server process): use at most 5000", s.Workers)
	}
	if len(s.Servers) > 1 {
		return fmt.Errorf("%s: %d servers are not accepted; give one server's URL", s.ServersName("postgres_url"), len(s.Servers))
	}
	if u := serverURL(s); u != "" {
		if pu, err := url.Parse(u); err != nil || (pu.Scheme != "postgres" && pu.Scheme != "postgresql") || pu.Host == "" {
			return fmt.Errorf("%s: %q is not accepted; use postgres://user[:pass]@host:port/db", s.ServersName("postgres_url"), redact.URL(u))
		}
	}
	return nil
}

// CheckFault: crash and pause of the server, a killed backend, and the
// clients' links; with a streaming replica, its promotion (failover) and
// its lag (replication_lag: its link to the primary cut).
func (postgres) CheckFault(where string, s plan.Settings, f plan.Fault) error {
	switch {
	case f.Kind == results.FaultFailover && s.ServiceReplicas() == 0:
		return fmt.Errorf("%s.kind: failover needs a streaming replica to promote (replicas: 1 with topology postgres)", where)
	case f.Kind == results.FaultReplicationLag && s.ServiceReplicas() == 0:
		return fmt.Errorf("%s.kind: replication_lag needs a streaming replica whose link to the primary it cuts (replicas: 1 with topology postgres)", where)
	case f.Kind != results.FaultCrash && f.Kind != results.FaultFailover && f.Kind != results.FaultReplicationLag && f.Kind != results.FaultPause &&
		f.Kind != results.FaultKillBackend && !plan.IsNetwork(f.Kind):
		return fmt.Errorf("%s.kind: %s is not available with topology postgres; use crash (master_index: [0], the server), pause (a client, or the server), kill_backend, failover or replication_lag (with replicas: 1), or partition, latency or reset of the clients' links", where, f.Kind)
	}
	return nil
}

// Members: the server, and its replica (master_index 1) if any.
func (postgres) Members(s plan.Settings) int { return 1 + s.ServiceReplicas() }

// Record: no persistence and no lease.
func (postgres) Record(_ plan.Settings, out *results.Settings) {
	out.Persistence, out.TTL = persistenceNA, 0
}

func (postgres) ServersKey(s plan.Settings) string {
	return fmt.Sprintf("%s|%s|%d|%d", Name, serverURL(s), maxConnections(s), s.ServiceReplicas())
}

func (postgres) Describe(s plan.Settings) string {
	if s.External() {
		return "postgres: given server"
	}
	if s.ServiceReplicas() > 0 {
		return "postgres: 1 local primary + 1 streaming replica"
	}
	return "postgres: 1 local server"
}

// Designs: one server and a primary with a streaming replica, each with
// and without the guarded write; an advisory lock has no lease (ttl
// unset).
func (postgres) Designs() []plan.Design {
	return []plan.Design{
		{Name: "postgres", Settings: "topology: postgres, wait_strategy: queue, ttl: unset"},
		{Name: "postgres-guarded", Settings: "topology: postgres, wait_strategy: queue, guarded_write: true, ttl: unset"},
		{Name: "postgres-replica", Settings: "topology: postgres, replicas: 1, wait_strategy: queue, ttl: unset"},
		{Name: "postgres-replica-guarded", Settings: "topology: postgres, replicas: 1, wait_strategy: queue, guarded_write: true, ttl: unset"},
	}
}
