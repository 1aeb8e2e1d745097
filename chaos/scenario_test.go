package chaos

import (
	"strings"
	"testing"
	"time"

	"lockbench/faults"
)

func TestShippedScenariosParse(t *testing.T) {
	want := map[string][]string{
		"crash":   {"none-immediate", "aof-always-immediate", "none-delayed", "aof-everysec-immediate", "aof-no-immediate"},
		"pause":   {"no-fencing", "fencing"},
		"clock":   {"jump-and-partition", "jump-only", "partition-only"},
		"none":    {"chaos-none"},
		"network": {"latency-jitter", "resets", "minority-then-majority-partition"},
	}
	for _, name := range ShippedNames() {
		sc, err := Load(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var cells []string
		for _, c := range sc.Cells {
			cells = append(cells, c.Name)
		}
		if w, ok := want[name]; ok && strings.Join(cells, ",") != strings.Join(w, ",") {
			t.Errorf("%s: cells %v, want %v", name, cells, w)
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
		"none/chaos-none": "acquisitions >=100000",
	}
	for key, claim := range claims {
		name, cell, _ := strings.Cut(key, "/")
		sc, _ := Load("chaos-" + name)
		found := false
		for _, c := range sc.Cells {
			for _, e := range c.Expect {
				found = found || (c.Name == cell && e.String() == claim)
			}
		}
		if !found {
			t.Errorf("%s does not expect %s", key, claim)
		}
	}
	sc, _ := Load("crash")
	if c := sc.Cells[2]; len(c.Faults) != 3 || c.Faults[2].Restart != "2.5s" || time.Duration(c.Settings.TTL) >= 2500*time.Millisecond {
		t.Errorf("none-delayed must restart after more than the TTL: %+v", c.Faults)
	}
}

func TestScenarioErrorsNameLineAndField(t *testing.T) {
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
		_, err := Parse("x.yaml", []byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "config: x.yaml: ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q:\n got %v\nwant one line starting config: x.yaml: with %q", doc, err, want)
		}
	}
	if _, err := Load("/nonexistent/chaos.yaml"); err == nil || !strings.Contains(err.Error(), "shipped") {
		t.Errorf("missing file: %v", err)
	}
}

func TestCellsInheritAndOverride(t *testing.T) {
	sc, err := Parse("x.yaml", []byte(`
settings: {masters: 5, ttl: 3s}
faults: [{at: 1s, kind: crash, masters: [0]}]
expect: {violations: 0}
cells:
  - name: a
  - name: b
    settings: {masters: 3, fencing: true}
    faults: []
    expect: {lost_updates: "<=2"}
`))
	if err != nil {
		t.Fatal(err)
	}
	a, b := sc.Cells[0], sc.Cells[1]
	if a.Settings.Local != 5 || len(a.Faults) != 1 || len(a.Expect) != 1 || a.ID != "000-a" {
		t.Errorf("cell a: %+v", a)
	}
	if b.Settings.Local != 3 || !b.Settings.Fencing || time.Duration(b.Settings.TTL) != 3*time.Second || len(b.Faults) != 0 ||
		b.Overrides["local"] != "3" || b.Expect[0].String() != "lost_updates <=2" {
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
	if s.Kind != faults.Partition || s.At != 500*time.Millisecond || len(s.Masters) != 2 || s.Masters[1] != 2 || s.For != 3*time.Second {
		t.Fatalf("%+v", s)
	}
	for in, want := range map[string]string{
		"explode at=1s":               "kind",
		"crash at=1s masters=1 by=2s": "by: not used by crash",
		"crash at=soon masters=1":     "at",
		"crash at=1s masters":         "field=value",
		"":                            "empty",
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
}

// A cell judged nothing when a fault did not happen, it made too few
// acquisitions or acknowledged writes, the checker missed holds, or a
// crash hit a master with no lock key; otherwise its verdict says whether
// expectations existed and held.
func TestNotJudgedAndVerdict(t *testing.T) {
	cell := Cell{Settings: DefaultSettings()}
	good := &CellResult{Check: Check{Holds: 50, Acks: 50}}
	good.Run.Outcomes.Acquired = 50
	crash := faults.Event{Kind: "crash", Target: "master 1", HeldKeys: 3}
	if got := notJudged(cell, good, nil, []faults.Event{crash}); len(got) != 0 {
		t.Fatalf("a sound cell was not judged: %v", got)
	}
	bad := &CellResult{Check: Check{Holds: 9, Acks: 4}}
	bad.Run.Outcomes.Acquired = 8
	missed := []faults.Spec{{At: 3 * time.Second, Kind: faults.Crash, Masters: []int{1}}}
	empty := faults.Event{Kind: "crash", Target: "master 2", HeldKeys: 0}
	got := strings.Join(notJudged(cell, bad, missed, []faults.Event{crash, empty}), "\n")
	for _, want := range []string{`fault "crash at 3s masters 1 restart immediate" did not happen`, "8 acquisitions, fewer than min_acquisitions 10",
		"4 acknowledged writes, fewer than min_acquisitions 10", "9 holds for 8 acquisitions", "master 2 hit a master that held no lock key"} {
		if !strings.Contains(got, want) {
			t.Errorf("not judged %q; want %q", got, want)
		}
	}
	if strings.Contains(got, "master 1 hit") {
		t.Error("a crash of a master holding keys was not judged")
	}
	for _, c := range []struct {
		interrupted      bool
		notJudged, unmet []string
		expects          int
		want             string
	}{
		{false, nil, nil, 0, "unchecked"}, {false, nil, nil, 2, "met"}, {false, nil, []string{"x"}, 2, "not met"},
		{false, []string{"x"}, nil, 2, "not judged"}, {false, []string{"x"}, nil, 0, "not judged"}, {true, nil, nil, 2, "interrupted"},
	} {
		if v := verdict(c.interrupted, c.notJudged, c.unmet, c.expects); v != c.want {
			t.Errorf("verdict%v = %q, want %q", c, v, c.want)
		}
	}
}
