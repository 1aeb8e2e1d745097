package chaos

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"lockbench/plan"
)

// flagsOnto parses args as chaos settings flags and lays them over the
// defaults, as the chaos command does over every cell.
func flagsOnto(t *testing.T, args ...string) Settings {
	t.Helper()
	given := DefaultSettings()
	fs := pflag.NewFlagSet("chaos", pflag.ContinueOnError)
	BindFlags(fs, &given)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	dst := DefaultSettings()
	if err := ApplyChanged(fs, &dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

// The old --masters N and the new --local N give the same settings.
func TestLocalFlagAndItsOldName(t *testing.T) {
	old, now := flagsOnto(t, "--masters", "5"), flagsOnto(t, "--local", "5")
	if now.Local != 5 || !reflect.DeepEqual(old, now) {
		t.Fatalf("--masters 5: %+v\n--local 5: %+v", old, now)
	}
}

// Every settings flag reaches the cell (the generic path, no table to keep
// in step): shared ones bound through plan, chaos' own, and the shared
// ones chaos had only in YAML before (drift_factor, retry delays).
func TestEverySettingsFlagApplies(t *testing.T) {
	s := flagsOnto(t, "--local", "5", "--persistence", "aof-always", "--workers", "3", "--keys", "9", "--ttl", "3s",
		"--timeout", "20ms", "--drift-factor", "0.02", "--mode", "sequential", "--wait", "quorum", "--hold", "7ms",
		"--hold-distribution", "fixed", "--retry-delay-min", "2ms", "--retry-delay-max", "4ms", "--duration", "5s",
		"--seed", "11", "--clients", "4", "--client-mode", "processes", "--acquisitions", "100", "--fencing",
		"--check-validity", "--min-acquisitions", "0")
	want := DefaultSettings()
	p := &want.Settings
	p.Local, p.Persistence, p.Workers, p.Keys, p.TTL = 5, "aof-always", 3, 9, plan.Duration(3*time.Second)
	p.Timeout, p.DriftFactor, p.Mode, p.Wait, p.Hold = plan.Duration(20*time.Millisecond), 0.02, "sequential", "quorum", plan.Duration(7*time.Millisecond)
	p.HoldDist, p.RetryMin, p.RetryMax, p.Duration, p.Seed = "fixed", plan.Duration(2*time.Millisecond), plan.Duration(4*time.Millisecond), plan.Duration(5*time.Second), 11
	want.Clients, want.ClientMode, want.Acquisitions, want.Fencing, want.CheckValidity, want.MinAcquisitions = 4, "processes", 100, true, true, 0
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("got  %+v\nwant %+v", s, want)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
}

// The settings' JSON (in a chaos manifest) keeps the keys it had, masters
// the count among them, and adds local.
func TestSettingsJSONKeepsItsKeys(t *testing.T) {
	b, err := json.Marshal(DefaultSettings())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range strings.Fields("masters persistence clients client_mode workers keys ttl timeout drift_factor mode wait hold " +
		"hold_distribution retry_delay_min retry_delay_max fencing check_validity duration acquisitions seed min_acquisitions local") {
		if _, ok := m[k]; !ok {
			t.Errorf("key %s missing from %s", k, b)
		}
	}
	if m["masters"] != 3.0 || m["local"] != 3.0 || m["ttl"] != "2s" {
		t.Errorf("masters, local, ttl: %v %v %v", m["masters"], m["local"], m["ttl"])
	}
	if _, ok := m["driver"]; ok {
		t.Errorf("a setting chaos does not take is written: %s", b)
	}
}

// Shared settings are judged by plan's checks (one set of messages);
// chaos' bounds and own fields by chaos.
func TestSettingsValidation(t *testing.T) {
	cases := map[string]func(*Settings){
		"hold-distribution":                     func(s *Settings) { s.HoldDist = "weird" },
		"drift-factor":                          func(s *Settings) { s.DriftFactor = 2 },
		"retry-delay":                           func(s *Settings) { s.RetryMax = 0 },
		"local: 16":                             func(s *Settings) { s.Local = 16 },
		"masters: chaos starts its own masters": func(s *Settings) { s.Masters = []string{"127.0.0.1:6379"} },
		"workers: 10001":                        func(s *Settings) { s.Workers = 10001 },
		"clients: 0":                            func(s *Settings) { s.Clients = 0 },
		"client_mode":                           func(s *Settings) { s.ClientMode = "threads" },
		"persistence":                           func(s *Settings) { s.Persistence = "fsync" },
	}
	for want, change := range cases {
		s := DefaultSettings()
		change(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v", want, err)
		}
	}
	if err := DefaultSettings().Validate(); err != nil {
		t.Fatal(err)
	}
}

// The shipped scenarios use the new names (local, master_index,
// client_index); written with the old ones (masters for all three, clients
// for client_index), as they shipped before, they parse to the same cells.
func TestShippedScenariosOldAndNewNames(t *testing.T) {
	toOld := strings.NewReplacer("local:", "masters:", "master_index:", "masters:", "client_index:", "clients:")
	for _, name := range ShippedNames() {
		b, _ := Shipped(name)
		now := string(b)
		old := toOld.Replace(now)
		if old == now || strings.Contains(now, "masters:") {
			t.Errorf("%s: not written with the new names", name)
		}
		a, err := Parse(name, []byte(now))
		if err != nil {
			t.Fatal(err)
		}
		o, err := Parse(name, []byte(old))
		if err != nil {
			t.Fatalf("%s with the old names: %v", name, err)
		}
		if !reflect.DeepEqual(a, o) {
			t.Errorf("%s: old names parse otherwise:\n new %+v\n old %+v", name, a, o)
		}
	}
	a, errA := ParseFaultFlag("partition at=1s client_index=0 master_index=1,2 for=2s")
	o, errO := ParseFaultFlag("partition at=1s clients=0 masters=1,2 for=2s")
	if errA != nil || errO != nil || !reflect.DeepEqual(a, o) || len(a.Masters) != 2 || len(a.Clients) != 1 {
		t.Errorf("--fault: new %+v (%v), old %+v (%v)", a, errA, o, errO)
	}
}

// An old name and its new one in the same place is one field given twice.
func TestOldAndNewNameTogether(t *testing.T) {
	for doc, want := range map[string]string{
		"settings: {local: 3, masters: 3}\n":                                 "settings.local: given twice",
		"settings: {masters: [\"127.0.0.1:6379\"]}\n":                        "use local: N",
		"settings: {masters: \"127.0.0.1:6379\"}\n":                          "use local: N",
		"settings: {masters: \"redis://u:hunter2@h:1\"}\n":                   "use local: N",
		"faults: [{at: 1s, kind: crash, masters: [0], master_index: [1]}]\n": "faults[0].master_index: given twice",
	} {
		if _, err := Parse("x.yaml", []byte(doc)); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: got %v, want %q", doc, err, want)
		}
	}
}

// A chaos cell's result config keeps the keys it had as a free map (the
// report and old readers use them), with workers the total over clients
// and masters the addresses.
func TestRunConfigKeepsItsKeys(t *testing.T) {
	cell := Cell{Name: "c", Settings: DefaultSettings()}
	addrs := []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}
	b, err := json.Marshal(runConfig(cell, Options{Scenario: "s"}, "chaos:r1:0:", addrs, Check{}, clientTotals{}, nil, false))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range strings.Fields("acquisitions cell check_validity checks client_mode clients distribution drift_factor driver duration " +
		"expect expect_failed faults fencing hold hold_distribution keys load local lockbench_version masters mode persistence proxied " +
		"retry_delay_max retry_delay_min scenario seed timeout ttl wait workers workers_per_client") {
		if _, ok := m[k]; !ok {
			t.Errorf("key %s missing from %s", k, b)
		}
	}
	if m["workers"] != 32.0 || m["workers_per_client"] != 16.0 || len(m["masters"].([]any)) != 3 || m["local"] != 3.0 {
		t.Errorf("workers %v, per client %v, masters %v, local %v", m["workers"], m["workers_per_client"], m["masters"], m["local"])
	}
}

// A chaos cell's config records the prefix its keys were under, and no
// plan default for a setting chaos does not use (an open-loop rate, a
// warm-up, zipf or hotspot shape, auto-extend).
func TestRunConfigRecordsPrefixNotUnusedDefaults(t *testing.T) {
	s := DefaultSettings()
	s.Rate, s.Warmup, s.ZipfExponent, s.HotspotOps, s.HotspotKeys, s.AutoExtend = 500, plan.Duration(time.Second), 1.2, 0.9, 0.1, true
	cell := Cell{Name: "c", Settings: s}
	c := runConfig(cell, Options{Scenario: "s"}, "chaos:r1:0:", []string{"127.0.0.1:1"}, Check{}, clientTotals{}, nil, false)
	if c.KeyPrefix != "chaos:r1:0:" {
		t.Errorf("key_prefix %q, want the cell's prefix", c.KeyPrefix)
	}
	if c.Rate != 0 || c.Warmup != 0 || c.ZipfExponent != 0 || c.HotspotOps != 0 || c.HotspotKeys != 0 || c.AutoExtend {
		t.Errorf("unused settings recorded: rate %v warmup %v zipf %v hotspot %v/%v auto_extend %v",
			c.Rate, c.Warmup, c.ZipfExponent, c.HotspotOps, c.HotspotKeys, c.AutoExtend)
	}
}

// A --fault value is quoted back in its error with any password hidden,
// and without the line numbers of the one-flag document it is read as.
func TestFaultFlagErrorHidesPassword(t *testing.T) {
	for _, in := range []string{
		"crash at=1s master_index=redis://u:hunter2@h:1",
		"crash at=1s master_index=1 u:hunter2@h:1",
		"crash at=1s masters=x",
	} {
		_, err := ParseFaultFlag(in)
		if err == nil || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "line ") {
			t.Errorf("%q: %v", in, err)
		}
	}
}

// A chaos setting or fault field of the wrong type says what it takes,
// once with its line; a fraction for a count is refused, not cut.
func TestWrongTypeSaysWhatIsAccepted(t *testing.T) {
	for doc, want := range map[string]string{
		"settings: {clients: 2.5}\n":                         "clients: 2.5 is not accepted; use a whole number",
		"settings: {workers: 1.5}\n":                         "workers: 1.5 is not accepted; use a whole number",
		"settings: {local: three}\n":                         "local: \"three\" is not accepted; use a whole number",
		"faults: [{at: 1s, kind: crash, master_index: 1}]\n": "master_index: 1 is not accepted; use a list such as [0, 1]",
		"faults: [{at: 1s, kind: crash, masters: [0.5]}]\n":  "masters: 0.5 is not accepted; use a whole number",
	} {
		_, err := Parse("x.yaml", []byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) || strings.Count(err.Error(), "line ") != 1 {
			t.Errorf("%q: got %v, want %q once with its line", doc, err, want)
		}
	}
}
