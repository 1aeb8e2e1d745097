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
	sc, err := Parse("big.yaml", []byte(matrixYAML(map[string]int{"workers": 100, "keys": 200})), false)
	if err != nil {
		t.Fatal(err)
	}
	if n := sc.CellCount(); n != 20_000 {
		t.Fatalf("count %d, want 20000", n)
	}
	err = sc.CheckSize(false)
	if err == nil || !strings.Contains(err.Error(), "20000 cells (workers 100 × keys 200)") || !strings.HasPrefix(err.Error(), "matrix:") {
		t.Fatalf("20,000 cells: %v", err)
	}
	if err := sc.CheckSize(true); err != nil {
		t.Fatalf("forced: %v", err)
	}
	// 10^12 cells: Parse must not try to expand them (it would not return).
	sc, err = Parse("huge.yaml", []byte(matrixYAML(map[string]int{"workers": 1000, "keys": 1000, "seed": 1000, "batch": 1000})), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.CheckSize(false); err == nil || !strings.Contains(err.Error(), "1000000000000 cells") {
		t.Fatalf("10^12 cells: %v", err)
	}
	big := make([]string, 1<<16)
	sc.SetAxes([]Axis{{Name: "a", Values: big}, {Name: "b", Values: big}, {Name: "c", Values: big}, {Name: "d", Values: big}, {Name: "e", Values: big}})
	if n := sc.CellCount(); n != math.MaxInt {
		t.Fatalf("2^80 cells counted as %d", n)
	}
	sc.SetAxes(nil)
	if sc.CellCount() != 1 || sc.CheckSize(false) != nil {
		t.Fatal("no matrix is one cell")
	}
	// Named cells multiply the matrix, and the refusal names them.
	named := "cells:\n  - name: a\n  - name: b\n  - name: c\n" + matrixYAML(map[string]int{"workers": 100, "keys": 50})
	sc, err = Parse("named.yaml", []byte(named), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.CheckSize(false); sc.CellCount() != 15_000 || err == nil || !strings.Contains(err.Error(), "15000 cells (cells 3 × workers 100 × keys 50)") {
		t.Fatalf("3 named cells × 5,000: %d, %v", sc.CellCount(), err)
	}
	small, err := Parse("ok.yaml", []byte(matrixYAML(map[string]int{"workers": 100, "keys": 100})), false)
	if err != nil || small.CheckSize(false) != nil {
		t.Fatalf("10,000 cells are allowed: %v", err)
	}
}
