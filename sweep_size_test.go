package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A sweep past 10,000 cells is refused with its count (exit 2, one line,
// nothing listed) unless --force.
func TestSweepRefusesHugeMatrix(t *testing.T) {
	vals := func(n int) string {
		v := make([]string, n)
		for i := range v {
			v[i] = fmt.Sprint(i + 1)
		}
		return strings.Join(v, ",")
	}
	f := filepath.Join(t.TempDir(), "big.yaml")
	doc := "settings: {duration: 1s, warmup: 0s}\nmatrix:\n  workers: [" + vals(100) + "]\n  keys: [" + vals(101) + "]\n"
	if err := os.WriteFile(f, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := lockbench(t, "sweep", "-f", f, "--dry-run")
	if code != 2 || !strings.Contains(stderr, "10100 cells") || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Fatalf("10,100 cells: exit %d, stderr %q, %d bytes listed", code, stderr, len(stdout))
	}
	stdout, stderr, code = lockbench(t, "sweep", "-f", f, "--dry-run", "--force")
	if code != 0 || !strings.Contains(stdout, "workers=100 keys=101") {
		t.Fatalf("--force: exit %d, %s", code, stderr)
	}
	// A flag that replaces an axis brings the matrix under the limit.
	if _, stderr, code = lockbench(t, "sweep", "-f", f, "--dry-run", "--workers", "4"); code != 0 {
		t.Fatalf("--workers 4 (101 cells): exit %d, %s", code, stderr)
	}
}
