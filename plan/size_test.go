package plan

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// matrixYAML builds a scenario whose matrix has the given axis lengths.
func matrixYAML(lengths map[string]int) string {
	var b strings.Builder
	b.WriteString("settings: {duration: 1s, warmup: 0s}\nmatrix:\n")
	for _, name := range []string{"workers", "keys", "seed", "batch"} {
		n, ok := lengths[name]
		if !ok {
			continue
		}
		vals := make([]string, n)
		for i := range vals {
			vals[i] = fmt.Sprint(i + 1)
		}
		fmt.Fprintf(&b, "  %s: [%s]\n", name, strings.Join(vals, ","))
	}
	return b.String()
}

// A matrix past MaxCells is counted, not expanded, and refused with its
// count unless forced; the count saturates instead of overflowing.
func TestHugeMatrixRefusedByCount(t *testing.T) {
	sw, err := ParseSweep("big.yaml", []byte(matrixYAML(map[string]int{"workers": 100, "keys": 200})))
	if err != nil {
		t.Fatal(err)
	}
	if n := sw.CellCount(); n != 20_000 {
		t.Fatalf("count %d, want 20000", n)
	}
	err = sw.CheckSize(false)
	if err == nil || !strings.Contains(err.Error(), "20000 cells (workers 100 × keys 200)") || !strings.HasPrefix(err.Error(), "matrix:") {
		t.Fatalf("20,000 cells: %v", err)
	}
	if err := sw.CheckSize(true); err != nil {
		t.Fatalf("forced: %v", err)
	}
	// 10^12 cells: ParseSweep must not try to expand them (it would not return).
	sw, err = ParseSweep("huge.yaml", []byte(matrixYAML(map[string]int{"workers": 1000, "keys": 1000, "seed": 1000, "batch": 1000})))
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.CheckSize(false); err == nil || !strings.Contains(err.Error(), "1000000000000 cells") {
		t.Fatalf("10^12 cells: %v", err)
	}
	big := make([]string, 1<<16)
	sw.SetAxes([]Axis{{Name: "a", Values: big}, {Name: "b", Values: big}, {Name: "c", Values: big}, {Name: "d", Values: big}, {Name: "e", Values: big}})
	if n := sw.CellCount(); n != math.MaxInt {
		t.Fatalf("2^80 cells counted as %d", n)
	}
	sw.SetAxes(nil)
	if sw.CellCount() != 1 || sw.CheckSize(false) != nil {
		t.Fatal("no matrix is one cell")
	}
	small, err := ParseSweep("ok.yaml", []byte(matrixYAML(map[string]int{"workers": 100, "keys": 100})))
	if err != nil || small.CheckSize(false) != nil {
		t.Fatalf("10,000 cells are allowed: %v", err)
	}
}
