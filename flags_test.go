package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
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
	for _, n := range []string{"run", "sweep", "chaos", "report", "compare", "masters", "choose"} {
		if commandFlags[n] == nil {
			t.Errorf("command %s's flag set is not reachable from commandFlags", n)
		}
	}
}

// Every lockbench flag a page names exists; the names of other programs'
// flags (redis-server's, etcd's, go test's, Chromium's) are listed here.
func TestDocsNameOnlyFlagsThatExist(t *testing.T) {
	known := map[string]bool{"help": true, "version": true}
	for _, build := range commandFlags {
		build().VisitAll(func(f *pflag.Flag) { known[f.Name] = true })
	}
	others := map[string]bool{"sentinel": true, "replicaof": true, "appendonly": true, "appendfsync": true, "save": true, "dir": true,
		"headless": true, "no-sandbox": true, "unsafe-no-fsync": true, "update-readme": true, "update-docs": true, "race": true,
		"name": true, "data-dir": true, "listen-client-urls": true, "initial-cluster": true, "buildvcs": true, "port": true, "history": true, "which-lock": true,
		"load-n": true, "run": true} // scripts/stress: --load-n, --run
	pages, _ := filepath.Glob("docs/*.md")
	pages = append(pages, "README.md")
	flagRef := regexp.MustCompile("(?:^|[\\s`(])--([a-z][a-z0-9-]+)")
	n := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range flagRef.FindAllStringSubmatch(string(b), -1) {
			n++
			if !known[m[1]] && !others[m[1]] {
				t.Errorf("%s names --%s, which no lockbench command has", page, m[1])
			}
		}
	}
	if n == 0 {
		t.Fatal("no flag named in the docs: nothing judged")
	}
}
