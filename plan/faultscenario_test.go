package plan

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"lockbench/configs"
	"lockbench/results"
)

// cellsOf parses doc as file and expands it, failing the test on error.
func cellsOf(t *testing.T, file, doc string, faulty bool) (*Scenario, []Cell) {
	t.Helper()
	sc, err := Parse(file, []byte(doc), faulty)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := sc.Cells()
	if err != nil {
		t.Fatal(err)
	}
	return sc, cells
}

// loadCells loads a shipped scenario and expands it.
func loadCells(t *testing.T, name string) []Cell {
	t.Helper()
	sc, err := Load(name, false)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !sc.Faulty {
		t.Fatalf("%s: not read as a fault scenario", name)
	}
	cells, err := sc.Cells()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return cells
}

func TestShippedFaultScenariosParse(t *testing.T) {
	want := map[string][]string{
		"crash":    {"none-immediate", "aof-always-immediate", "none-delayed", "aof-everysec-immediate", "aof-no-immediate"},
		"pause":    {"no-fencing", "fencing"},
		"clock":    {"jump-and-partition", "jump-only", "partition-only"},
		"none":     {"chaos-none"},
		"network":  {"latency-jitter", "resets", "minority-then-majority-partition"},
		"failover": {"replicated-no-wait", "replicated-wait-2", "replicated-wait-1-lagging-preferred", "redlock-delayed-restart"},
	}
	for _, name := range configs.FaultNames() {
		// Each has faults or expectations, so it is a fault scenario by
		// itself (loadCells checks), whether chaos or sweep reads it.
		cells := loadCells(t, name)
		var names []string
		for _, c := range cells {
			names = append(names, c.Name)
			if !c.Faulty {
				t.Errorf("%s/%s: not a fault cell", name, c.Name)
			}
			if err := c.Validate(); err != nil {
				t.Errorf("%s/%s: %v", name, c.Name, err)
			}
		}
		if w, ok := want[name]; ok && strings.Join(names, ",") != strings.Join(w, ",") {
			t.Errorf("%s: cells %v, want %v", name, names, w)
		}
		delete(want, name)
	}
	for name := range want {
		t.Errorf("scenario %s is not shipped", name)
	}
	// The claims of the issue are written into the shipped files.
	claims := map[string]string{
		"crash/none-immediate": "violations >0", "crash/aof-always-immediate": "violations ==0", "crash/none-delayed": "violations ==0",
		"pause/no-fencing": "lost_updates >0", "pause/fencing": "stale_writes_rejected >0", "clock/jump-and-partition": "violations >0",
		"none/chaos-none":             "acquisitions >=100000",
		"failover/replicated-no-wait": "violations >0", "failover/replicated-wait-2": "violations ==0",
		"failover/redlock-delayed-restart": "violations ==0", "failover/replicated-wait-1-lagging-preferred": "violations >0",
	}
	for key, claim := range claims {
		name, cell, _ := strings.Cut(key, "/")
		found := false
		for _, c := range loadCells(t, "chaos-"+name) {
			for _, e := range c.Expect {
				found = found || (c.Name == cell && e.String() == claim)
			}
		}
		if !found {
			t.Errorf("%s does not expect %s", key, claim)
		}
	}
	cells := loadCells(t, "crash")
	if c := cells[2]; len(c.Faults) != 3 || c.Faults[2].Restart != "2.5s" || time.Duration(c.Settings.TTL) >= 2500*time.Millisecond {
		t.Errorf("none-delayed must restart after more than the TTL: %+v", c.Faults)
	}
	if c := cells[0]; c.ID != "000-none-immediate" || c.Label != "none-immediate" || c.Settings.Persistence != "none" || len(c.Faults) != 3 {
		t.Errorf("crash cell 0: %s %q %+v", c.ID, c.Label, c.Faults)
	}
}

// `lockbench chaos` reads any file as a fault scenario (faulty=true); its
// errors are one line, naming the file, the line and the field.
func TestFaultScenarioErrorsNameLineAndField(t *testing.T) {
	cases := map[string]string{
		"settings:\n  wokers: 4\n":                                        `line 2: settings: "wokers" is not a setting`,
		"settings:\n  workers: many\n":                                    "line 2: settings.workers",
		"settings:\n  client_mode: threads\n":                             "client_mode",
		"settings:\n  ttl: 40ms\n  timeout: 50ms\n":                       "timeout",
		"settings:\n  persistence: fsync\n":                               "persistence",
		"faults:\n  - {at: 1s, kind: boom}\n":                             `faults[0].kind: "boom" is not accepted`,
		"faults:\n  - {at: 1s, kind: crash}\n":                            "faults[0].master_index: is needed",
		"faults:\n  - {at: 1s, kind: crash, masters: [1], by: 2s}\n":      "faults[0].by: not used by crash",
		"faults:\n  - {at: 1s, kind: crash, masters: [1], restart: x}\n":  "restart",
		"faults:\n  - {at: 1s, kind: crash, masters: [7]}\n":              "faults[0].master_index: 7 is not accepted",
		"faults:\n  - {at: 1s, kind: pause, clients: [2]}\n":              "faults[0].client_index: 2 is not accepted",
		"faults:\n  - {at: 1h, kind: pause}\n":                            "faults[0].at",
		"faults:\n  - {at: 1s, kind: latency, latency: 0s}\n":             "latency",
		"faults:\n  - {at: 1s, kind: partition, wait: 2s}\n":              `"wait" is not a fault field`,
		"expect: {violations: lots}\n":                                    "expect: violations",
		"expect: {happiness: 1}\n":                                        `"happiness" is not a metric`,
		"cells:\n  - name: a\n  - name: a\n":                              "used twice",
		"cells:\n  - name: a\n    settings: {keys: 0}\n":                  "keys",
		"cells:\n  - name: a\n    faults: [{at: 0s, kind: clock_jump}]\n": "cells[0].faults[0].by: is needed",
		"flavour: x\n": "flavour",
	}
	for doc, want := range cases {
		_, err := Parse("x.yaml", []byte(doc), true)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "config: x.yaml: ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q:\n got %v\nwant one line starting config: x.yaml: with %q", doc, err, want)
		}
	}
	if _, err := Load("/nonexistent/chaos.yaml", true); err == nil || !strings.Contains(err.Error(), "shipped") {
		t.Errorf("missing file: %v", err)
	}
}

// A named cell takes the scenario's settings, faults and expectations,
// and overrides what it gives.
func TestFaultCellsInheritAndOverride(t *testing.T) {
	_, cells := cellsOf(t, "x.yaml", `
settings: {masters: 5, ttl: 3s}
faults: [{at: 1s, kind: crash, masters: [0]}]
expect: {violations: 0}
cells:
  - name: a
  - name: b
    settings: {masters: 3, fencing: true}
    faults: []
    expect: {lost_updates: "<=2"}
`, false)
	a, b := cells[0], cells[1]
	if a.Settings.Local != 5 || len(a.Faults) != 1 || len(a.Expect) != 1 || a.ID != "000-a" {
		t.Errorf("cell a: %+v", a)
	}
	if b.Settings.Local != 3 || !b.Settings.Fencing || time.Duration(b.Settings.TTL) != 3*time.Second || len(b.Faults) != 0 ||
		b.Axes["local"] != "3" || b.Axes["cell"] != "b" || b.Expect[0].String() != "lost_updates <=2" || b.ID != "001-b" {
		t.Errorf("cell b: %+v", b)
	}
	if !b.Expect[0].Holds(2) || b.Expect[0].Holds(3) {
		t.Error("lost_updates <=2")
	}
}

func TestFaultAndExpectFlags(t *testing.T) {
	s, err := ParseFaultFlag("partition at=500ms clients=0 masters=1,2 for=3s")
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != results.FaultPartition || s.At != 500*time.Millisecond || len(s.Masters) != 2 || s.Masters[1] != 2 || s.For != 3*time.Second {
		t.Fatalf("%+v", s)
	}
	if s, err := ParseFaultFlag("crash at=1.5s at_until=3s masters=0"); err != nil || s.AtUntil != 3*time.Second || s.String() != "crash at 1.5s..3s masters 0 restart immediate" {
		t.Fatalf("%+v %q %v; want a moment drawn in 1.5s..3s", s, s.String(), err)
	}
	for in, want := range map[string]string{
		"explode at=1s":                     "kind",
		"crash at=1s masters=1 by=2s":       "by: not used by crash",
		"crash at=soon masters=1":           "at",
		"crash at=2s at_until=1s masters=1": "at_until: 1s is not accepted; use a moment after at (2s)",
		"crash at=1s masters":               "field=value",
		"":                                  "empty",
	} {
		if _, err := ParseFaultFlag(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--fault %q: %v, want %q", in, err, want)
		}
	}
	e, err := ParseExpectFlag("violations>0")
	if err != nil || e.String() != "violations >0" || !e.Holds(1) || e.Holds(0) {
		t.Fatalf("%v %v", e, err)
	}
	if _, err := ParseExpectFlag("violations"); err == nil {
		t.Fatal("expect without a condition accepted")
	}
	for cond, holds := range map[string][2]float64{">=3": {3, 2.9}, "<1": {0.5, 1}, "=2": {2, 2.1}, "7": {7, 0}} {
		e, err := ParseExpectation("lost_updates", cond)
		if err != nil || !e.Holds(holds[0]) || e.Holds(holds[1]) {
			t.Errorf("lost_updates %s: %v %v", cond, e, err)
		}
	}
}

// --fault and --expect replace every cell's faults and expectations, its
// own included; --cell keeps the cells named.
func TestReplaceFaultsExpectAndSelect(t *testing.T) {
	sc, err := Load("crash", true)
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Select([]string{"none-delayed", "none-immediate"}); err != nil {
		t.Fatal(err)
	}
	if err := sc.Select([]string{"nope"}); err == nil || !strings.Contains(err.Error(), `cell: "nope" is not a cell of chaos-crash`) ||
		!strings.Contains(err.Error(), "none-immediate, none-delayed") {
		t.Errorf("unknown cell: %v", err)
	}
	f, _ := ParseFaultFlag("pause at=1s client_index=1 for=2s")
	e, _ := ParseExpectFlag("lost_updates>0")
	sc.ReplaceFaults([]Fault{f})
	sc.ReplaceExpect([]Expectation{e})
	cells, err := sc.Cells()
	if err != nil {
		t.Fatal(err)
	}
	// Kept in the scenario's order, each with its number in the file (as
	// before the one runner: results of --cell runs do not collide).
	if len(cells) != 2 || cells[0].ID != "000-none-immediate" || cells[1].ID != "002-none-delayed" {
		t.Fatalf("selected %+v", cells)
	}
	for _, c := range cells {
		if len(c.Faults) != 1 || c.Faults[0].Kind != results.FaultPause || len(c.Expect) != 1 || c.Expect[0].String() != "lost_updates >0" {
			t.Errorf("%s: faults %+v expect %v", c.ID, c.Faults, c.Expect)
		}
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

// A fault scenario's setting or fault field of the wrong type says what
// it takes, once with its line; a fraction for a count is refused, not cut.
func TestFaultScenarioWrongTypeSaysWhatIsAccepted(t *testing.T) {
	for doc, want := range map[string]string{
		"settings: {clients: 2.5}\n":                         "clients: 2.5 is not accepted; use a whole number",
		"settings: {workers: 1.5}\n":                         "workers: 1.5 is not accepted; use a whole number",
		"settings: {local: three}\n":                         "local: \"three\" is not accepted; use a whole number",
		"faults: [{at: 1s, kind: crash, master_index: 1}]\n": "master_index: 1 is not accepted; use a list such as [0, 1]",
		"faults: [{at: 1s, kind: crash, masters: [0.5]}]\n":  "masters: 0.5 is not accepted; use a whole number",
	} {
		_, err := Parse("x.yaml", []byte(doc), true)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Count(err.Error(), "line ") != 1 {
			t.Errorf("%q: got %v, want %q once with its line", doc, err, want)
		}
	}
}

// The shipped fault scenarios use the new names (local, master_index,
// client_index); written with the old ones (masters for all three, clients
// for client_index), as they shipped before, they expand to the same cells.
func TestShippedFaultScenariosOldAndNewNames(t *testing.T) {
	toOld := strings.NewReplacer("local:", "masters:", "master_index:", "masters:", "client_index:", "clients:")
	for _, name := range configs.FaultNames() {
		b, _ := configs.Get(name)
		now := string(b)
		old := toOld.Replace(now)
		if old == now || strings.Contains(now, "masters:") {
			t.Errorf("%s: not written with the new names", name)
		}
		_, a := cellsOf(t, name, now, false)
		_, o := cellsOf(t, name, old, false)
		if !reflect.DeepEqual(a, o) {
			t.Errorf("%s: old names expand otherwise:\n new %+v\n old %+v", name, a, o)
		}
	}
	a, errA := ParseFaultFlag("partition at=1s client_index=0 master_index=1,2 for=2s")
	o, errO := ParseFaultFlag("partition at=1s clients=0 masters=1,2 for=2s")
	if errA != nil || errO != nil || !reflect.DeepEqual(a, o) || len(a.Masters) != 2 || len(a.Clients) != 1 {
		t.Errorf("--fault: new %+v (%v), old %+v (%v)", a, errA, o, errO)
	}
}

// An old name and its new one in the same place is one field given twice;
// masters as addresses is refused (a fault scenario starts its own),
// without showing a password.
func TestOldAndNewNameTogether(t *testing.T) {
	for doc, want := range map[string]string{
		"settings: {local: 3, masters: 3}\n":                                 "settings.local: given twice",
		"settings: {masters: [\"127.0.0.1:6379\"]}\n":                        "use local: N",
		"settings: {masters: \"127.0.0.1:6379\"}\n":                          "use local: N",
		"settings: {masters: \"redis://u:hunter2@h:1\"}\n":                   "use local: N",
		"faults: [{at: 1s, kind: crash, masters: [0], master_index: [1]}]\n": "faults[0].master_index: given twice",
	} {
		if _, err := Parse("x.yaml", []byte(doc), true); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: got %v, want %q", doc, err, want)
		}
	}
}

// A file with faults: or a fault scenario's own setting anywhere (the
// scenario or a cell) is a fault scenario, starting from the fault
// defaults; one without is a benchmark, expectations or not, unless read
// as a fault scenario (faulty=true).
func TestFaultScenarioByContent(t *testing.T) {
	for doc, faulty := range map[string]bool{
		"faults: [{at: 1s, kind: crash, master_index: [0]}]\n": true,
		"faults: []\n":                          true,
		"faults: []\nexpect: {violations: 0}\n": true,
		"cells:\n  - name: a\n    faults: [{at: 1s, kind: pause, client_index: [0]}]\n": true,
		// A setting only a fault scenario takes, anywhere, makes one.
		"settings: {clients: 2}\n":                        true,
		"matrix: {fencing: [true, false]}\n":              true,
		"cells:\n  - name: a\n    settings: {stock: 5}\n": true,
		// Expectations alone do not: a benchmark may carry them.
		"expect: {}\n":              false,
		"expect: {violations: 0}\n": false,
		"cells:\n  - name: a\n    expect: {violations: 0}\n": false,
		"settings: {workers: 2}\n":                           false,
		"cells:\n  - name: a\n    settings: {workers: 2}\n":  false,
	} {
		sc, cells := cellsOf(t, "x.yaml", doc, false)
		if sc.Faulty != faulty {
			t.Errorf("%q: faulty %v, want %v", doc, sc.Faulty, faulty)
			continue
		}
		want := Defaults()
		if faulty {
			want = FaultDefaults()
		}
		if c := cells[0]; c.Faulty != faulty || c.Settings.Local != want.Local || c.Settings.Keys != want.Keys || c.Settings.Clients != want.Clients {
			t.Errorf("%q: cell faulty %v, local %d keys %d clients %d", doc, c.Faulty, c.Settings.Local, c.Settings.Keys, c.Settings.Clients)
		}
	}
	sc, cells := cellsOf(t, "plain.yaml", "settings: {workers: 2}\n", true)
	if !sc.Faulty || len(cells) != 1 || !cells[0].Faulty || cells[0].ID != "000-plain" || cells[0].Settings.Workers != 2 || cells[0].Settings.Local != 3 {
		t.Errorf("forced: %+v", cells)
	}
	// The unnamed cell of a fault scenario is named after the scenario.
	if _, cells := cellsOf(t, "x.yaml", "name: solo\nfaults: []\n", false); cells[0].Name != "solo" || cells[0].ID != "000-solo" {
		t.Errorf("unnamed fault cell: %q %q", cells[0].Name, cells[0].ID)
	}
}

// A fault scenario's own settings (clients, fencing, ...) make a file a
// fault scenario, wherever they are, so a benchmark setting beside one is
// refused, naming the key and its line; as a flag over a benchmark, one
// is refused.
func TestBenchmarkRefusesFaultSettings(t *testing.T) {
	for _, key := range onlyIn(faultOnly) {
		for doc, line := range map[string]string{
			"settings:\n  warmup: 2s\n  " + key + ": 1\n":                                        "line 2: settings: warmup: not available in a fault scenario",
			"matrix:\n  warmup: [1s]\n  " + key + ": [1, 2]\n":                                   "line 2: matrix: warmup: not available in a fault scenario",
			"settings: {warmup: 1s}\ncells:\n  - name: a\n    settings:\n      " + key + ": 1\n": "line 1: settings: warmup: not available in a fault scenario",
		} {
			_, err := Parse("x.yaml", []byte(doc), false)
			if err == nil || !strings.Contains(err.Error(), line) || !strings.HasPrefix(err.Error(), "config: x.yaml: ") {
				t.Errorf("%q: %v, want %q", doc, err, line)
			}
		}
		if ok, err := flagAccepted(key, "1", false); ok {
			t.Errorf("--%s over a benchmark: %v", FlagName(key), err)
		}
	}
}

// Expectations alone leave a sweep a benchmark: its settings, warm-up
// included, stay valid, and every cell carries the expectations.
func TestBenchmarkWithExpectations(t *testing.T) {
	doc := "settings: {warmup: 1s, driver: redsync}\nmatrix:\n  workers: [1, 2]\nexpect: {acquisitions: \">=10\"}\n" +
		"cells:\n  - name: a\n  - name: b\n    expect: {gave_up: 0}\n"
	sc, cells := cellsOf(t, "sweep.yaml", doc, false)
	if sc.Faulty || len(cells) != 4 {
		t.Fatalf("faulty %v, %d cells; want a benchmark of 4", sc.Faulty, len(cells))
	}
	for i, want := range []string{"acquisitions >=10", "acquisitions >=10", "gave_up ==0", "gave_up ==0"} {
		c := cells[i]
		if c.Faulty || c.Settings.Warmup != Duration(time.Second) || len(c.Expect) != 1 || c.Expect[0].String() != want {
			t.Errorf("%s: faulty %v warmup %v expect %v; want a benchmark cell, warmup 1s, %s", c.ID, c.Faulty, c.Settings.Warmup, c.Expect, want)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", c.ID, err)
		}
	}
}

// A benchmark setting a fault scenario does not take is refused, naming
// the key and its line and what it does take.
func TestFaultScenarioRefusesBenchmarkSettings(t *testing.T) {
	for _, key := range []string{"warmup", "rate", "load", "distribution", "auto_extend", "retries", "net_latency", "local_cpus", "embedded", "segment"} {
		if faultScenario.takes(key) {
			t.Fatalf("%s is a fault setting", key)
		}
		for doc, line := range map[string]string{
			"faults: []\nsettings:\n  " + key + ": x\n":                             "line 3: settings: " + key + ": not available in a fault scenario",
			"faults: []\nmatrix:\n  " + key + ": [x]\n":                             "line 3: matrix: " + key + ": not available in a fault scenario",
			"cells:\n  - name: a\n    faults: []\n    settings: {" + key + ": x}\n": "line 4: cells[0].settings: " + key + ": not available",
		} {
			_, err := Parse("x.yaml", []byte(doc), false)
			if err == nil || !strings.Contains(err.Error(), line) || !strings.Contains(err.Error(), "it takes acquisitions, backoff_base") {
				t.Errorf("%q: %v, want %q", doc, err, line)
			}
		}
	}
	// And the same read by lockbench chaos, faults or none.
	if _, err := Parse("x.yaml", []byte("settings:\n  workers: 2\n  retries: 2\n"), true); err == nil ||
		!strings.Contains(err.Error(), "line 3: settings: retries: not available in a fault scenario") {
		t.Errorf("retries read by chaos: %v", err)
	}
}

// Named cells times the matrix: every named cell at every point, the
// first axis slowest, IDs "NNN-name,axis=value,…"; a named cell's settings
// lie over the scenario's, the axes over both, the flags over everything
// but a replaced axis.
func TestNamedCellsTimesMatrix(t *testing.T) {
	doc := `
settings: {workers: 8, keys: 100}
matrix:
  mode: [sequential, multiplexed]
  wait: [all, quorum]
cells:
  - name: small
    settings: {keys: 10}
  - name: big load
    settings: {workers: 32}
`
	sc, cells := cellsOf(t, "x.yaml", doc, false)
	if sc.CellCount() != 8 || len(cells) != 8 {
		t.Fatalf("%d cells (counted %d), want 8", len(cells), sc.CellCount())
	}
	wantIDs := []string{
		"000-small,mode=sequential,wait=all", "001-small,mode=sequential,wait=quorum",
		"002-small,mode=multiplexed,wait=all", "003-small,mode=multiplexed,wait=quorum",
		"004-big_load,mode=sequential,wait=all", "005-big_load,mode=sequential,wait=quorum",
		"006-big_load,mode=multiplexed,wait=all", "007-big_load,mode=multiplexed,wait=quorum",
	}
	for i, c := range cells {
		if c.ID != wantIDs[i] || c.Index != i {
			t.Errorf("cell %d: id %q, want %q", i, c.ID, wantIDs[i])
		}
	}
	c := cells[6]
	if c.Name != "big load" || c.Label != "big load mode=multiplexed wait=all" || c.Settings.Workers != 32 || c.Settings.Keys != 100 ||
		c.Settings.Mode != "multiplexed" || c.Settings.Wait != "all" || c.Axes["cell"] != "big load" || c.Axes["workers"] != "32" || c.Axes["mode"] != "multiplexed" {
		t.Errorf("cell 6: %q %q %+v %+v", c.Name, c.Label, c.Settings, c.Axes)
	}
	if c := cells[1]; c.Settings.Keys != 10 || c.Settings.Workers != 8 || c.Settings.Wait != "quorum" {
		t.Errorf("cell 1: %+v", c.Settings)
	}
	// Flags: over every named cell's settings; a swept one replaces its axis.
	flags := Defaults()
	fs := pflag.NewFlagSet("sweep", pflag.ContinueOnError)
	BindFlags(fs, &flags)
	if err := fs.Parse([]string{"--workers", "4", "--wait", "quorum"}); err != nil {
		t.Fatal(err)
	}
	if err := sc.Override(fs, BindFlags); err != nil {
		t.Fatal(err)
	}
	cells, err := sc.Cells()
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 4 || cells[3].ID != "003-big_load,mode=multiplexed" || cells[3].Settings.Workers != 4 || cells[3].Settings.Wait != "quorum" ||
		cells[0].Settings.Keys != 10 || cells[0].Settings.Workers != 4 {
		t.Errorf("after flags: %+v", cells)
	}
	// A named cell's overrides are type-checked with their line.
	if _, err := Parse("x.yaml", []byte("cells:\n  - name: a\n    settings:\n      workers: lots\n"), false); err == nil ||
		!strings.Contains(err.Error(), "line 4: cells[0].settings.workers") {
		t.Errorf("bad override: %v", err)
	}
	// A fault scenario's named cells take a matrix too.
	_, cells = cellsOf(t, "x.yaml", "faults: []\nmatrix:\n  persistence: [none, aof-always]\ncells:\n  - name: a\n", false)
	if len(cells) != 2 || cells[1].ID != "001-a,persistence=aof-always" || cells[1].Settings.Persistence != "aof-always" || !cells[1].Faulty {
		t.Errorf("fault matrix: %+v", cells)
	}
	// No cells and no matrix: one cell, "single cell".
	if _, cells := cellsOf(t, "x.yaml", "settings: {workers: 2}\n", false); len(cells) != 1 || cells[0].ID != "000" || cells[0].Label != "single cell" {
		t.Errorf("single cell: %+v", cells)
	}
}

// Which cells share masters: benchmark cells with the same masters
// settings do; a fault cell has its own (it crashes them).
func TestMastersKey(t *testing.T) {
	_, cells := cellsOf(t, "x.yaml", "matrix:\n  workers: [1, 2]\n  persistence: [none, aof-always]\n", false)
	if cells[0].MastersKey() != cells[2].MastersKey() || cells[0].MastersKey() == cells[1].MastersKey() {
		t.Errorf("keys %q %q %q", cells[0].MastersKey(), cells[1].MastersKey(), cells[2].MastersKey())
	}
	_, cells = cellsOf(t, "x.yaml", "faults: []\ncells:\n  - name: a\n  - name: b\n", false)
	if cells[0].MastersKey() == cells[1].MastersKey() {
		t.Errorf("fault cells share masters: %q", cells[0].MastersKey())
	}
}
