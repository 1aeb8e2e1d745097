package report

import (
	"math"
	"testing"
)

// Each persistent cell's fsync share is taken against its twin without
// persistence (same mode and workers) in the same sweep.
func TestFsyncSharePairsTwins(t *testing.T) {
	dir := t.TempDir()
	writeSynthDir(t, dir, "fsync", sweepCells())
	s, err := Build([]string{dir}, Options{Formats: []string{"json"}})
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]CellSummary{}
	for _, c := range s.Cells {
		byKey[c.Axes["persistence"]+"/"+c.Axes["mode"]+"/"+c.Axes["workers"]] = c
	}
	checked := 0
	for _, c := range s.Cells {
		switch c.Axes["persistence"] {
		case "aof-always":
			twin := byKey["none/"+c.Axes["mode"]+"/"+c.Axes["workers"]]
			want := FsyncShare(c.Acquire.P50, twin.Acquire.P50)
			if c.FsyncShareP50 == nil || math.Abs(*c.FsyncShareP50-want) > 1e-12 || want < 0.5 {
				t.Errorf("%s: fsync share %v, want %v against %s", c.Label, c.FsyncShareP50, want, twin.Label)
			}
			checked++
		case "none":
			if c.FsyncShareP50 != nil {
				t.Errorf("%s: no persistence, yet an fsync share", c.Label)
			}
		}
	}
	if checked != 4 {
		t.Errorf("checked %d persistent cells, want 4", checked)
	}
}

func TestFsyncShare(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if got := FsyncShare(4000, 1000); !near(got, 0.75) {
		t.Errorf("fsync share %v, want 0.75", got)
	}
	if FsyncShare(900, 1000) != 0 || FsyncShare(0, 0) != 0 {
		t.Error("fsync share must be 0 when persistence was not slower")
	}
}
