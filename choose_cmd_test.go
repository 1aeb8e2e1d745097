package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lockbench/internal/redistest"
)

// lockbench choose crosses designs and faults on the same work: a pair a
// design cannot take is marked not supported with plan's reason, every
// fault cell is repeated, and the matrix names a need's winners.
func TestChooseWritesTheMatrix(t *testing.T) {
	redistest.Require(t)
	out := filepath.Join(t.TempDir(), "which")
	_, stderr, code := lockbench(t, "choose", "--design", "single", "--fault", "none", "--fault", "pause-holder", "--fault", "leader-kill",
		"--repeat", "2", "--duration", "3s", "--need", "pause-holder", "--out", out)
	if code != 0 && code != exitThreshold {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	md, err := os.ReadFile(filepath.Join(out, "which-lock.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := ""
	for _, l := range strings.Split(string(md), "\n") {
		if strings.HasPrefix(l, "| single |") {
			row = l
		}
	}
	switch {
	case row == "":
		t.Fatalf("no row for the design:\n%s", md)
	case !strings.Contains(row, "not supported"):
		t.Errorf("single × leader-kill is not marked not supported: %s", row)
	case strings.Count(row, "/2") < 2:
		t.Errorf("the fault cells do not say how many of their 2 runs were unsafe: %s", row)
	case !strings.Contains(string(md), "single × leader-kill (unsupported): faults[0].role:"):
		t.Errorf("no reason for the unsupported pair:\n%s", md)
	case !strings.Contains(string(md), "## Your needs: safe under pause-holder"):
		t.Errorf("the needs are not judged:\n%s", md)
	}
	// The price is the price cell's, the lock alone: thousands of cycles/s
	// on one master, where the quiet cell's 200 ms holds on 8 keys give
	// tens.
	if f := strings.Split(row, "|"); len(f) < 3 || len(strings.TrimSpace(f[2])) < 4 {
		t.Errorf("single's cycles/s is not its price cell's (want ≥ 1000): %s", row)
	}
	if !strings.Contains(string(md), "Price: each design's price cell") {
		t.Errorf("the page does not say where its price comes from:\n%s", md)
	}
	if _, stderr, code := lockbench(t, "choose", "--design", "nope", "--dry-run"); code != 2 || !strings.Contains(stderr, `design: "nope" is not a design`) {
		t.Errorf("a bad design: exit %d, %q; want 2 naming the field", code, stderr)
	}
}
