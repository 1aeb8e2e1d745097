package plan

import (
	"os"
	"testing"
)

// A folder named like a shipped scenario (a results directory called
// "capacity", say) is not taken for the scenario file.
func TestLoadSkipsDirectories(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.Mkdir("capacity", 0o755); err != nil {
		t.Fatal(err)
	}
	sc, err := Load("capacity", false)
	if err != nil || sc.Name != "capacity" {
		t.Fatalf("Load(capacity) beside a capacity/ folder: %v, %v; want the shipped scenario", sc, err)
	}
}
