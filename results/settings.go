package results

import (
	"encoding/json"
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a time.Duration written as "10s" in YAML and JSON.
type Duration time.Duration

func (d Duration) String() string               { return time.Duration(d).String() }
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }
func (d Duration) MarshalYAML() (any, error)    { return d.String(), nil }
func (d *Duration) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] != '"' {
		// A bare number is nanoseconds, as time.Duration writes itself.
		var ns int64
		if err := json.Unmarshal(b, &ns); err != nil {
			return fmt.Errorf("%s is not a duration; use a string such as \"10s\"", b)
		}
		*d = Duration(ns)
		return nil
	}
	return d.parse(string(trimQuotes(b)))
}
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("want a duration such as 10s")
	}
	return d.parse(n.Value)
}

// ParseDuration reads "10s", "500ms" or "0".
func ParseDuration(s string) (Duration, error) {
	var d Duration
	err := d.parse(s)
	return d, err
}

func (d *Duration) parse(s string) error {
	if s == "0" {
		*d = 0
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration; use a number with a unit, such as 500ms or 10s", s)
	}
	*d = Duration(v)
	return nil
}

func trimQuotes(b []byte) []byte {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		return b[1 : len(b)-1]
	}
	return b
}

// Settings is every setting of one benchmark cell, as plain data; the YAML
// and JSON names are the flag names with "-" written as "_". plan.Settings
// is this type with its checks, flags and derived configurations. It lives
// here, not in plan, so that a result can hold the settings it ran on
// (CellConfig): plan imports engine and workloads, which import results,
// so results cannot import plan.
type Settings struct {
	// Masters
	Masters     []string `yaml:"masters" json:"masters"`
	Local       int      `yaml:"local" json:"local"` // N local masters when Masters is empty
	Persistence string   `yaml:"persistence" json:"persistence"`
	Embedded    string   `yaml:"embedded" json:"embedded"`
	// LocalCPUs pins the local masters to these CPUs and lockbench to the
	// others ("0", "2-3"), so they stop competing for the same cores.
	LocalCPUs string `yaml:"local_cpus" json:"local_cpus,omitempty"`
	// NetLatency puts every master behind an embedded toxiproxy that delays
	// its replies, to see the modes as they behave across a network.
	NetLatency  Duration `yaml:"net_latency" json:"net_latency,omitempty"`
	NetJitter   Duration `yaml:"net_jitter" json:"net_jitter,omitempty"`
	TLSCA       string   `yaml:"tls_ca" json:"tls_ca,omitempty"`
	TLSCert     string   `yaml:"tls_cert" json:"tls_cert,omitempty"`
	TLSKey      string   `yaml:"tls_key" json:"tls_key,omitempty"`
	TLSInsecure bool     `yaml:"tls_insecure" json:"tls_insecure,omitempty"`

	// Topology is what the lock runs on: redlock (N independent masters,
	// a majority), single (one master) or replicated (one master with
	// replicas, found and followed through Sentinel). The rest are
	// replicated's: a local set of one master, Replicas replicas and
	// Sentinels Sentinels (counts, as local is), watching it with
	// DownAfter and FailoverTimeout, ReplicaPriority per replica and
	// MinReplicasToWrite on the data nodes; or an external deployment,
	// SentinelAddrs (addresses, as masters are) watching MasterSet.
	// WaitReplicas > 0 sends WAIT WaitReplicas WaitTimeout after the SETs
	// (0: no WAIT, in every topology). A result records them only when
	// replicated.
	Topology           string   `yaml:"topology" json:"topology"`
	Replicas           int      `yaml:"replicas" json:"replicas,omitempty"`
	Sentinels          int      `yaml:"sentinels" json:"sentinels,omitempty"`
	SentinelAddrs      []string `yaml:"sentinel_addrs" json:"sentinel_addrs,omitempty"`
	MasterSet          string   `yaml:"master_set" json:"master_set,omitempty"`
	WaitReplicas       int      `yaml:"wait_replicas" json:"wait_replicas"`
	WaitTimeout        Duration `yaml:"wait_timeout" json:"wait_timeout,omitempty"`
	DownAfter          Duration `yaml:"down_after" json:"down_after,omitempty"`
	FailoverTimeout    Duration `yaml:"failover_timeout" json:"failover_timeout,omitempty"`
	MinReplicasToWrite int      `yaml:"min_replicas_to_write" json:"min_replicas_to_write,omitempty"`
	ReplicaPriority    []int    `yaml:"replica_priority" json:"replica_priority,omitempty"`
	// Servers: a lock service's external servers, as the service takes
	// them (each service also names them its own way: etcd's endpoints,
	// ZooKeeper's servers, PostgreSQL's URL); empty: local ones (Local).
	Servers []string `yaml:"servers" json:"servers,omitempty"`
	// MemberLatency delays every message between a local cluster's
	// members by this much (an embedded proxy in front of each member's
	// peer port): loopback flatters a consensus system.
	MemberLatency Duration `yaml:"member_latency" json:"member_latency,omitempty"`

	// Lock client
	Driver string `yaml:"driver" json:"driver"`
	// Client is an external lock client: its adapter's command, a program
	// and its plain arguments (docs/adapters.md), run in place of
	// lockbench's own client on the design's servers.
	Client      string   `yaml:"client" json:"client,omitempty"`
	Mode        string   `yaml:"mode" json:"mode"`
	Wait        string   `yaml:"wait" json:"wait"`
	TTL         Duration `yaml:"ttl" json:"ttl"`
	Timeout     Duration `yaml:"timeout" json:"timeout"`
	DriftFactor float64  `yaml:"drift_factor" json:"drift_factor"`
	Retries     int      `yaml:"retries" json:"retries"`
	RetryMin    Duration `yaml:"retry_delay_min" json:"retry_delay_min"`
	RetryMax    Duration `yaml:"retry_delay_max" json:"retry_delay_max"`
	// WaitStrategy is how a caller waits between attempts: retry (a random
	// delay in [retry_delay_min, max]), backoff (exponential with full
	// jitter from backoff_base, capped at backoff_cap) or spin; WaitTime
	// keeps a caller trying that long (Redisson's waitTime) in place of a
	// count of retries.
	WaitStrategy string   `yaml:"wait_strategy" json:"wait_strategy"`
	BackoffBase  Duration `yaml:"backoff_base" json:"backoff_base"`
	BackoffCap   Duration `yaml:"backoff_cap" json:"backoff_cap"`
	WaitTime     Duration `yaml:"wait_time" json:"wait_time"`
	Batch        int      `yaml:"batch" json:"batch"`
	Dispatchers  int      `yaml:"dispatchers" json:"dispatchers"`
	FlushDelay   Duration `yaml:"flush_delay" json:"flush_delay"`

	// NotifyTimeout: wait_strategy notify's longest wait for a release
	// message (0: the ttl).
	NotifyTimeout Duration `yaml:"notify_timeout" json:"notify_timeout,omitempty"`

	// Load
	Load     string   `yaml:"load" json:"load"`         // closed (workers) or open (rate)
	Workers  int      `yaml:"workers" json:"workers"`   // closed: workers; open: most in flight
	Rate     float64  `yaml:"rate" json:"rate"`         // open loop: acquires per second
	Duration Duration `yaml:"duration" json:"duration"` // measured window
	Warmup   Duration `yaml:"warmup" json:"warmup"`

	// Keys and lock use
	Keys         uint64   `yaml:"keys" json:"keys"`
	Distribution string   `yaml:"distribution" json:"distribution"` // uniform, zipf, hotspot, single
	ZipfExponent float64  `yaml:"zipf_exponent" json:"zipf_exponent"`
	HotspotOps   float64  `yaml:"hotspot_ops" json:"hotspot_ops"`   // share of operations on the hot set
	HotspotKeys  float64  `yaml:"hotspot_keys" json:"hotspot_keys"` // share of keys in the hot set
	Hold         Duration `yaml:"hold" json:"hold"`
	HoldDist     string   `yaml:"hold_distribution" json:"hold_distribution"` // fixed, uniform, exponential
	// LongHold: a fault cell's first worker of each client holds this long
	// instead (0: as the others), so that a fault meets a holder inside its
	// section across the recovery.
	LongHold   Duration `yaml:"long_hold" json:"long_hold,omitempty"`
	AutoExtend bool     `yaml:"auto_extend" json:"auto_extend"`
	// Watchdog: Redis' locks are renewed in the background every TTL/3
	// while the holder's process lives (Redisson's watchdog); a failed
	// renewal tells the holder.
	Watchdog  bool   `yaml:"watchdog" json:"watchdog,omitempty"`
	KeyPrefix string `yaml:"key_prefix" json:"key_prefix"`
	Seed      uint64 `yaml:"seed" json:"seed"`
	Force     bool   `yaml:"force" json:"force,omitempty"` // run even when keys under the prefix exist

	// Multi-machine runs: this process is segment i of n (1-based, "2/4");
	// workers, rate and keyspace are split deterministically. StartAt
	// (RFC 3339) aligns the segments' first cells.
	Segment string `yaml:"segment" json:"segment,omitempty"`
	StartAt string `yaml:"start_at" json:"start_at,omitempty"`

	// Set in fault scenarios only (plan refuses them elsewhere); a
	// benchmark cell's result records what it is: one client of its
	// workers, in this process.
	//
	// Clients: lock clients, each with its own connections; workers are
	// per client. ClientMode: goroutines, or processes (each client a
	// lockbench process). Fencing: every acquire takes a token and the
	// resource refuses reads and writes older than one it has seen.
	// CheckValidity: skip the write when the lock's validity ran out
	// during the hold. Acquisitions ends the cell once this many locks were
	// taken (duration is the cap); MinAcquisitions: a cell with fewer
	// acquisitions or acknowledged writes judged too little and fails.
	Clients       int    `yaml:"clients" json:"clients"`
	ClientMode    string `yaml:"client_mode" json:"client_mode"`
	Fencing       bool   `yaml:"fencing" json:"fencing"`
	CheckValidity bool   `yaml:"check_validity" json:"check_validity"`
	// GuardedWrite keeps the protected counter in the lock service and
	// writes it there in one step with a check that the lock is held
	// (etcd: txn If(IsOwner); ZooKeeper: multi with a check of the holder
	// znode; PostgreSQL: the update on the holding session under
	// pg_try_advisory_xact_lock); the resource keeps the ledger.
	GuardedWrite    bool  `yaml:"guarded_write" json:"guarded_write,omitempty"`
	Acquisitions    int64 `yaml:"acquisitions" json:"acquisitions"`
	MinAcquisitions int64 `yaml:"min_acquisitions" json:"min_acquisitions"`
	// Calls: each worker makes this many calls (a wait that ends holding
	// the lock or giving up after wait_time), then stops, like the
	// threads of seed 003's test (0: until the cell ends). Stock: the
	// protected counters count down from it (stock_left = stock − the
	// updates that landed).
	Calls int   `yaml:"calls" json:"calls,omitempty"`
	Stock int64 `yaml:"stock" json:"stock,omitempty"`

	// Given are the settings given (a flag set or a YAML key present), by
	// YAML name, whatever their value: a setting of another topology given
	// at its default is refused like any other, and a default that depends
	// on the topology (local: 5 masters, 3 etcd members) applies only when
	// the setting was not given.
	Given map[string]bool `yaml:"-" json:"-"`
}

// ReportSettings are a scenario's report: section (0: the report
// command's defaults).
type ReportSettings struct {
	SLOP99     Duration `yaml:"slo_p99" json:"slo_p99"`
	SLOSuccess float64  `yaml:"slo_success" json:"slo_success"`
	TargetRate float64  `yaml:"target_rate" json:"target_rate"`
}
