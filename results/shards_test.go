package results

import (
	"bytes"
	"strings"
	"testing"
)

// TestShardsFromRows: a sharded cell's figures come from its per-server
// rows: locks by each shard's share of the lock commands, its CPU per
// lock and one core's locks/s, the busiest by CPU; the text names the
// shards, not "1 masters", and shows no monitors the cell had none of.
func TestShardsFromRows(t *testing.T) {
	r := &Run{Outcomes: Outcomes{Tally: Tally{Acquired: 3000}}, MeasuredSeconds: 1,
		Config:  &CellConfig{Settings: Settings{Topology: "cluster", Replicas: 1}},
		Servers: &Servers{PerMaster: map[string]float64{"a": 0.03, "b": 0.06}, CPUSeconds: 0.09, ReplicaCPUSeconds: 0.05, TopologyCPUMicrosCycle: 46.7},
		CommandCost: &CommandCost{MeasuredRate: 3000, ProjectedRateCPU: 33333, PerMaster: map[string]MasterCost{
			"a": {Calls: map[string]int64{"set": 1000, "evalsha": 1000}, Usec: 4000},
			"b": {Calls: map[string]int64{"set": 2000, "evalsha": 2000}, Usec: 8000},
		}}}
	r.Shards = NewShards(r, []ShardOf{{"a", "slots 0-8191"}, {"b", "slots 8192-16383"}})
	if len(r.Shards) != 2 {
		t.Fatalf("shards %+v, want 2", r.Shards)
	}
	a, b := r.Shards[0], r.Shards[1]
	// a: 1000 of 3000 locks, 30 ms of CPU: 30 µs a lock, 33 333 locks/s; b: 2000, 60 ms, the same.
	if a.Locks != 1000 || b.Locks != 2000 || a.CPUMicrosLock != 30 || b.CPUMicrosLock != 30 || a.CommandMicrosLock != 4 || !b.Busiest || a.Busiest {
		t.Errorf("shards %+v; want 1000 and 2000 locks at 30 µs of CPU, b the busiest", r.Shards)
	}
	if c := ShardCapacity(r.Shards); c < 33333 || c > 33334 {
		t.Errorf("one shard's capacity %v, want 1e6/30", c)
	}
	var buf bytes.Buffer
	WriteText(&buf, r, Settings{})
	text := buf.String()
	for _, want := range []string{"topology cluster: 2 shards (2 masters + 2 replicas)", "busiest shard", "slots 8192-16383", "any one key"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "1 masters") || strings.Contains(text, "monitors") {
		t.Errorf("text says masters or monitors of a cluster without monitors:\n%s", text)
	}
}
