package main

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite docs/flags.md from the flag definitions")

const flagsDoc = "docs/flags.md"

// TestFlagsDoc: docs/flags.md is what the commands' flag definitions
// give; every command with flags has its flag set reachable here.
func TestFlagsDoc(t *testing.T) {
	var b strings.Builder
	if err := writeFlagsDoc(&b); err != nil {
		t.Fatal(err)
	}
	if *updateDocs {
		if err := os.WriteFile(flagsDoc, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(flagsDoc)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != b.String() {
		t.Fatalf("%s is not what the flag definitions give; run go test -run TestFlagsDoc -update-docs .", flagsDoc)
	}
	for _, n := range []string{"run", "sweep", "chaos", "report", "compare", "masters"} {
		if commandFlags[n] == nil {
			t.Errorf("command %s's flag set is not reachable from commandFlags", n)
		}
	}
}
