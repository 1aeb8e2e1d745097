package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"lockbench/configs"
)

func TestShippedScenariosParseAndExpand(t *testing.T) {
	want := map[string]int{
		"quickstart": 6, "fsync-sweep": 8, "acquisition-compare": 32, "contention-sweep": 12, "capacity": 14, "topologies": 12,
	}
	for _, name := range configs.Names() {
		b, _ := configs.Get(name)
		sc, err := Parse(name, b, false)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if sc.Faulty {
			t.Errorf("%s: a benchmark scenario read as a fault scenario", name)
		}
		cells, err := sc.Cells()
		if err != nil {
			t.Fatal(err)
		}
		if n, ok := want[name]; ok && len(cells) != n {
			t.Errorf("%s: %d cells, want %d", name, len(cells), n)
		}
		delete(want, name)
		ids := map[string]bool{}
		for _, c := range cells {
			if ids[c.ID] {
				t.Errorf("%s: duplicate cell id %s", name, c.ID)
			}
			ids[c.ID] = true
		}
	}
	for name := range want {
		t.Errorf("scenario %s is not shipped", name)
	}
	b, _ := configs.Get("quickstart")
	sc, _ := Parse("quickstart", b, false)
	cells, _ := sc.Cells()
	if d := EstimatedDuration(cells); d > 2*time.Minute {
		t.Errorf("quickstart estimated at %v; it must stay under 2 minutes", d)
	}
	// First axis varies slowest; settings of the file and the axis land.
	if cells[0].Axes["persistence"] != "none" || cells[1].Settings.Mode != "multiplexed" || cells[5].Settings.Persistence != "aof-always" {
		t.Errorf("expansion order: %+v / %+v", cells[0].Axes, cells[5].Axes)
	}
	if cells[3].Settings.Workers != 32 || cells[3].Label != "persistence=aof-everysec mode=multiplexed" {
		t.Errorf("cell 3: %+v %q", cells[3].Settings.Workers, cells[3].Label)
	}
}

func TestScenarioErrorsNameFileLineAndField(t *testing.T) {
	cases := map[string]string{
		"settings:\n  wokers: 4\n":                              "line 2",              // unknown key
		"settings:\n  workers: many\n":                          "workers",             // wrong type
		"settings:\n  duration: 0s\n":                           "duration",            // zero duration
		"settings:\n  ttl: 40ms\n  timeout: 50ms\n":             "timeout",             // ttl <= timeout
		"matrix:\n  flavour: [a, b]\n":                          "matrix: \"flavour\"", // unknown axis
		"matrix:\n  workers: [1, x]\n":                          "line 2",              // wrong axis type
		"matrix:\n  mode: [sequential, parallel]\n":             "mode",                // bad axis value
		"settings:\n  persistence: fsync\n":                     "persistence",         // bad enum
		"settings:\n  load: open\n":                             "rate",                // open loop without rate
		"matrix:\n  workers: []\n":                              "non-empty",           // empty axis
		"settings:\n  distribution: zipf\n  zipf_exponent: 1\n": "zipf-exponent",
		"settings:\n  masters: 3\n":                             "use local: 3", // chaos' old count
	}
	for doc, want := range cases {
		_, err := Parse("x.yaml", []byte(doc), false)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "x.yaml") {
			t.Errorf("%q: got %v, want an error with %q and the file name", doc, err, want)
		}
	}
	if _, err := Load("/nonexistent/sweep.yaml", false); err == nil || !strings.HasPrefix(err.Error(), "config:") {
		t.Errorf("missing file: %v", err)
	}
}

func TestFlagsOverrideConfig(t *testing.T) {
	sc, err := Parse("x.yaml", []byte("settings:\n  workers: 8\n  ttl: 5s\nmatrix:\n  keys: [1, 10]\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	flags := Defaults()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	BindFlags(fs, &flags)
	if err := fs.Parse([]string{"--workers", "3", "--masters", "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3"}); err != nil {
		t.Fatal(err)
	}
	if err := sc.Override(fs, BindFlags); err != nil {
		t.Fatal(err)
	}
	if sc.Settings.Workers != 3 || time.Duration(sc.Settings.TTL) != 5*time.Second || len(sc.Settings.Masters) != 3 {
		t.Fatalf("override: workers %d ttl %v masters %v", sc.Settings.Workers, sc.Settings.TTL, sc.Settings.Masters)
	}
	cells, err := sc.Cells()
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 2 || cells[1].Settings.Keys != 10 || cells[1].Settings.Workers != 3 || len(cells[1].Settings.Masters) != 3 {
		t.Fatalf("cells after override: %+v", cells)
	}
	// A flag for a swept setting replaces its axis.
	fs2 := pflag.NewFlagSet("t", pflag.ContinueOnError)
	BindFlags(fs2, &flags)
	if err := fs2.Parse([]string{"--keys", "7"}); err != nil {
		t.Fatal(err)
	}
	sc, _ = Parse("x.yaml", []byte("settings:\n  workers: 8\nmatrix:\n  keys: [1, 10]\n"), false)
	if err := sc.Override(fs2, BindFlags); err != nil {
		t.Fatal(err)
	}
	if cells, err := sc.Cells(); err != nil || len(cells) != 1 || cells[0].Settings.Keys != 7 || cells[0].Settings.Workers != 8 {
		t.Fatalf("--keys over a keys axis: %+v, %v", cells, err)
	}
}

func TestSettingsWarnings(t *testing.T) {
	s := Defaults()
	s.Local = 4
	s.Hold = Duration(20 * time.Second)
	w, err := s.Validate()
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(w, "\n")
	if !strings.Contains(joined, "hold") || !strings.Contains(joined, "even N") {
		t.Fatalf("warnings: %q", joined)
	}
}

func TestScenarioRepeat(t *testing.T) {
	sc, err := Parse("r.yaml", []byte("settings:\n  workers: 2\nrepeat: 5\n"), false)
	if err != nil || sc.Repeat != 5 {
		t.Fatalf("repeat: %v, %v", sc, err)
	}
	if sc, _ := Parse("r.yaml", []byte("settings:\n  workers: 2\n"), false); sc.Repeat != 1 {
		t.Errorf("default repeat %d, want 1", sc.Repeat)
	}
	for _, bad := range []string{"repeat: -1\n", "repeat: 101\n"} {
		_, err := Parse("r.yaml", []byte(bad), false)
		if err == nil || !strings.Contains(err.Error(), "repeat:") || !strings.Contains(err.Error(), "1..100") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	aof := Defaults()
	aof.Persistence = "aof-always"
	if !RepeatsNeedFreshMasters(aof) {
		t.Error("local AOF masters keep state between repeats")
	}
	if RepeatsNeedFreshMasters(Defaults()) {
		t.Error("local masters without persistence need no restart")
	}
	aof.Masters = []string{"10.0.0.1:6379"}
	if RepeatsNeedFreshMasters(aof) {
		t.Error("external masters cannot be restarted")
	}
}

// A value of the wrong type says what the setting takes, once with its
// line; a fraction for a whole-number setting is refused, not cut.
func TestScenarioWrongTypeSaysWhatIsAccepted(t *testing.T) {
	for doc, want := range map[string]string{
		"settings:\n  workers: many\n":      "workers: \"many\" is not accepted; use a whole number",
		"settings:\n  workers: 2.5\n":       "workers: 2.5 is not accepted; use a whole number",
		"settings:\n  keys: -1\n":           "keys: -1 is not accepted; use a whole number, 0 or more",
		"settings:\n  auto_extend: maybe\n": "auto_extend: \"maybe\" is not accepted; use true or false",
		"settings:\n  rate: [1]\n":          "rate: a list is not accepted; use a number",
		"matrix:\n  workers: [1, 2.5]\n":    "workers: 2.5 is not accepted; use a whole number",
		"settings:\n  zipf_exponent: 1.5\n": "",
		"settings:\n  ttl: 2.5\n":           "ttl: \"2.5\" is not a duration",
		"settings:\n  workers: 2.0\n":       "",
	} {
		_, err := Parse("x.yaml", []byte(doc), false)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", doc, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want) || strings.Count(err.Error(), "line ") != 1):
			t.Errorf("%q: got %v, want %q once with its line", doc, err, want)
		}
	}
}

// `lockbench run` is one cell, "run", of its settings, resolved like any
// scenario's: local masters without a mode record persistence none.
func TestRunScenario(t *testing.T) {
	s := Defaults()
	s.Workers = 5
	sc, cells, err := RunScenario(s, 3)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Repeat != 3 || sc.Faulty || len(cells) != 1 || cells[0].ID != "run" || cells[0].Recorded.Persistence != "none" ||
		cells[0].Load.Workers != 5 || cells[0].Recorded.Workers != 5 {
		t.Fatalf("run scenario %+v, cells %+v", sc, cells)
	}
}

// The wait strategy and wait time are settings like the others: bad ones
// name themselves; lease_time is Redisson's name of ttl.
func TestWaitSettings(t *testing.T) {
	for doc, want := range map[string]string{
		"settings: {wait_strategy: notify-me}\n":                                     `wait-strategy: "notify-me" is not accepted`,
		"settings: {wait_strategy: backoff, backoff_base: 10ms, backoff_cap: 1ms}\n": "backoff-cap",
		"settings: {wait_time: -1s}\n":                                               "wait-time",
		"settings: {ttl: 3s, lease_time: 4s}\n":                                      "given twice",
		"settings: {wait_strategy: notify, notify_timeout: -1s}\n":                   "notify-timeout: -1s is not accepted",
		"settings: {wait_strategy: notify, driver: redsync}\n":                       "wait-strategy: notify is not accepted with driver redsync",
	} {
		if _, err := Parse("w.yaml", []byte(doc), false); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %s", doc, err, want)
		}
	}
	sc, err := Parse("w.yaml", []byte("settings: {lease_time: 4s, wait_strategy: spin, wait_time: 2s}\nmatrix:\n  lease_time: [5s]\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	cells, _ := sc.Cells()
	e := cells[0].Terms
	if time.Duration(cells[0].Settings.TTL) != 5*time.Second || e.TTL != 5*time.Second || e.Retry.Strategy != "spin" || e.Retry.WaitTime != 2*time.Second {
		t.Errorf("ttl %v, client terms %+v", cells[0].Settings.TTL, e)
	}
	// notify_timeout: the ttl unless given; a matrix axis like the others.
	if e.Retry.NotifyTimeout != 5*time.Second {
		t.Errorf("notify timeout %v, want the ttl", e.Retry.NotifyTimeout)
	}
	sc, err = Parse("w.yaml", []byte("settings: {wait_strategy: notify}\nmatrix:\n  notify_timeout: [250ms, 1s]\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	if cells, _ = sc.Cells(); len(cells) != 2 || cells[0].Terms.Retry.NotifyTimeout != 250*time.Millisecond || cells[1].Terms.Retry.NotifyTimeout != time.Second {
		t.Errorf("notify_timeout axis: %+v", cells)
	}
}
