package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
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

// movedKeys are old config keys whose value now reads under another key,
// named by its server: the old version key's "7.0.15" is server_version's
// "redis-server 7.0.15".
var movedKeys = map[string]struct{ key, prefix string }{
	"redis_server_version": {"server_version", "redis-server "},
}

// sameKeys: every key of the file's config is in cfg's JSON, with the same
// value (a moved key's under its new key).
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
		if m, ok := movedKeys[k]; ok {
			k, v = m.key, m.prefix+v.(string)
		}
		if !reflect.DeepEqual(now[k], v) {
			t.Errorf("%s: config %s: was %v, now %v", file, k, v, now[k])
		}
	}
}

// A chaos cell written before its config was typed matches the same cell
// written now, whose config records more settings (batch, dispatchers,
// min_acquisitions, ...): compare matches on the settings both record and
// says which it could not match on.
func TestCompareOldAndNewChaosResults(t *testing.T) {
	old, err := LoadCompareSide("testdata/old-format/chaos")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/old-format/chaos/cells/000-flags.json")
	if err != nil {
		t.Fatal(err)
	}
	var r results.Run
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	r.Config.Batch, r.Config.Dispatchers, r.Config.MinAcquisitions, r.Config.ZipfExponent = 128, 2, 10, 0.99
	b, _ := json.Marshal(r)
	path := filepath.Join(t.TempDir(), "new.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cur, err := LoadCompareSide(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compare(old, cur, nil, DefaultAlpha)
	if err != nil {
		t.Fatal(err)
	}
	if c.Matched != 1 || !strings.Contains(strings.Join(c.Warnings, "\n"), "batch") {
		t.Fatalf("matched %d (new only %v), warnings %q: want the cell matched and the settings one side lacks named", c.Matched, c.NewOnly, c.Warnings)
	}
	// A setting both sides record still tells cells apart.
	r.Config.Workers++
	b, _ = json.Marshal(r)
	_ = os.WriteFile(path, b, 0o644)
	cur, _ = LoadCompareSide(path)
	if c, _ := Compare(old, cur, nil, DefaultAlpha); c.Matched != 0 {
		t.Errorf("cells with other workers matched")
	}
}
