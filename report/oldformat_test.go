package report

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"lockbench/results"
)

// Result files written before the config was typed (testdata/old-format:
// a `run --out` file and a chaos directory, as lockbench 0e5b268 wrote
// them, when configs were free maps) load into the typed config, and
// written again they keep every key with its value.
func TestOldFormatResultsLoad(t *testing.T) {
	bench, err := LoadCompareSide("testdata/old-format/bench-run.json")
	if err != nil {
		t.Fatal(err)
	}
	b := bench[0].Run.Config
	if b == nil || b.N() != 3 || b.Quorum != 2 || b.Workers != 2 || b.Keys != 10 || b.TTL.String() != "10s" || b.ChaosConfig != nil {
		t.Fatalf("bench config: %+v", b)
	}
	if id := bench[0].Settings; id["workers"] != "2" || id["N"] != "3" || id["mode"] != "multiplexed" {
		t.Errorf("identity: %v", id)
	}
	sameKeys(t, "testdata/old-format/bench-run.json", b)

	dir, err := loadDir("testdata/old-format/chaos", false)
	if err != nil {
		t.Fatal(err)
	}
	c := dir.Cells[0]
	cc := c.Run.Config
	if cc == nil || cc.ChaosConfig == nil || cc.Clients != 2 || cc.WorkersPerClient != 2 || cc.Checks.HoldsLogged != 348 || len(cc.Checks.PerClient) != 2 {
		t.Fatalf("chaos config: %+v", cc)
	}
	if s := c.Set; s.N != 3 || s.Workers != 4 || s.Persistence != "none" || s.TTL != "2s" || s.Hold != "5ms" {
		t.Errorf("report settings: %+v", s)
	}
	sameKeys(t, "testdata/old-format/chaos/cells/000-flags.json", cc)
}

// sameKeys: every key of the file's config is in cfg's JSON, with the same
// value.
func sameKeys(t *testing.T, file string, cfg *results.CellConfig) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var old struct{ Config map[string]any }
	if err := json.Unmarshal(raw, &old); err != nil {
		t.Fatal(err)
	}
	nb, _ := json.Marshal(cfg)
	var now map[string]any
	if err := json.Unmarshal(nb, &now); err != nil {
		t.Fatal(err)
	}
	for k, v := range old.Config {
		if !reflect.DeepEqual(now[k], v) {
			t.Errorf("%s: config %s: was %v, now %v", file, k, v, now[k])
		}
	}
}
