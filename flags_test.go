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
	if err := commands.WriteFlagsDoc(&b); err != nil {
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
		if commands[n].Flags == nil {
			t.Errorf("command %s's flag set is not reachable from commands", n)
		}
	}
}

// Every lockbench flag a page names exists; the names of other programs'
// flags (redis-server's, etcd's, go test's, Chromium's) are listed here.
func TestDocsNameOnlyFlagsThatExist(t *testing.T) {
	pages, _ := filepath.Glob("docs/*.md")
	pages = append(pages, "README.md")
	n := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		names, unknown := unknownFlags(string(b))
		n += names
		for _, f := range unknown {
			t.Errorf("%s names --%s, which no lockbench command has", page, f)
		}
	}
	if n == 0 {
		t.Fatal("no flag named in the docs: nothing judged")
	}
}

// The flags check fails on a planted mismatch: a flag no command has,
// beside one that exists.
func TestDocsFlagsCheckFailsOnAPlantedMismatch(t *testing.T) {
	names, unknown := unknownFlags("run it with `--json-out r.json` and `--no-such-flag 3`")
	if names != 2 || len(unknown) != 1 || unknown[0] != "no-such-flag" {
		t.Fatalf("%d flags named, unknown %q; want 2 named and no-such-flag unknown", names, unknown)
	}
}

// unknownFlags are the flags text names that no lockbench command has
// (the names of other programs' flags, redis-server's, etcd's, go test's,
// Chromium's, scripts/stress', are listed here); names counts every one.
func unknownFlags(text string) (names int, unknown []string) {
	known := map[string]bool{"help": true, "version": true}
	for _, c := range commands {
		if c.Flags == nil {
			continue
		}
		c.Flags().VisitAll(func(f *pflag.Flag) { known[f.Name] = true })
	}
	others := map[string]bool{"sentinel": true, "replicaof": true, "appendonly": true, "appendfsync": true, "save": true, "dir": true,
		"headless": true, "no-sandbox": true, "unsafe-no-fsync": true, "update-readme": true, "update-docs": true, "race": true,
		"name": true, "data-dir": true, "listen-client-urls": true, "initial-cluster": true, "buildvcs": true, "port": true, "history": true, "which-lock": true,
		"load-n": true, "run": true, "no-sync": true, "sync-only": true} // initdb's last two
	for _, m := range flagRef.FindAllStringSubmatch(text, -1) {
		names++
		if !known[m[1]] && !others[m[1]] {
			unknown = append(unknown, m[1])
		}
	}
	return names, unknown
}

var flagRef = regexp.MustCompile("(?:^|[\\s`(])--([a-z][a-z0-9-]+)")
