package plan

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"lockbench/internal/cpulist"
	"lockbench/internal/redact"
	"lockbench/lock"
	"lockbench/workloads"
)

// Defaults are the settings of a plain `lockbench run`: Redlock on 5
// local masters, its client's reference terms (redsync's and the seed's;
// redislock/redisplan's test checks they are the engine's defaults).
func Defaults() Settings {
	return Settings{
		Local:           5,
		Topology:        DefaultTopology,
		Replicas:        DefaultReplicas,
		Sentinels:       DefaultSentinels,
		DownAfter:       Duration(defaultDownAfter),
		FailoverTimeout: Duration(defaultFailoverTimeout),
		Persistence:     "", // local: none; external: the server's own
		Embedded:        "auto",
		Driver:          "lockbench",
		Mode:            "multiplexed",
		Wait:            "all",
		TTL:             Duration(10 * time.Second),
		Timeout:         Duration(50 * time.Millisecond),
		DriftFactor:     0.01,
		Retries:         0,
		RetryMin:        Duration(50 * time.Millisecond),
		RetryMax:        Duration(250 * time.Millisecond),
		WaitStrategy:    lock.StrategyRetry,
		BackoffBase:     Duration(time.Millisecond),
		BackoffCap:      Duration(100 * time.Millisecond),
		Batch:           128,
		Dispatchers:     2,
		Load:            "closed",
		Workers:         16,
		Duration:        Duration(10 * time.Second),
		Warmup:          Duration(2 * time.Second),
		Keys:            100_000,
		Distribution:    "uniform",
		ZipfExponent:    0.99,
		HotspotOps:      0.9,
		HotspotKeys:     0.1,
		HoldDist:        "fixed",
	}
}

// MarkGiven records that setting name (its YAML name) was given.
func (s *Settings) MarkGiven(name string) {
	if s.Given == nil {
		s.Given = map[string]bool{}
	}
	s.Given[name] = true
}

// IsGiven says setting name (its YAML name) was given, whatever its value.
func (s Settings) IsGiven(name string) bool { return s.Given[name] }

// MaxWorkers bounds goroutines; beyond this the client measures itself.
const MaxWorkers = 100_000

// ClientModes are the accepted client modes of a fault scenario.
var ClientModes = []string{"goroutines", "processes"}

// Validate returns one error naming the first bad field, its value and
// what is accepted; warnings are settings that work but are probably a
// mistake. It judges the settings alone: what this machine must have for
// them is checked where the servers start (pool.CanServe). The checks run
// in order; the first error stands.
func (s Settings) Validate() (warnings []string, err error) { return s.validate(false) }

// validate is Validate; chooserBuilt skips building the key chooser again
// (a resolved cell has one, and a zipf chooser sums over every key).
func (s Settings) validate(chooserBuilt bool) (warnings []string, err error) {
	s.serversAsMasters()
	if err := s.check(benchmark, chooserBuilt); err != nil {
		return nil, err
	}
	return s.warnings(), nil
}

// check runs the kind's bounds, the shared checks and the kind's own, in
// order; the first error stands.
func (s Settings) check(k *kind, chooserBuilt bool) error {
	keysAndHold := func() error { return s.checkKeysAndHold(chooserBuilt) }
	checks := []func() error{s.checkMasters, s.checkTopology, s.checkLocalCPUs, s.checkNetLatency,
		s.checkClient, s.checkLoad, keysAndHold, s.checkSegment}
	checks = append(append([]func() error{func() error { return k.bounds(s) }}, checks...), func() error { return k.own(s) })
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// checkFaultClients checks the fault scenario's own settings: its
// clients and the protected resource.
func (s Settings) checkFaultClients() error {
	switch {
	case s.GuardedWrite && !s.Service().KeepsData():
		return fmt.Errorf("guarded_write: needs the topology of a lock service that keeps data (%s: it keeps the counter and writes it only under the lock); topology is %s", dataTopologies(), s.TopologyOf())
	case s.GuardedWrite && s.Fencing:
		return fmt.Errorf("guarded_write: give guarded_write or fencing, not both (the guard checks the lock itself)")
	case s.GuardedWrite && s.Stock > 0:
		return fmt.Errorf("guarded_write: not with stock (the stock counts down on the resource)")
	case s.Clients < 1 || s.Clients > 64:
		return fmt.Errorf("clients: %d is not accepted; use 1..64", s.Clients)
	case !slices.Contains(ClientModes, s.ClientMode):
		return fmt.Errorf("client_mode: %q is not accepted; use goroutines or processes", s.ClientMode)
	case s.MinAcquisitions < 0:
		return fmt.Errorf("min_acquisitions: %d is not accepted; use 0 (no minimum) or a count such as 10", s.MinAcquisitions)
	case s.Acquisitions < 0:
		return fmt.Errorf("acquisitions: %d is not accepted; use 0 (run for duration) or a count", s.Acquisitions)
	case s.Calls < 0:
		return fmt.Errorf("calls: %d is not accepted; use 0 (until the cell ends) or calls per worker such as 1", s.Calls)
	case s.Stock < 0:
		return fmt.Errorf("stock: %d is not accepted; use 0 (no stock) or the stock the counters start from, such as 100", s.Stock)
	}
	return nil
}

// checkFaultServers: a fault cell starts every server and client itself,
// within bounds.
func (s Settings) checkFaultServers() error { return s.Service().CheckFaultServers(s) }

// checkFaultLoad: workers and keys within a fault cell's bounds.
func (s Settings) CheckFaultLoad() error {
	switch {
	case s.Workers < 1 || s.Workers > 10_000:
		return fmt.Errorf("workers: %d is not accepted; use 1..10000 per client", s.Workers)
	case s.Keys < 1 || s.Keys > 10_000_000:
		return fmt.Errorf("keys: %d is not accepted; use 1..10000000", s.Keys)
	}
	return nil
}

// faultWarnings are fault-cell settings that work but may make the
// checkers report a failure the faults did not cause.
func (s Settings) faultWarnings() []string { return s.Service().FaultWarnings(s) }

// checkMasters: local masters in range (external ones are their
// topology's to check).
func (s Settings) checkMasters() error {
	if len(s.Masters) > 0 {
		return nil
	}
	if s.Local < 1 || s.Local > 99 {
		return fmt.Errorf("local: %d is not accepted; use 1..99 local masters (or give --masters)", s.Local)
	}
	if s.Embedded != "auto" && s.Embedded != "never" && s.Embedded != "always" {
		return fmt.Errorf("embedded: %q is not accepted; use auto, never or always", s.Embedded)
	}
	return nil
}

// checkNetLatency: the proxy's delay is whole milliseconds, below the
// per-master timeout, and only for masters it can stand in front of.
func (s Settings) checkNetLatency() error {
	lat, jit := time.Duration(s.NetLatency), time.Duration(s.NetJitter)
	if lat < 0 || jit < 0 || lat%time.Millisecond != 0 || jit%time.Millisecond != 0 || lat > 10*time.Second {
		return fmt.Errorf("net-latency: %v ± %v is not accepted; use whole milliseconds up to 10s (the proxy's unit)", s.NetLatency, s.NetJitter)
	}
	if jit > 0 && lat == 0 {
		return fmt.Errorf("net-jitter: %v needs --net-latency", s.NetJitter)
	}
	if lat == 0 {
		return nil
	}
	for _, m := range s.Masters {
		if strings.Contains(m, "://") {
			return fmt.Errorf("net-latency: works with --local or host:port masters, not %q (the proxy does not speak TLS or carry credentials)", redact.URL(m))
		}
	}
	if s.NetLatency+s.NetJitter >= s.Timeout {
		return fmt.Errorf("net-latency: %v + %v jitter is not below the per-master timeout %v; raise --timeout", s.NetLatency, s.NetJitter, s.Timeout)
	}
	return nil
}

// checkClient: the lock client (the engine's own checks).
func (s Settings) checkClient() error { return s.Service().CheckClient(s) }

// checkLoad: the load model, its rate or workers, and the window.
func (s Settings) checkLoad() error {
	switch s.Load {
	case "closed":
		if s.Rate != 0 {
			return fmt.Errorf("rate: %v needs load open; closed-loop load is set by workers", s.Rate)
		}
	case "open":
		if !(s.Rate > 0) || s.Rate > 10_000_000 {
			return fmt.Errorf("rate: %v is not accepted; open loop needs 0 < rate <= 10000000 acquires/s", s.Rate)
		}
	default:
		return fmt.Errorf("load: %q is not accepted; use closed (workers) or open (rate)", s.Load)
	}
	switch {
	case s.Workers < 1 || s.Workers > MaxWorkers:
		return fmt.Errorf("workers: %d is not accepted; use 1..%d", s.Workers, MaxWorkers)
	case s.Duration <= 0:
		return fmt.Errorf("duration: %v is not accepted; use a positive duration such as 10s", s.Duration)
	case s.Warmup < 0:
		return fmt.Errorf("warmup: %v is not accepted; use 0 or a positive duration", s.Warmup)
	}
	return nil
}

// checkKeysAndHold: the hold time and the key distribution.
func (s Settings) checkKeysAndHold(chooserBuilt bool) error {
	if s.Hold < 0 {
		return fmt.Errorf("hold: %v is not accepted; use 0 or a positive duration", s.Hold)
	}
	if s.LongHold < 0 {
		return fmt.Errorf("long_hold: %v is not accepted; use 0 or a positive duration", s.LongHold)
	}
	if _, err := workloads.NewHoldTime(s.HoldDist, time.Duration(s.Hold)); err != nil || chooserBuilt {
		return err
	}
	_, err := s.Chooser()
	return err
}

// checkSegment: a multi-machine segment and start time that parse.
func (s Settings) checkSegment() error {
	if _, _, err := s.ForSegment(); err != nil {
		return err
	}
	_, err := s.StartTime()
	return err
}

// warnings are sound settings that are probably a mistake.
func (s Settings) warnings() []string {
	var out []string
	if s.Hold >= s.TTL && !s.AutoExtend && !s.Watchdog {
		out = append(out, fmt.Sprintf("hold %v >= ttl %v: locks expire while held (holds are cut at the validity end); use auto-extend or a longer ttl", s.Hold, s.TTL))
	}
	if n := s.N(); n%2 == 0 && s.Roles() {
		out = append(out, fmt.Sprintf("%d %s members: an even cluster tolerates no more failures than %d (quorum %d)", n, s.TopologyOf(), n-1, n/2+1))
	} else if n%2 == 0 {
		out = append(out, fmt.Sprintf("%d masters: an even N tolerates no more failures than N-1 (quorum %d)", n, lock.Quorum(n)))
	}
	return out
}

// N is the number of servers a lock reaches: Redis' masters (one for a
// replicated set: its replicas are not masters), or a service's.
func (s Settings) N() int { return s.Service().N(s) }

// Chooser builds the key distribution.
func (s Settings) Chooser() (workloads.KeyChooser, error) {
	return workloads.NewChooser(workloads.ChooserConfig{
		Distribution: s.Distribution, Keys: s.Keys, ZipfExponent: s.ZipfExponent,
		HotspotOps: s.HotspotOps, HotspotKeys: s.HotspotKeys,
	})
}

// Redacted is a copy fit for output: no passwords in master URLs.
func (s Settings) Redacted() Settings {
	out := s
	out.Masters, out.Servers, out.SentinelAddrs = redacted(s.Masters), redacted(s.Servers), redacted(s.SentinelAddrs)
	return out
}

func redacted(addrs []string) []string {
	var out []string
	for _, a := range addrs {
		out = append(out, redact.URL(a))
	}
	return out
}

// checkLocalCPUs: pinning needs local masters and a CPU list; whether
// the masters are real processes is the topology's check, whether this
// machine has those CPUs is checked where the servers start.
func (s Settings) checkLocalCPUs() error {
	if s.LocalCPUs == "" {
		return nil
	}
	if s.serversGiven() {
		return fmt.Errorf("local-cpus: pins local masters; with --masters or --sentinel-addrs the servers are not started here (pin them where they run)")
	}
	_, err := cpulist.Parse(s.LocalCPUs)
	return err
}
