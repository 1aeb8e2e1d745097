package plan

import (
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// A scenario is a benchmark or a fault scenario, whose cells start their
// own servers and clients, inject faults and judge a protected resource.
// Both read the one Settings through one decoder, validator and flag
// binder; the fault part is the settings only a fault scenario takes, a
// layer over the defaults and the checks a cell that starts everything
// itself adds. kind holds what differs, so that it is written here once.
type kind struct {
	keys scope // the settings it takes
	// layer lays the kind's defaults over Defaults().
	layer func(*Settings)
	// refuse says why a setting outside keys is not taken.
	refuse func(name string) error
	// oldMasters: masters: N (a count) is the old name of local: N.
	oldMasters bool
	// bounds run before the shared checks, own after (the first error
	// stands, so a fault cell's server bounds are said first).
	bounds, own func(Settings) error
	warnings    func(Settings) []string
	// ownServers: each cell starts (and crashes) servers of its own.
	ownServers bool
	// alwaysNamed: its cells are named; with no cells:, its one cell is
	// named after the scenario.
	alwaysNamed bool
	// warnsAtStart: a cell's warnings are said as it starts, not before
	// the run.
	warnsAtStart bool
	// reportsPartial: an interrupted run's results are reported (a
	// benchmark's partial cells are; an interrupted fault cell judged
	// nothing).
	reportsPartial bool
	// usage rewords flags whose run and sweep words would mislead.
	usage map[string]string
}

// scope is the kinds of scenario that take a setting.
type scope uint8

const (
	benchmarkOnly scope = 1 << iota
	faultOnly
	bothKinds = benchmarkOnly | faultOnly
)

var (
	benchmark = &kind{keys: benchmarkOnly, layer: func(*Settings) {}, refuse: refuseInBenchmark,
		bounds: Settings.noCheck, own: Settings.noCheck, warnings: Settings.warnings, reportsPartial: true}
	faultScenario = &kind{keys: faultOnly, layer: faultLayer, refuse: refuseInFaultScenario, oldMasters: true,
		bounds: Settings.checkFaultServers, own: Settings.checkFaultClients, warnings: Settings.faultWarnings,
		ownServers: true, alwaysNamed: true, warnsAtStart: true, usage: faultUsage}
)

// ScenarioKind is a scenario's or a cell's kind: a benchmark, or a fault
// scenario.
type ScenarioKind uint8

const (
	Benchmark ScenarioKind = iota
	FaultScenario
)

// Kind is the one place that asks whether a scenario or cell is faulty;
// the rest of the code looks its differences up by kind (here kinds, and
// the runner's table).
func (sc *Scenario) Kind() ScenarioKind { return kindOf(sc.Faulty) }
func (c Cell) Kind() ScenarioKind       { return kindOf(c.Faulty) }

func kindOf(faulty bool) ScenarioKind {
	if faulty {
		return FaultScenario
	}
	return Benchmark
}

// kinds are the settings' differences of each kind.
var kinds = [...]*kind{Benchmark: benchmark, FaultScenario: faultScenario}

func (sc *Scenario) kind() *kind { return kinds[sc.Kind()] }
func (c Cell) kind() *kind       { return kinds[c.Kind()] }

// ReportsPartial says an interrupted run of the scenario is reported.
func (sc *Scenario) ReportsPartial() bool { return sc.kind().reportsPartial }

// settingScopes are the settings a fault scenario takes, and whether a
// benchmark takes them too; any other is a benchmark's alone. A fault
// scenario's clients run a closed loop on uniform keys, on servers it
// starts itself: external servers, the driver, the open loop, key
// distributions and warm-up do not apply. Its workers are per client;
// hold is the gap between reading the counter and writing it back, inside
// the lock (where an overlapping holder loses an update).
var settingScopes = func() map[string]scope {
	out := map[string]scope{}
	for _, n := range []string{"local", "persistence", "workers", "keys", "ttl", "timeout", "drift_factor", "mode", "wait", "watchdog", "driver", "client",
		"hold", "hold_distribution", "retry_delay_min", "retry_delay_max", "duration", "seed",
		"wait_strategy", "wait_time", "backoff_base", "backoff_cap", "notify_timeout",
		// A replicated set the cell starts (and fails over) itself.
		"topology", "replicas", "sentinels", "wait_replicas", "wait_timeout", "down_after", "failover_timeout",
		"min_replicas_to_write", "replica_priority"} {
		out[n] = bothKinds
	}
	for _, n := range []string{"clients", "client_mode", "fencing", "check_validity", "guarded_write", "long_hold",
		"acquisitions", "min_acquisitions", "calls", "stock"} {
		out[n] = faultOnly
	}
	return out
}()

// scopeOf is the kinds that take setting name (its YAML name).
func scopeOf(name string) scope {
	if s, ok := settingScopes[name]; ok {
		return s
	}
	return benchmarkOnly
}

// takes: the kind takes setting name.
func (k *kind) takes(name string) bool { return scopeOf(name)&k.keys != 0 }

// settingName is the setting key names in this kind of scenario; count:
// its value is a whole number (the old masters: N of fault scenarios).
func (k *kind) settingName(key string, count bool) string {
	if k.oldMasters && key == "masters" && count {
		return "local"
	}
	return settingAlias(key)
}

// check: name is a setting this kind takes; v is its YAML value (nil: a
// flag or an axis, whose masters are addresses).
func (k *kind) check(name string, v *yaml.Node) error {
	known := SettingNames()
	switch {
	case !known[name]:
		return fmt.Errorf("%q is not a setting; use one of %s", name, strings.Join(sortedKeys(known), ", "))
	case !k.takes(name):
		return k.refuse(name)
	case name == "masters" && v != nil && v.ShortTag() == "!!int":
		return fmt.Errorf("masters: a list of addresses (host:port, or as --masters takes them); to start %s local masters use local: %s", v.Value, v.Value)
	}
	return nil
}

func refuseInBenchmark(name string) error {
	return fmt.Errorf("%s: only for fault scenarios (give faults:, or run it with lockbench chaos)", name)
}

func refuseInFaultScenario(name string) error {
	if name == "masters" {
		return fmt.Errorf("masters: a fault scenario starts its own masters (it crashes and restarts them); use local: N (how many), not addresses")
	}
	return fmt.Errorf("%s: not available in a fault scenario (a file with faults: or a setting such as clients: is one; its clients run a closed loop on uniform keys, on masters it starts itself); it takes %s",
		name, strings.Join(settingsIn(faultOnly), ", "))
}

// settingsIn are the settings a kind of scope keys takes, sorted.
func settingsIn(keys scope) []string {
	var out []string
	for _, n := range sortedKeys(settingScopes) {
		if settingScopes[n]&keys != 0 {
			out = append(out, n)
		}
	}
	return out
}

// defaults are the settings a scenario of this kind starts from.
func (k *kind) defaults() Settings {
	s := Defaults()
	k.layer(&s)
	return s
}

// faultLayer: a few masters of its own, a few hot keys and holds long
// enough for a fault to land inside them. The settings it does not take
// are left at the values its clients run with (closed loop, uniform keys,
// no warm-up, the client loop's own retries), so that a result records
// what ran.
func faultLayer(p *Settings) {
	p.Local, p.Persistence, p.Embedded, p.Workers, p.Keys = 3, "none", "never", 16, 16
	p.TTL, p.Hold, p.HoldDist = Duration(2*time.Second), Duration(100*time.Millisecond), "uniform"
	p.Retries, p.RetryMin, p.RetryMax = 0, Duration(time.Millisecond), Duration(10*time.Millisecond)
	p.Duration, p.Warmup = Duration(10*time.Second), 0
	p.ZipfExponent, p.HotspotOps, p.HotspotKeys = 0, 0, 0
	p.Clients, p.ClientMode, p.MinAcquisitions = 2, "goroutines", 10
}

// FaultDefaults are the settings a fault scenario starts from.
func FaultDefaults() Settings { return faultScenario.defaults() }

// noCheck is a kind's check that finds nothing.
func (Settings) noCheck() error { return nil }
