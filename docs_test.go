package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The front page stays a front page: short, the which-lock table early.
func TestDocsReadmeIsAFrontPage(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) > 200 {
		t.Errorf("README.md has %d lines; keep it to 200 (the rest belongs in docs/)", len(lines))
	}
	at := -1
	for i, l := range lines {
		if strings.HasPrefix(l, whichLockBegin) {
			at = i + 1
			break
		}
	}
	if at < 0 || at > 60 {
		t.Errorf("the which-lock block starts at line %d; want it within the first 60", at)
	}
}

var (
	mdLink  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile(`(?m)^#+ +(.+)$`)
)

// Every relative link in README.md and docs/*.md reaches a file of the
// repository, and its #anchor a heading there.
func TestDocsLinksResolve(t *testing.T) {
	pages, _ := filepath.Glob("docs/*.md")
	pages = append(pages, "README.md", "BENCHMARKS.md")
	checked := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(link, "#")
			target := page
			if file != "" {
				target = filepath.Join(filepath.Dir(page), file)
			}
			checked++
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s: link %q: %s does not exist", page, link, target)
				continue
			}
			if anchor != "" && strings.HasSuffix(target, ".md") && !hasAnchor(t, target, anchor) {
				t.Errorf("%s: link %q: no heading %q in %s", page, link, anchor, target)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no link checked")
	}
}

// hasAnchor: file has a heading whose GitHub anchor is anchor.
func hasAnchor(t *testing.T, file, anchor string) bool {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range heading.FindAllStringSubmatch(string(b), -1) {
		if slug(m[1]) == anchor {
			return true
		}
	}
	return false
}

// slug is GitHub's anchor of a heading: lower case, punctuation dropped,
// spaces to dashes.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && r != '’' && r != '—' && r != '–' && r != '×' && r != '≤' && r != '≥' && r != '·':
			b.WriteRune(r)
		}
	}
	return b.String()
}
