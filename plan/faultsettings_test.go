package plan

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// flagsCell parses args as `lockbench chaos` flags and lays them over its
// scenario without a file, as the chaos command does: the one cell,
// "flags", of the fault defaults.
func flagsCell(t *testing.T, args ...string) Cell {
	t.Helper()
	given := FaultDefaults()
	fs := pflag.NewFlagSet("chaos", pflag.ContinueOnError)
	BindFaultFlags(fs, &given)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	sc := FlagsScenario()
	if err := sc.Override(fs, BindFaultFlags); err != nil {
		t.Fatal(err)
	}
	cells, err := sc.Cells()
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 1 || cells[0].Name != "flags" || cells[0].ID != "000-flags" || !cells[0].Faulty {
		t.Fatalf("flags scenario: %+v", cells)
	}
	return cells[0]
}

// The old --masters N and the new --local N give the same settings.
func TestLocalFlagAndItsOldName(t *testing.T) {
	old, now := flagsCell(t, "--masters", "5"), flagsCell(t, "--local", "5")
	if now.Settings.Local != 5 || !reflect.DeepEqual(old.Settings, now.Settings) {
		t.Fatalf("--masters 5: %+v\n--local 5: %+v", old.Settings, now.Settings)
	}
	// An address is told what a fault scenario takes (pflag quotes the
	// value; the command's flagErr redacts it).
	fs := pflag.NewFlagSet("chaos", pflag.ContinueOnError)
	s := FaultDefaults()
	BindFaultFlags(fs, &s)
	if err := fs.Parse([]string{"--masters", "127.0.0.1:6379"}); err == nil || !strings.Contains(err.Error(), "give how many with --local N") {
		t.Errorf("--masters with an address: %v", err)
	}
}

// Every fault-scenario settings flag reaches the cell (the generic path,
// no table to keep in step): the shared ones, bound as run and sweep bind
// them, and the fault scenario's own.
func TestEveryFaultSettingsFlagApplies(t *testing.T) {
	c := flagsCell(t, "--local", "5", "--persistence", "aof-always", "--workers", "3", "--keys", "9", "--ttl", "3s",
		"--timeout", "20ms", "--drift-factor", "0.02", "--mode", "sequential", "--wait", "quorum", "--hold", "7ms",
		"--hold-distribution", "fixed", "--retry-delay-min", "2ms", "--retry-delay-max", "4ms", "--duration", "5s",
		"--seed", "11", "--clients", "4", "--client-mode", "processes", "--acquisitions", "100", "--fencing",
		"--check-validity", "--min-acquisitions", "0")
	p := FaultDefaults()
	p.Local, p.Persistence, p.Workers, p.Keys, p.TTL = 5, "aof-always", 3, 9, Duration(3*time.Second)
	p.Timeout, p.DriftFactor, p.Mode, p.Wait, p.Hold = Duration(20*time.Millisecond), 0.02, "sequential", "quorum", Duration(7*time.Millisecond)
	p.HoldDist, p.RetryMin, p.RetryMax, p.Duration, p.Seed = "fixed", Duration(2*time.Millisecond), Duration(4*time.Millisecond), Duration(5*time.Second), 11
	p.Clients, p.ClientMode, p.Acquisitions, p.Fencing, p.CheckValidity, p.MinAcquisitions = 4, "processes", 100, true, true, 0
	// Every flag given is known as given (by its YAML name).
	for _, f := range []string{"local", "persistence", "workers", "keys", "ttl", "timeout", "drift_factor", "mode", "wait", "hold",
		"hold_distribution", "retry_delay_min", "retry_delay_max", "duration", "seed", "clients", "client_mode", "acquisitions",
		"fencing", "check_validity", "min_acquisitions"} {
		p.MarkGiven(f)
	}
	if !reflect.DeepEqual(c.Settings, p) {
		t.Fatalf("got  %+v\nwant %+v", c.Settings, p)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	// Every flag BindFaultFlags registers is a setting a fault scenario
	// takes, and every one it takes has its flag.
	fs := pflag.NewFlagSet("chaos", pflag.ContinueOnError)
	s := FaultDefaults()
	BindFaultFlags(fs, &s)
	seen := map[string]bool{}
	fs.VisitAll(func(f *pflag.Flag) {
		name := strings.ReplaceAll(f.Name, "-", "_")
		if name != "masters" && !faultScenario.takes(settingAlias(name)) {
			t.Errorf("--%s: not a fault setting", f.Name)
		}
		seen[name] = true
	})
	for _, name := range settingsIn(faultOnly) {
		if !seen[name] {
			t.Errorf("%s: no flag", name)
		}
	}
}

// A benchmark flag laid over a fault scenario is refused as its YAML key
// would be, and a fault flag over a benchmark scenario likewise.
func TestOverrideRefusesTheOtherKind(t *testing.T) {
	all := Defaults()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	BindFlags(fs, &all)
	if err := fs.Parse([]string{"--retries", "2"}); err != nil {
		t.Fatal(err)
	}
	if err := FlagsScenario().Override(fs, BindFlags); err == nil || !strings.Contains(err.Error(), "retries: not available in a fault scenario") {
		t.Errorf("--retries over a fault scenario: %v", err)
	}
	fs = pflag.NewFlagSet("t", pflag.ContinueOnError)
	s := FaultDefaults()
	BindFaultFlags(fs, &s)
	if err := fs.Parse([]string{"--clients", "3"}); err != nil {
		t.Fatal(err)
	}
	sc, err := Parse("x.yaml", []byte("settings: {workers: 2}\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Override(fs, BindFaultFlags); err == nil || !strings.Contains(err.Error(), "clients: only for fault scenarios") {
		t.Errorf("--clients over a benchmark: %v", err)
	}
}

// What a fault cell's result records of its settings (changed: these were
// chaos.Settings' MarshalJSON, which kept a whitelist of keys and wrote
// "masters" = the count; the one Settings type now records a fault cell
// as any cell, its own settings under the same names, omitted when zero):
// the fault defaults as its clients run them (closed loop, uniform keys,
// no warm-up, no engine retries), workers the total over the clients,
// masters left to the runner (the addresses).
func TestFaultCellRecordedSettings(t *testing.T) {
	c := flagsCell(t, "--fencing", "--check-validity", "--acquisitions", "500")
	b, err := json.Marshal(c.Recorded)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range strings.Fields("masters persistence clients client_mode workers keys ttl timeout drift_factor mode wait hold " +
		"hold_distribution retry_delay_min retry_delay_max fencing check_validity duration acquisitions seed min_acquisitions local " +
		"driver load distribution warmup key_prefix") {
		if _, ok := m[k]; !ok {
			t.Errorf("key %s missing from %s", k, b)
		}
	}
	if m["masters"] != nil || m["local"] != 3.0 || m["ttl"] != "2s" || m["workers"] != 32.0 || m["clients"] != 2.0 ||
		m["client_mode"] != "goroutines" || m["min_acquisitions"] != 10.0 || m["acquisitions"] != 500.0 || m["fencing"] != true {
		t.Errorf("recorded %s", b)
	}
	r := c.Recorded
	if c.Settings.Workers != 16 || r.Persistence != "none" || r.Driver != "lockbench" || r.Load != "closed" || r.Distribution != "uniform" ||
		r.Retries != 0 || r.Rate != 0 || r.Warmup != 0 || r.ZipfExponent != 0 || r.HotspotOps != 0 || r.HotspotKeys != 0 || r.AutoExtend || r.KeyPrefix != "" {
		t.Errorf("per-client workers %d; recorded %+v", c.Settings.Workers, r)
	}
	// Its engine takes no retries (the client loop retries, counting every
	// attempt), its load the per-client workers.
	if c.Terms.Retry.Retries != 0 || c.Load.Workers != 16 || c.Load.Warmup != 0 || c.Load.Rate != 0 {
		t.Errorf("client terms %+v load %+v", c.Terms, c.Load)
	}
	// A benchmark cell records what it is in the same keys: one client of
	// its workers in this process, no fencing, no quota.
	_, cells := cellsOf(t, "x.yaml", "settings: {workers: 2}\n", false)
	b, _ = json.Marshal(cells[0].Recorded)
	for _, k := range strings.Fields(`"clients":1 "client_mode":"goroutines" "fencing":false "check_validity":false "acquisitions":0 "min_acquisitions":0`) {
		if !strings.Contains(string(b), k) {
			t.Errorf("benchmark cell does not record %s: %s", k, b)
		}
	}
	if cells[0].Recorded.Workers != 2 {
		t.Errorf("benchmark workers %d", cells[0].Recorded.Workers)
	}
}

// The settings a fault scenario does not take cannot be given (they were
// zeroed in its result before; now refused, and the fault defaults hold
// the values its clients run with).
func TestFaultScenarioRecordsNoUnusedSettings(t *testing.T) {
	for _, doc := range []string{"settings: {rate: 500}\n", "settings: {warmup: 1s}\n", "settings: {zipf_exponent: 1.2}\n",
		"settings: {hotspot_ops: 0.9}\n", "settings: {hotspot_keys: 0.1}\n", "settings: {auto_extend: true}\n", "settings: {key_prefix: x}\n"} {
		if _, err := Parse("x.yaml", []byte(doc), true); err == nil || !strings.Contains(err.Error(), "line 1: settings: ") ||
			!strings.Contains(err.Error(), "not available in a fault scenario") {
			t.Errorf("%q: %v", doc, err)
		}
	}
	d := FaultDefaults()
	if d.Rate != 0 || d.Warmup != 0 || d.ZipfExponent != 0 || d.HotspotOps != 0 || d.HotspotKeys != 0 || d.AutoExtend || d.Retries != 0 {
		t.Errorf("fault defaults keep benchmark shapes: %+v", d)
	}
}

// Shared settings are judged by the shared checks (one set of messages);
// a fault cell's bounds and own fields by its own.
func TestFaultSettingsValidation(t *testing.T) {
	cases := map[string]func(*Settings){
		"hold-distribution": func(s *Settings) { s.HoldDist = "weird" },
		"drift-factor":      func(s *Settings) { s.DriftFactor = 2 },
		"retry-delay":       func(s *Settings) { s.RetryMax = 0 },
		"local: 16":         func(s *Settings) { s.Local = 16 },
		"masters: a fault scenario starts its own masters": func(s *Settings) { s.Masters = []string{"127.0.0.1:6379"} },
		"workers: 10001":       func(s *Settings) { s.Workers = 10001 },
		"clients: 0":           func(s *Settings) { s.Clients = 0 },
		"client_mode":          func(s *Settings) { s.ClientMode = "threads" },
		"persistence":          func(s *Settings) { s.Persistence = "fsync" },
		"min_acquisitions: -1": func(s *Settings) { s.MinAcquisitions = -1 },
		"acquisitions: -1":     func(s *Settings) { s.Acquisitions = -1 },
	}
	for want, change := range cases {
		c := Cell{Faulty: true, Settings: FaultDefaults()}
		change(&c.Settings)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v", want, err)
		}
	}
	if err := (Cell{Faulty: true, Settings: FaultDefaults()}).Validate(); err != nil {
		t.Fatal(err)
	}
	// The fault-cell bounds are not a benchmark cell's.
	c := Cell{Settings: Defaults()}
	c.Settings.Local = 20
	if err := c.Validate(); err != nil {
		t.Errorf("20 local masters in a benchmark: %v", err)
	}
	// Holds that outlive the lock warn, unless the client checks validity.
	w := Cell{Faulty: true, Settings: FaultDefaults()}
	w.Settings.Hold = Duration(time.Second)
	if ws := w.Warnings(); len(ws) != 1 || !strings.Contains(ws[0], "check_validity") {
		t.Errorf("warnings %q", ws)
	}
	w.Settings.CheckValidity = true
	if ws := w.Warnings(); len(ws) != 0 {
		t.Errorf("warnings with check_validity %q", ws)
	}
}
