package plan

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"lockbench/engine"
	"lockbench/pglock"
)

// TopologyPostgres is PostgreSQL's session advisory locks as the lock
// service: a local server or an external one (postgres_url).
const TopologyPostgres engine.Topology = "postgres"

// persistenceNA is what a postgres cell records: advisory locks live in
// the server's memory, not in its WAL.
const persistenceNA = "not applicable"

// Postgres says the cell locks with PostgreSQL advisory locks.
func (s Settings) Postgres() bool { return s.Topology == string(TopologyPostgres) }

// ExternalPostgres says the server is someone else's (postgres_url given).
func (s Settings) ExternalPostgres() bool { return s.Postgres() && s.PostgresURL != "" }

// PostgresMaxConnections is a local server's max_connections: the
// contenders (every client's workers) and a few of lockbench's own (the
// baseline, a fault's own connection), at least PostgreSQL's default (so
// that cells of other sizes share the server).
func (s Settings) PostgresMaxConnections() int { return max(100, s.Workers*max(1, s.Clients)+10) }

// checkPostgres: the settings topology postgres takes, each other one
// refused with one line naming it.
func (s Settings) checkPostgres() error {
	d := Defaults()
	switch {
	case len(s.Masters) > 0:
		return fmt.Errorf("masters: topology postgres locks on one PostgreSQL server; give postgres-url (an external one) or nothing (a local one)")
	case s.IsGiven("local") && s.Local != 1:
		return fmt.Errorf("local: %d is not accepted with topology postgres; it runs one server (local: 1)", s.Local)
	case s.Persistence != "" && s.Persistence != "none" || s.IsGiven("persistence"):
		return fmt.Errorf("persistence: %q does not apply to topology postgres; advisory locks live in the server's memory, not its WAL (leave it unset)", s.Persistence)
	case s.IsGiven("ttl") || s.IsGiven("lease_time") || s.AutoExtend:
		return fmt.Errorf("ttl: does not apply to topology postgres; an advisory lock has no lease, it holds until released or its connection ends (leave ttl and auto-extend unset)")
	case s.Driver != d.Driver || s.IsGiven("driver"):
		return fmt.Errorf("driver: %s is a Redis client; topology postgres uses pgx (leave driver unset)", s.Driver)
	case s.Mode != d.Mode || s.Wait != d.Wait || s.IsGiven("mode") || s.IsGiven("wait"):
		return fmt.Errorf("mode/wait: %s/%s are Redlock's; a PostgreSQL server is one (leave them unset)", s.Mode, s.Wait)
	case s.Embedded == "always":
		return fmt.Errorf("embedded: always is not accepted with topology postgres; it runs a real PostgreSQL server")
	case s.NetLatency > 0 || s.LocalCPUs != "":
		return fmt.Errorf("net-latency/local-cpus: not yet with topology postgres")
	case s.WaitReplicas != 0:
		return fmt.Errorf("wait-replicas: %d needs topology replicated", s.WaitReplicas)
	case len(s.EtcdEndpoints) > 0 || s.MemberLatency != 0:
		return fmt.Errorf("etcd-endpoints/member-latency: need topology etcd; topology is postgres")
	case s.Fencing:
		return fmt.Errorf("fencing: an advisory lock has no token to fence with (topology postgres); leave fencing unset")
	case len(s.ZookeeperServers) > 0:
		return fmt.Errorf("zookeeper-servers: needs topology zookeeper; topology is postgres")
	case s.Workers > 5000:
		return fmt.Errorf("workers: %d is not accepted with topology postgres; each is a connection (a server process): use at most 5000", s.Workers)
	}
	if name := s.redisOnlyGiven(); name != "" {
		return fmt.Errorf("%s: is the Redis client's; topology postgres does not take it (leave it unset)", FlagName(name))
	}
	if !slices.Contains(pglock.WaitStrategies, s.WaitStrategy) {
		return fmt.Errorf("wait-strategy: %q is not accepted with topology postgres; use %s", s.WaitStrategy, strings.Join(pglock.WaitStrategies, ", "))
	}
	if s.PostgresURL != "" {
		if u, err := url.Parse(s.PostgresURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
			return fmt.Errorf("postgres-url: %q is not accepted; use postgres://user[:pass]@host:port/db", engine.RedactURL(s.PostgresURL))
		}
	}
	return s.checkNotReplicated(TopologyPostgres)
}
