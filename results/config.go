package results

// CellConfig is a result's config: the settings the cell ran on (this
// segment's share, secrets redacted, the masters as shown) and what else
// decided its figures. Its JSON is flat, as it was when configs were free
// maps: the settings' keys, then these, then a chaos cell's (ChaosConfig,
// nil for benchmark cells).
type CellConfig struct {
	Settings
	Quorum       int    `json:"quorum"`
	Embedded     bool   `json:"embedded_masters"`
	RedisVersion string `json:"redis_server_version,omitempty"`
	// ServerVersion is a lock service's server other than Redis ("etcd 3.4.23").
	ServerVersion string `json:"server_version,omitempty"`
	// Etcd is what an etcd cell ran on (nil for Redis).
	Etcd *EtcdSettings `json:"etcd,omitempty"`
	// Postgres is what a postgres cell ran on (nil otherwise).
	Postgres *PostgresSettings `json:"postgres,omitempty"`
	// Zookeeper: a zookeeper cell's session terms (nil otherwise).
	Zookeeper *ZookeeperSettings `json:"zookeeper,omitempty"`
	Version   string             `json:"lockbench_version"`
	Redsync   *RedsyncSettings   `json:"redsync,omitempty"`
	// Expect are the cell's own rules (any cell's: a sweep may carry
	// them), metric → condition, and ExpectFailed the ones it did not
	// meet; in the JSON beside a fault cell's part, as they always were.
	Expect       map[string]string `json:"expect"`
	ExpectFailed []string          `json:"expect_failed"`
	*ChaosConfig
}

// N is the number of masters the cell ran on.
func (c *CellConfig) N() int {
	if len(c.Masters) > 0 {
		return len(c.Masters)
	}
	return c.Local
}

// EtcdSettings are the terms an etcd cell's locks ran on.
type EtcdSettings struct {
	// LeaseTTL is what the server granted each session (asked: ttl).
	LeaseTTL Duration `json:"lease_ttl"`
	// FenceSource says where the fencing token comes from.
	FenceSource string `json:"fence_source"`
	// LostSessions are sessions whose lease ended under them (replaced).
	LostSessions int64 `json:"lost_sessions"`
	// RPCsPerCycle are the lock calls (Txn, Get, Delete) in the measured
	// window per lock cycle.
	RPCsPerCycle float64 `json:"rpcs_per_cycle"`
}

// ZookeeperSettings are what a zookeeper cell's locks ran on.
type ZookeeperSettings struct {
	// SessionTimeout is what the servers granted each session (asked:
	// ttl); TickTime is a local ensemble's, fitted to it.
	SessionTimeout Duration `json:"session_timeout"`
	TickTime       Duration `json:"tick_time,omitempty"`
	FenceSource    string   `json:"fence_source"`
	// LostSessions are sessions that expired under them (replaced).
	LostSessions int64 `json:"lost_sessions"`
	// RPCsPerCycle are the lock requests (creates, children, exists,
	// deletes) in the measured window per lock cycle.
	RPCsPerCycle float64 `json:"rpcs_per_cycle"`
}

// PostgresSettings are what a postgres cell's locks ran on.
type PostgresSettings struct {
	Lease           string  `json:"lease"`
	FenceSource     string  `json:"fence_source"`
	LostConnections int64   `json:"lost_connections"`
	CallsPerCycle   float64 `json:"calls_per_cycle"`
}

// RedsyncSettings are the terms the redsync driver ran on.
type RedsyncSettings struct {
	// PoolSize is go-redis' connections per master: 2 × workers (at least
	// go-redis' default of 10 per core). Each worker has one command in
	// flight per master; under wait=quorum one more may still be finishing.
	PoolSize int `json:"pool_size"`
	// DriftFactor is what redsync is given. redsync's drift is TTL × factor,
	// the engine's TTL × factor + 2 ms; the factor is raised by 2 ms / TTL so
	// both lock windows end at t1 + TTL − drift.
	DriftFactor float64 `json:"drift_factor"`
	Drift       string  `json:"drift"`
	// Timeout bounds each master's reply to acquire, release and extend.
	Timeout string `json:"per_master_timeout"`
	// Retries are the driver's loop over redsync's TryLockContext (one
	// attempt each), with the engine's random delay, so that every attempt's
	// per-master outcomes are seen.
	Retries int `json:"retries"`
}

// ChaosConfig is what a fault cell adds to the settings (which hold its
// clients, client mode, fencing, check_validity and acquisitions): its
// scenario, faults and expectations, and the checkers' figures. In a fault
// cell's Settings, workers is the total over the clients.
type ChaosConfig struct {
	Scenario         string      `json:"scenario"`
	Cell             string      `json:"cell"`
	WorkersPerClient int         `json:"workers_per_client"`
	Faults           []string    `json:"faults"`
	Proxied          bool        `json:"proxied"`
	Checks           ChaosChecks `json:"checks"`
}

// ChaosChecks are the protected-resource checker's and the probe's figures.
type ChaosChecks struct {
	HoldsLogged        int64  `json:"holds_logged"`
	JudgedHolds        int64  `json:"judged_holds"`
	HoldsNotJudged     int64  `json:"holds_not_judged"`
	FinalSum           int64  `json:"final_sum"`
	AcknowledgedWrites int64  `json:"acknowledged_writes"`
	StaleReadsRejected int64  `json:"stale_reads_rejected"`
	FencingTokens      int64  `json:"fencing_tokens"`
	ProbeViolations    int64  `json:"probe_violations"`
	ProbeScope         string `json:"probe_scope"`
	ResourceErrors     int64  `json:"resource_errors"`
	Attempts           int64  `json:"attempts"`
	// PerClient is each client's counts.
	PerClient []ClientCounts `json:"per_client"`
}

// ClientCounts are one chaos client's acquire attempts by outcome.
type ClientCounts struct {
	Client               int     `json:"client"`
	Attempts             int64   `json:"attempts"`
	Acquired             int64   `json:"acquired"`
	NotAcquired          int64   `json:"not_acquired"`
	Errors               int64   `json:"errors"`
	AvailabilityAttempts float64 `json:"availability_attempts"`
	Overruns             int64   `json:"overruns"`
}
