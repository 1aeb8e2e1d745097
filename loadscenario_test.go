package main

import (
	"os"
	"testing"
)

// A folder named like a shipped scenario (a results directory called
// "capacity", say) is not taken for the scenario file.
func TestLoadScenarioSkipsDirectories(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.Mkdir("capacity", 0o755); err != nil {
		t.Fatal(err)
	}
	sw, err := loadScenario("capacity")
	if err != nil || sw.Name != "capacity" {
		t.Fatalf("loadScenario(capacity) beside a capacity/ folder: %v, %v; want the shipped scenario", sw, err)
	}
}
