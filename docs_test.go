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

// sourcedPages are the pages whose every figure is generated or cites
// its source (the other docs pages are still being brought to it).
var sourcedPages = []string{"README.md", "docs/capacity.md", "docs/faults.md"}

var (
	figure    = regexp.MustCompile(`\d[\d,.]*\s*(cycles/s|locks/s|ms|µs|×|%|k cycles)`)
	sourceRef = regexp.MustCompile(`<!-- source: ([^#\s]+)#(\S+) -->`)
)

// A figure on a sourced page is generated (inside the which-lock block)
// or names where it was measured: <!-- source: FILE#anchor --> on its
// line, whose section holds each of the line's figures.
func TestDocsFiguresHaveSources(t *testing.T) {
	for _, page := range sourcedPages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		fenced, generated := false, false
		for i, l := range strings.Split(string(b), "\n") {
			switch {
			case strings.HasPrefix(l, "```"):
				fenced = !fenced
				continue
			case strings.HasPrefix(l, whichLockBegin):
				generated = true
			case strings.HasPrefix(l, whichLockEnd):
				generated = false
			}
			figs := figure.FindAllString(l, -1)
			if fenced || generated || len(figs) == 0 || isSettingsLine(l) {
				continue
			}
			m := sourceRef.FindStringSubmatch(l)
			if m == nil {
				t.Errorf("%s:%d: figures %q with no source (generate them, or cite <!-- source: FILE#anchor -->)", page, i+1, figs)
				continue
			}
			sec := section(t, m[1], m[2])
			for _, f := range figs {
				if !strings.Contains(sec, strings.TrimSpace(f)) {
					t.Errorf("%s:%d: %q is not in %s#%s", page, i+1, f, m[1], m[2])
				}
			}
		}
	}
}

// isSettingsLine: the line states settings the code uses (a definition,
// not a measurement): the defaults and the work lockbench lays out.
func isSettingsLine(l string) bool {
	for _, s := range []string{"SLO", "--p99", "holds of", "workers", "TTL", "timeout", "locks/s open loop", "rate every design", "arrival rates"} {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// section is the text of file's section under the heading anchor.
func section(t *testing.T, file, anchor string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("source %s: %v", file, err)
	}
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if m := heading.FindStringSubmatch(l); m != nil && slug(m[1]) == anchor {
			level := len(l) - len(strings.TrimLeft(l, "#"))
			end := len(lines)
			for j := i + 1; j < len(lines); j++ {
				if strings.HasPrefix(lines[j], "#") && len(lines[j])-len(strings.TrimLeft(lines[j], "#")) <= level {
					end = j
					break
				}
			}
			return strings.Join(lines[i:end], "\n")
		}
	}
	t.Errorf("source %s#%s: no such heading", file, anchor)
	return ""
}
