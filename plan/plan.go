package plan

import (
	"fmt"
	"strings"
	"time"

	"lockbench/engine"
	"lockbench/localmasters"
	"lockbench/workloads"
)

// Defaults are the settings of a plain `lockbench run`.
func Defaults() Settings {
	e := engine.DefaultConfig()
	return Settings{
		Local:        5,
		Persistence:  "", // local: none; external: the server's own
		Embedded:     "auto",
		Driver:       "lockbench",
		Mode:         string(e.Mode),
		Wait:         string(e.Wait),
		TTL:          Duration(e.TTL),
		Timeout:      Duration(e.Timeout),
		DriftFactor:  e.DriftFactor,
		Retries:      e.Retries,
		RetryMin:     Duration(e.RetryMin),
		RetryMax:     Duration(e.RetryMax),
		Batch:        e.MaxBatch,
		Dispatchers:  e.Dispatchers,
		FlushDelay:   Duration(e.FlushDelay),
		Load:         "closed",
		Workers:      16,
		Duration:     Duration(10 * time.Second),
		Warmup:       Duration(2 * time.Second),
		Keys:         100_000,
		Distribution: "uniform",
		ZipfExponent: 0.99,
		HotspotOps:   0.9,
		HotspotKeys:  0.1,
		HoldDist:     "fixed",
	}
}

var persistenceModes = []string{"none", "aof-no", "aof-everysec", "aof-always"}

// MaxWorkers bounds goroutines; beyond this the client measures itself.
const MaxWorkers = 100_000

// Validate returns one error naming the first bad field, its value and what
// is accepted; warnings are settings that work but are probably a mistake.
// It also checks that this machine can serve the settings (CheckServers).
func (s Settings) Validate() (warnings []string, err error) {
	if warnings, err = s.ValidateInput(); err != nil {
		return nil, err
	}
	if err := s.CheckServers(); err != nil {
		return nil, err
	}
	return warnings, nil
}

// CheckServers says whether this machine can serve the settings' masters:
// a persistence mode needs real redis-server masters, which embedded masters
// (used when redis-server is missing) are not.
func (s Settings) CheckServers() error {
	if len(s.Masters) == 0 && s.Persistence != "" && s.Persistence != "none" {
		if _, found := localmasters.RedisServerPath(); s.Embedded == "always" || (s.Embedded == "auto" && !found) {
			return fmt.Errorf("persistence: %q needs real redis-server masters; embedded masters (used when redis-server is missing) support only none", s.Persistence)
		}
	}
	return nil
}

// ValidateInput is Validate without CheckServers: whether the settings
// themselves are sound, whatever is installed here (a scenario file is
// judged so, and a flag may still replace the cells this machine cannot
// serve). The checks run in order; the first error stands.
func (s Settings) ValidateInput() (warnings []string, err error) {
	checks := []func() error{s.checkMasters, s.checkLocalCPUs, s.checkPersistence, s.checkNetLatency,
		s.checkClient, s.checkLoad, s.checkKeysAndHold, s.checkSegment}
	for _, check := range checks {
		if err := check(); err != nil {
			return nil, err
		}
	}
	return s.warnings(), nil
}

// checkMasters: local masters in range, or external ones that parse and
// are each listed once.
func (s Settings) checkMasters() error {
	if len(s.Masters) == 0 {
		if s.Local < 1 || s.Local > 99 {
			return fmt.Errorf("local: %d is not accepted; use 1..99 local masters (or give --masters)", s.Local)
		}
		if s.Embedded != "auto" && s.Embedded != "never" && s.Embedded != "always" {
			return fmt.Errorf("embedded: %q is not accepted; use auto, never or always", s.Embedded)
		}
		return nil
	}
	seen := map[string]bool{}
	for _, m := range s.Masters {
		_, display, err := engine.ParseMaster(m)
		if err != nil {
			return err
		}
		if seen[display] {
			return fmt.Errorf("masters: %q is listed twice; each master must be independent", display)
		}
		seen[display] = true
	}
	return nil
}

func (s Settings) checkPersistence() error {
	if s.Persistence != "" && !contains(persistenceModes, s.Persistence) {
		return fmt.Errorf("persistence: %q is not accepted; use %s", s.Persistence, strings.Join(persistenceModes, ", "))
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
			return fmt.Errorf("net-latency: works with --local or host:port masters, not %q (the proxy does not speak TLS or carry credentials)", engine.RedactURL(m))
		}
	}
	if s.NetLatency+s.NetJitter >= s.Timeout {
		return fmt.Errorf("net-latency: %v + %v jitter is not below the per-master timeout %v; raise --timeout", s.NetLatency, s.NetJitter, s.Timeout)
	}
	return nil
}

// checkClient: the lock client (driver, mode, wait and the engine's own
// checks).
func (s Settings) checkClient() error {
	if s.Driver != "lockbench" && s.Driver != "redsync" {
		return fmt.Errorf("driver: %q is not accepted; use lockbench or redsync", s.Driver)
	}
	if _, err := engine.ParseMode(s.Mode); err != nil {
		return err
	}
	if s.Driver == "redsync" && s.Mode != string(engine.Multiplexed) {
		return fmt.Errorf("mode: %q is not available with driver redsync; redsync acquires on all masters at once (multiplexed)", s.Mode)
	}
	if _, err := engine.ParseWait(s.Wait); err != nil {
		return err
	}
	ec, err := s.EngineConfig()
	if err != nil {
		return err
	}
	return ec.Validate()
}

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
func (s Settings) checkKeysAndHold() error {
	if s.Hold < 0 {
		return fmt.Errorf("hold: %v is not accepted; use 0 or a positive duration", s.Hold)
	}
	if _, err := workloads.NewHoldTime(s.HoldDist, time.Duration(s.Hold)); err != nil {
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
	if s.Hold >= s.TTL && !s.AutoExtend {
		out = append(out, fmt.Sprintf("hold %v >= ttl %v: locks expire while held (holds are cut at the validity end); use auto-extend or a longer ttl", s.Hold, s.TTL))
	}
	if n := s.N(); n%2 == 0 {
		out = append(out, fmt.Sprintf("%d masters: an even N tolerates no more failures than N-1 (quorum %d)", n, engine.Quorum(n)))
	}
	return out
}

// N is the number of masters.
func (s Settings) N() int {
	if len(s.Masters) > 0 {
		return len(s.Masters)
	}
	return s.Local
}

// EngineConfig is the lock client's part of the settings (masters not set).
func (s Settings) EngineConfig() (engine.Config, error) {
	c := engine.DefaultConfig()
	c.Masters = s.Masters
	if len(c.Masters) == 0 {
		// Placeholders so validation sees N distinct masters.
		for i := range s.Local {
			c.Masters = append(c.Masters, fmt.Sprintf("127.0.0.1:%d", i+1))
		}
	}
	c.Mode, c.Wait = engine.Mode(s.Mode), engine.Wait(s.Wait)
	c.TTL, c.Timeout, c.DriftFactor = time.Duration(s.TTL), time.Duration(s.Timeout), s.DriftFactor
	c.Retries, c.RetryMin, c.RetryMax = s.Retries, time.Duration(s.RetryMin), time.Duration(s.RetryMax)
	c.MaxBatch, c.Dispatchers, c.FlushDelay = s.Batch, s.Dispatchers, time.Duration(s.FlushDelay)
	c.TLS = engine.TLSFiles{CA: s.TLSCA, Cert: s.TLSCert, Key: s.TLSKey, Insecure: s.TLSInsecure}
	if !c.TLS.Empty() {
		if _, err := c.TLS.Config(""); err != nil {
			return c, err
		}
	}
	return c, nil
}

// Chooser builds the key distribution.
func (s Settings) Chooser() (workloads.KeyChooser, error) {
	return workloads.NewChooser(workloads.ChooserConfig{
		Distribution: s.Distribution, Keys: s.Keys, ZipfExponent: s.ZipfExponent,
		HotspotOps: s.HotspotOps, HotspotKeys: s.HotspotKeys,
	})
}

// RunConfig is the runner's part; prefix names this cell's keys.
func (s Settings) RunConfig(prefix string, seed uint64) (workloads.RunConfig, error) {
	s, offset, err := s.ForSegment()
	if err != nil {
		return workloads.RunConfig{}, err
	}
	ch, err := s.Chooser()
	if err != nil {
		return workloads.RunConfig{}, err
	}
	h, err := workloads.NewHoldTime(s.HoldDist, time.Duration(s.Hold))
	if err != nil {
		return workloads.RunConfig{}, err
	}
	rc := workloads.RunConfig{
		Workers: s.Workers, Duration: time.Duration(s.Duration), Warmup: time.Duration(s.Warmup),
		Keys: workloads.Keys{Prefix: prefix, Count: s.Keys, Offset: offset}, Chooser: ch, Hold: h,
		TTL: time.Duration(s.TTL), AutoExtend: s.AutoExtend, Seed: seed,
	}
	if s.Load == "open" {
		rc.Rate = s.Rate
	}
	return rc, nil
}

// Redacted is a copy fit for output: no passwords in master URLs.
func (s Settings) Redacted() Settings {
	out := s
	out.Masters = nil
	for _, m := range s.Masters {
		out.Masters = append(out.Masters, engine.RedactURL(m))
	}
	return out
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// checkLocalCPUs: pinning needs local redis-server masters and must leave
// lockbench a CPU.
func (s Settings) checkLocalCPUs() error {
	if s.LocalCPUs == "" {
		return nil
	}
	if len(s.Masters) > 0 {
		return fmt.Errorf("local-cpus: pins local masters; with --masters the servers are not started here (pin them where they run)")
	}
	if _, found := localmasters.RedisServerPath(); s.Embedded == "always" || (s.Embedded == "auto" && !found) {
		return fmt.Errorf("local-cpus: needs real redis-server masters; embedded masters run inside lockbench and cannot be pinned apart")
	}
	_, _, err := localmasters.SplitCPUs(s.LocalCPUs)
	return err
}
