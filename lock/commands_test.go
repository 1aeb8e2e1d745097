package lock

import (
	"encoding/json"
	"testing"
)

// Commands are counts by kind: a window is the difference of two
// readings (kinds that did not change left out), sums add kind by kind,
// and a result's JSON of the old fixed kinds loads as it was written.
func TestCommandsByKind(t *testing.T) {
	start := Commands{"sets": 10, "releases": 8, "waits": 0}
	end := Commands{"sets": 25, "releases": 20, "waits": 0, "publishes": 3}
	w := end.Sub(start)
	if len(w) != 3 || w["sets"] != 15 || w["releases"] != 12 || w["publishes"] != 3 || w.Total() != 30 {
		t.Fatalf("window %v; want sets 15, releases 12, publishes 3", w)
	}
	var sum Commands
	sum.Add(w)
	sum.Add(Commands{"sets": 1, "waits": 2})
	if sum["sets"] != 16 || sum["waits"] != 2 || w["sets"] != 15 {
		t.Fatalf("sum %v (window %v): want sets 16, waits 2, the window unchanged", sum, w)
	}
	c := sum.Clone()
	c["sets"]++
	if sum["sets"] != 16 {
		t.Fatalf("a clone's change reached its original: %v", sum)
	}
	var old Commands
	if err := json.Unmarshal([]byte(`{"sets":5,"releases":4,"waits":2}`), &old); err != nil || old["sets"] != 5 || old["waits"] != 2 || old.Total() != 11 {
		t.Fatalf("an old result's commands: %v (%v)", old, err)
	}
}
