package results

// CellConfig is a result's config: the settings the cell ran on (this
// segment's share, secrets redacted, the masters as shown) and what else
// decided its figures. Its JSON is flat, as it was when configs were free
// maps: the settings' keys, then these, then a chaos cell's (ChaosConfig,
// nil for benchmark cells).
type CellConfig struct {
	Settings
	Quorum   int  `json:"quorum"`
	Embedded bool `json:"embedded_masters"`
	// ServerVersion is the servers' version as their service names it
	// ("redis-server 7.0.15", "etcd 3.4.23"); results written before it
	// named Redis' apart (legacy.go reads them).
	ServerVersion string `json:"server_version,omitempty"`
	// Service is what a lock service's cell ran on (nil for Redis).
	Service *ServiceSettings `json:"service,omitempty"`
	Version string           `json:"lockbench_version"`
	Redsync *RedsyncSettings `json:"redsync,omitempty"`
	// Adapter is the external lock client a cell ran (--client): its
	// library as its adapter named it, and what lockbench saw of it.
	Adapter *AdapterSettings `json:"adapter,omitempty"`
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

// ServiceSettings are what a lock service's cell ran on, in the words a
// report shows them in: results and report name no service.
type ServiceSettings struct {
	// Servers is where it ran: "3 local members (fsync)", "3 given
	// endpoints", "1 local server"; Server names one of them ("member",
	// "server (postmaster and backends)").
	Servers string `json:"servers"`
	Server  string `json:"server"`
	// Lease is the lock's lease as granted ("lease 10s", "session timeout
	// 2s, tickTime 200ms", "no lease: held until released or its
	// connection ends"); LeaseTTL the granted time (0: none).
	Lease    string   `json:"lease"`
	LeaseTTL Duration `json:"lease_ttl,omitempty"`
	// FenceSource says where the fencing token comes from ("none: ..."
	// for a lock without one).
	FenceSource string `json:"fence_source"`
	// Lost counts the sessions (Sessions names them: "sessions",
	// "connections") the service ended under their holders, replaced.
	Lost     int64  `json:"lost"`
	Sessions string `json:"sessions"`
	// CallsPerCycle are the lock calls in the measured window per lock
	// cycle; Calls names them ("lock calls", "lock requests").
	CallsPerCycle float64 `json:"calls_per_cycle,omitempty"` // absent: not counted
	Calls         string  `json:"calls"`
	// Baseline names the plain round trip acquires are compared with
	// ("etcd's Put round trip").
	Baseline string `json:"baseline"`
}

// AdapterSettings are the external client a cell ran (--client).
type AdapterSettings struct {
	Library  string `json:"library"`
	Version  string `json:"version"`
	Language string `json:"language,omitempty"`
	// Capabilities are the ones it claimed (extend, auto_extend, fence,
	// lost_notice); Validity how it computes what is left of a lock.
	Capabilities []string `json:"capabilities"`
	Validity     string   `json:"validity"`
	// LateGrants came after lockbench stopped waiting (released at once),
	// Indefinite are failures that may have happened, Cancels requests
	// lockbench gave up on.
	LateGrants int64 `json:"late_grants"`
	Indefinite int64 `json:"indefinite"`
	Cancels    int64 `json:"cancels"`
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
	Client int `json:"client"`
	// Attempts is Tally's, written as files always had it (a reader
	// need not add the outcomes up); it shadows Tally.Attempts. The row
	// writes few_acks too (a replicated cell's) since it embeds Tally.
	Attempts int64 `json:"attempts"`
	Tally
	AvailabilityAttempts float64 `json:"availability_attempts"`
	Overruns             int64   `json:"overruns"`
}
