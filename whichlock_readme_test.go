package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"lockbench/report"
)

// whichLockRun is the committed lockbench choose run the README's
// which-lock table comes from (README: the command that made it).
const whichLockRun = "docs/which-lock"

// The README's block between these lines is the committed run's table.
const (
	whichLockBegin = "<!-- which-lock: generated from docs/which-lock by go test -run TestReadmeWhichLock -update-readme . -->"
	whichLockEnd   = "<!-- which-lock: end -->"
)

// renderedBy finds the lockbench that rendered a page, when it is not
// the one that measured.
var renderedBy = regexp.MustCompile(`this page rendered by lockbench (\S+?)\.\n`)

var updateReadme = flag.Bool("update-readme", false, "rewrite README's which-lock block from the committed run")

// TestReadmeWhichLock: the committed run's which-lock.md is what its
// results give (made again from its cells), and README's which-lock table
// is that page's: no figure without its source.
func TestReadmeWhichLock(t *testing.T) {
	committed, err := os.ReadFile(filepath.Join(whichLockRun, "which-lock.md"))
	if err != nil {
		t.Fatalf("the committed which-lock run: %v", err)
	}
	out := t.TempDir()
	// The page names the lockbench that rendered it: render as that one.
	defer func(v string) { report.Version = v }(report.Version)
	report.Version = "" // none named: the one that measured
	if m := renderedBy.FindSubmatch(committed); m != nil {
		report.Version = string(m[1])
	}
	if _, err := report.Build([]string{whichLockRun}, report.Options{OutDir: out, Formats: []string{"json"}}); err != nil {
		t.Fatal(err)
	}
	again, err := os.ReadFile(filepath.Join(out, "which-lock.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(committed) {
		t.Fatalf("%s/which-lock.md is not what its cells give; made again:\n%s", whichLockRun, again)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := strings.Cut(string(readme), whichLockBegin+"\n")
	_, after, ok2 := strings.Cut(rest, whichLockEnd)
	if !ok1 || !ok2 {
		t.Fatalf("README has no which-lock block (%q ... %q)", whichLockBegin, whichLockEnd)
	}
	block := readmeBlock(string(committed))
	if *updateReadme {
		if err := os.WriteFile("README.md", []byte(before+whichLockBegin+"\n"+block+whichLockEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if rest[:len(rest)-len(whichLockEnd)-len(after)] != block {
		t.Fatalf("README's which-lock block is not %s/which-lock.md's table; run go test -run TestReadmeWhichLock -update-readme .", whichLockRun)
	}
}

// readmeBlock is the page's table and needs, its headings under the
// README's section (the reasons stay in the page).
func readmeBlock(md string) string {
	md, _, _ = strings.Cut(md, "## Why not")
	var out []string
	for _, l := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(l, "# "):
			continue
		case strings.HasPrefix(l, "## "):
			l = "####" + l[2:]
		}
		out = append(out, l)
	}
	return strings.TrimLeft(strings.Join(out, "\n"), "\n")
}
