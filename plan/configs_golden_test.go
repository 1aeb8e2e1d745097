package plan

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"lockbench/configs"
	"lockbench/results"
)

var updateGolden = flag.Bool("update", false, "rewrite plan/testdata's golden files from the current code")

// goldenCell is what a shipped scenario's cell resolves to, as the
// commands expand it (no flags): a refactor of plan must not move it.
type goldenCell struct {
	ID       string
	Label    string
	Faulty   bool
	Axes     map[string]string
	Settings Settings
	Given    []string
	Faults   []Fault
	Expect   []Expectation
	Recorded results.Settings
	Warnings []string
}

// Every shipped scenario loads to the cells it loaded to when
// testdata/configs.golden was written: benchmark ones as sweep reads
// them, fault ones as chaos does.
func TestShippedScenariosGolden(t *testing.T) {
	var lines []string
	for _, name := range configs.Names() {
		lines = append(lines, goldenLines(t, name, false, BindFlags)...)
	}
	for _, name := range configs.FaultNames() {
		lines = append(lines, goldenLines(t, "chaos/"+name, true, BindFaultFlags)...)
	}
	b := []byte(strings.Join(lines, "\n"))
	path := filepath.Join("testdata", "configs.golden")
	if *updateGolden {
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(want)) != strings.TrimSpace(string(b)) {
		t.Fatalf("shipped scenarios resolve differently from %s; diff against:\n%s", path, firstDiff(string(want), string(b)))
	}
}

// goldenLines are the scenario's expansion warnings, then its cells, one
// JSON line each (a diff then names the cell).
func goldenLines(t *testing.T, name string, faulty bool, bind func(*pflag.FlagSet, *Settings)) []string {
	t.Helper()
	sc, err := Load(name, faulty)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var s Settings
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	bind(fs, &s)
	cells, warnings, err := sc.Expand(fs, bind)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	out := []string{name + " warnings: " + strings.Join(warnings, "; ")}
	for _, c := range cells {
		g := goldenCell{ID: c.ID, Label: c.Label, Faulty: c.Faulty, Axes: c.Axes, Settings: c.Settings,
			Given: sortedKeys(c.Settings.Given), Faults: c.Faults, Expect: c.Expect, Recorded: c.Recorded, Warnings: c.Warnings()}
		b, err := json.Marshal(g)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, name+" "+string(b))
	}
	return out
}

// firstDiff is the first differing line of two texts.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return "want:\n" + al[i] + "\ngot:\n" + bl[i]
		}
	}
	return "line counts differ"
}
