package report

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// topologyCells: single, redlock and replicated WAIT 0/1 cells at two
// persistence modes, the replicated ones slower by WAIT.
func topologyCells() []synthCell {
	var cells []synthCell
	kinds := []struct {
		name   string
		config map[string]any
		median float64
	}{
		{"single", map[string]any{"topology": "single", "local": 1}, 200},
		{"redlock", map[string]any{"topology": "redlock", "local": 5, "mode": "multiplexed"}, 600},
		{"wait0", map[string]any{"topology": "replicated", "replicas": 2, "sentinels": 3, "wait_replicas": 0}, 250},
		{"wait1", map[string]any{"topology": "replicated", "replicas": 2, "sentinels": 3, "wait_replicas": 1}, 400},
	}
	for _, k := range kinds {
		for _, p := range []string{"none", "aof-everysec"} {
			cfg := map[string]any{"persistence": p, "workers": 16, "load": "closed", "keys": 1000}
			for key, v := range k.config {
				cfg[key] = v
			}
			median := k.median
			if p != "none" {
				median *= 1.5
			}
			cells = append(cells, synthCell{Index: len(cells), Axes: map[string]string{"cell": k.name, "persistence": p}, Config: cfg,
				MedianUs: median, Sigma: 0.2, PerSec: 500, Seconds: 4, Seed: 7})
		}
	}
	return cells
}

// Cells of several topologies get the price table: each cell's prices
// as ratios to the single cell of the same persistence, in summary.json
// and report.md, and the latency plot per topology.
func TestPriceTableAgainstSingle(t *testing.T) {
	dir := t.TempDir()
	writeSynthDir(t, dir, "topologies", topologyCells())
	s, err := Build([]string{dir}, Options{Formats: []string{"json", "md", "png"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Price) != 8 {
		t.Fatalf("%d price rows, want 8", len(s.Price))
	}
	for _, r := range s.Price {
		single := s.Price[0]
		if r.Persistence != "none" {
			single = s.Price[1]
		}
		want := r.AcquireP50 / single.AcquireP50
		if r.Single == nil || *r.Single != single.Index || r.Ratios == nil || math.Abs(r.Ratios.AcquireP50-want) > 1e-9 {
			t.Errorf("%s: ratio %+v to cell %v, want p50 %.3f× cell %d", r.Label, r.Ratios, r.Single, want, single.Index)
		}
	}
	if w1, w0 := s.Price[6], s.Price[4]; w1.WaitReplicas != 1 || w1.Ratios.AcquireP50 <= w0.Ratios.AcquireP50 || w1.Replicas != 2 {
		t.Errorf("WAIT 1 %+v not dearer than WAIT 0 %+v", w1, w0)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{"## Topologies: price and safety", "| replicated, WAIT 1 | 1 master + 2 replicas, 3 Sentinels | 1 |", "| 1.00× |", "topology-latency.png"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

// One topology: no price table, no plot.
func TestNoPriceTableForOneTopology(t *testing.T) {
	dir := t.TempDir()
	writeSynthDir(t, dir, "one", topologyCells()[:2])
	s, err := Build([]string{dir}, Options{Formats: []string{"json", "md"}})
	if err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if len(s.Price) != 0 || strings.Contains(string(md), "Topologies: price") || strings.Contains(string(md), "topology-latency") {
		t.Errorf("a price table for one topology: %d rows", len(s.Price))
	}
}

// Another service's cell is compared with the single master of the same
// fsync class (etcd fsync with aof-always, etcd no-fsync and PostgreSQL
// with none); a Redis cell only with its own persistence's single (here
// redlock aof-everysec, whose single twin did not run, gets no ratio).
func TestPriceAcrossServices(t *testing.T) {
	base := map[string]any{"workers": 16, "load": "closed", "keys": 1000, "ttl": "10s"}
	kinds := []struct {
		name   string
		config map[string]any
	}{
		{"single-none", map[string]any{"topology": "single", "local": 1, "persistence": "none"}},
		{"single-always", map[string]any{"topology": "single", "local": 1, "persistence": "aof-always"}},
		{"redlock-everysec", map[string]any{"topology": "redlock", "local": 5, "persistence": "aof-everysec"}},
		{"etcd-fsync", map[string]any{"topology": "etcd", "local": 3, "persistence": "fsync"}},
		{"etcd-no-fsync", map[string]any{"topology": "etcd", "local": 3, "persistence": "no-fsync"}},
		{"postgres", map[string]any{"topology": "postgres", "local": 1, "persistence": "not applicable", "ttl": "0s"}},
	}
	var cells []synthCell
	for _, k := range kinds {
		cfg := map[string]any{}
		for key, v := range base {
			cfg[key] = v
		}
		for key, v := range k.config {
			cfg[key] = v
		}
		cells = append(cells, synthCell{Index: len(cells), Axes: map[string]string{"cell": k.name}, Config: cfg,
			MedianUs: float64(100 * (len(cells) + 1)), Sigma: 0.2, PerSec: 500, Seconds: 4, Seed: 7})
	}
	dir := t.TempDir()
	writeSynthDir(t, dir, "services", cells)
	s, err := Build([]string{dir}, Options{Formats: []string{"json"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"single-none": 0, "single-always": 1, "redlock-everysec": -1, "etcd-fsync": 1, "etcd-no-fsync": 0, "postgres": 0}
	for _, r := range s.Price {
		name := strings.TrimPrefix(strings.Fields(r.Label)[0], "cell=")
		got := -1
		if r.Single != nil {
			got = *r.Single
		}
		if w, ok := want[name]; !ok || got != w {
			t.Errorf("%s: compared with cell %d, want %d", r.Label, got, w)
		}
	}
}

// A lock service's row counts its servers by the noun its result gives
// them (the report names no service).
func TestPriceRowServiceServers(t *testing.T) {
	for _, tc := range []struct {
		row          PriceRow
		servers, bar string
	}{
		{PriceRow{Topology: "etcd", Masters: 3, Server: "member", Persistence: "fsync"}, "3 members", "etcd N=3\nfsync"},
		{PriceRow{Topology: "postgres", Masters: 1, Server: "server", Persistence: "not applicable"}, "1 server", "postgres N=1\nnot applicable"},
		{PriceRow{Topology: "single", Masters: 1}, "1 master", "single"},
	} {
		if got := tc.row.ServersText(); got != tc.servers {
			t.Errorf("%s: servers %q, want %q", tc.row.Topology, got, tc.servers)
		}
		if got := tc.row.shortText(); got != tc.bar {
			t.Errorf("%s: bar label %q, want %q", tc.row.Topology, got, tc.bar)
		}
	}
}
