// Package engine is a Redlock client over N independent Redis masters
// (or, by Config.Topology, over one master, or one that Sentinel watches).
//
// It knows nothing of workloads or reports: callers ask it to acquire,
// release and extend locks, and every call returns what each master said so
// that a benchmark can count it.
package engine

import (
	"fmt"
	"time"

	"lockbench/lock"
)

// Mode is how an acquire walks the masters.
type Mode string

const (
	// Sequential tries master after master, as step 2 of the algorithm reads.
	Sequential Mode = "sequential"
	// Multiplexed sends to all masters at once; nobody waits on a slow master.
	Multiplexed Mode = "multiplexed"
)

// ParseMode checks a mode name.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case Sequential, Multiplexed:
		return Mode(s), nil
	}
	return "", fmt.Errorf("mode: %q is not accepted; use sequential or multiplexed", s)
}

// Wait is when an acquire stops collecting replies.
type Wait string

const (
	// WaitAll waits for every master (or its timeout), as the seed describes.
	WaitAll Wait = "all"
	// WaitQuorum returns as soon as the outcome is decided (like redsync's
	// failFast); late replies are still counted and released.
	WaitQuorum Wait = "quorum"
)

// ParseWait checks a wait policy name.
func ParseWait(s string) (Wait, error) {
	switch Wait(s) {
	case WaitAll, WaitQuorum:
		return Wait(s), nil
	}
	return "", fmt.Errorf("wait: %q is not accepted; use all or quorum", s)
}

// Config holds every setting of the Redlock client.
type Config struct {
	Masters     []string      // host:port, redis://[user:pass@]host:port or rediss://...
	Mode        Mode          // sequential or multiplexed
	Wait        Wait          // all or quorum
	TTL         time.Duration // lock time to live
	Timeout     time.Duration // per-master timeout of one command
	DriftFactor float64       // clock drift as a share of the TTL
	Retries     int           // extra attempts after a failed acquire
	RetryMin    time.Duration // random delay between attempts, lower bound
	RetryMax    time.Duration // random delay between attempts, upper bound
	// Strategy is how a caller waits between attempts (WaitStrategies):
	// retry (a random delay in [RetryMin, RetryMax]), backoff (exponential
	// with full jitter from BackoffBase, capped at BackoffCap) or spin (no
	// delay) or notify (wait for the key's release to be published, see
	// notify.go). WaitTime, when set, is how long a caller keeps trying
	// (Redisson's waitTime) in place of a count of Retries.
	Strategy    string
	BackoffBase time.Duration
	BackoffCap  time.Duration
	WaitTime    time.Duration
	// NotifyTimeout bounds one wait of strategy notify for a release
	// message (never past the WaitTime left): a lost message costs this
	// much. DefaultConfig sets the TTL, as Redisson waits up to the
	// holder's lease; set it again when changing the TTL.
	NotifyTimeout time.Duration
	MaxBatch      int           // most commands coalesced into one pipelined write per master
	Dispatchers   int           // batches in flight per master
	FlushDelay    time.Duration // rueidis MaxFlushDelay: a short wait lets more commands share one write
	TLS           TLSFiles      // for rediss:// masters
	// Topology is what the lock runs on (topology.go): redlock (""
	// too), single (one master) or replicated (the master the Sentinels
	// at SentinelAddrs name for MasterSet; WaitReplicas > 0 sends WAIT
	// WaitReplicas WaitTimeout after the SETs, 0 WaitTimeout meaning the
	// per-master timeout).
	Topology      Topology
	SentinelAddrs []string
	MasterSet     string
	WaitReplicas  int
	WaitTimeout   time.Duration
	// Watchdog renews every held lock in the background every TTL/3
	// while its holder's process lives (Redisson's lock watchdog), and
	// tells the holder when a renewal fails (watchdog.go).
	Watchdog bool
	// Driver is the lock client the masters are measured with ("" or
	// lockbench: this engine; rueidislock: rueidis' own lock, which a
	// fault cell's client builds in its place).
	Driver string `json:",omitempty"`
}

// DefaultConfig returns the reference settings (redsync and the seed).
func DefaultConfig() Config {
	c := Config{
		Mode:        Multiplexed,
		Wait:        WaitAll,
		TTL:         10 * time.Second,
		Timeout:     50 * time.Millisecond,
		DriftFactor: 0.01,
		Retries:     0,
		RetryMin:    50 * time.Millisecond,
		RetryMax:    250 * time.Millisecond,
		Strategy:    StrategyRetry,
		BackoffBase: time.Millisecond,
		BackoffCap:  100 * time.Millisecond,
		MaxBatch:    128,
		Dispatchers: 2, // per-key queues: two keep batches large (fewer writes) yet one in flight while the other fills
	}
	c.NotifyTimeout = c.TTL // Redisson waits up to the holder's lease
	return c
}

// Validate returns one error naming the first bad field and what is accepted.
func (c Config) Validate() error {
	if err := c.validateTopology(); err != nil {
		return err
	}
	if _, err := ParseMode(string(c.Mode)); err != nil {
		return err
	}
	if _, err := ParseWait(string(c.Wait)); err != nil {
		return err
	}
	if err := lock.CheckTerms(c.TTL, c.Timeout, c.DriftFactor, c.Retry()); err != nil {
		return err
	}
	if c.MaxBatch < 1 || c.MaxBatch > 1024 {
		return fmt.Errorf("batch: %d is not accepted; use 1..1024", c.MaxBatch)
	}
	if c.FlushDelay < 0 || c.FlushDelay > time.Millisecond {
		return fmt.Errorf("flush-delay: %v is not accepted; use 0..1ms", c.FlushDelay)
	}
	if c.Dispatchers < 1 || c.Dispatchers > 64 {
		return fmt.Errorf("dispatchers: %d is not accepted; use 1..64", c.Dispatchers)
	}
	return nil
}

// Quorum is the majority of n masters.
func Quorum(n int) int { return lock.Quorum(n) }

// Drift is the clock drift allowance for a TTL: ttl × factor + 2 ms, as in
// the reference implementations.
func Drift(ttl time.Duration, factor float64) time.Duration {
	return time.Duration(float64(ttl)*factor) + 2*time.Millisecond
}

// Validity is how long a lock taken at some instant stays usable once
// elapsed has passed: ttl − elapsed − drift. Not positive means not acquired.
func Validity(ttl, elapsed time.Duration, factor float64) time.Duration {
	return ttl - elapsed - Drift(ttl, factor)
}
