package main

import (
	"fmt"
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
	lines := strings.Split(string(b), "\n")
	fenced := inFence(lines)
	for i, l := range lines {
		if m := heading.FindStringSubmatch(l); m != nil && !fenced[i] && slug(m[1]) == anchor {
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

// figurePages are the pages whose every figure is generated or cites its
// source: the README and docs/*.md, but the journal (docs/benchmarks-history.md,
// itself the source the others cite) and docs/flags.md (generated from the
// flag definitions, held by TestFlagsDoc: its figures are defaults).
func figurePages(t *testing.T) []string {
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, p := range pages {
		if p != "docs/benchmarks-history.md" && p != "docs/flags.md" {
			out = append(out, p)
		}
	}
	return out
}

var (
	// figure is a measured quantity as the pages write one: a number with
	// a spaced unit ("1.91 ms", "17,932 cycles/s") or a ratio, share or
	// thousands ("2.46×", "94%", "28k"), or a duration in minutes
	// ("17m48s"). A setting is written as Go's flags take it ("10ms",
	// "2s") and is not a figure.
	figure = regexp.MustCompile(`\d(?:[\d,.]*\d)?(?: (?:ms|µs|s|cycles/s|locks/s|k cycles|lock requests|lock calls|requests)\b|×|%|k\b|m\d\ds)`)
	// sourceRef names where a unit's figures were measured.
	sourceRef = regexp.MustCompile(`<!-- source: ([^#\s]+)#(\S+) -->`)
	// notMeasured marks a unit whose figures are settings or definitions.
	notMeasured = regexp.MustCompile(`<!-- not measured: [^>]+ -->`)
	// unitSpace is the space between a number and its unit, which
	// tables and text write or leave out.
	unitSpace = regexp.MustCompile(`(\d) ([^\d\s|])`)
	number    = regexp.MustCompile(`\d[\d,.]*\d|\d`)
)

// A unit of a page: a paragraph, a bulleted list item with its
// continuation lines, a table (a numbered list stays one unit); a source
// comment anywhere in it covers its figures.
type unit struct {
	first int // line number of its first line
	lines []string
}

// units splits a page into units, leaving out fenced blocks (a command's
// output shown as it printed, under the command that made it) and the
// generated which-lock block.
func units(text string) []unit {
	var us []unit
	var cur *unit
	fenced, generated := false, false
	flush := func() {
		if cur != nil {
			us = append(us, *cur)
			cur = nil
		}
	}
	for i, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "```"):
			fenced = !fenced
			flush()
			continue
		case strings.HasPrefix(l, whichLockBegin):
			generated = true
		case strings.HasPrefix(l, whichLockEnd):
			generated = false
			continue
		}
		trimmed := strings.TrimSpace(l)
		item := strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "* ") || strings.HasPrefix(l, "#")
		if fenced || generated || trimmed == "" || item {
			flush()
		}
		if fenced || generated || trimmed == "" {
			continue
		}
		if cur == nil {
			cur = &unit{first: i + 1}
		}
		cur.lines = append(cur.lines, l)
	}
	flush()
	return us
}

// A figure in README.md or docs/*.md is generated (inside the which-lock
// block) or its unit names where it was measured, <!-- source: FILE#anchor -->,
// and the number of each figure stands in that section (in one of them,
// when the unit cites several). A unit of settings says so:
// <!-- not measured: why -->.
func TestDocsFiguresHaveSources(t *testing.T) {
	checked := 0
	for _, page := range figurePages(t) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range units(string(b)) {
			checked += checkUnit(t, page, u)
		}
	}
	if checked == 0 {
		t.Fatal("no figure checked against its source")
	}
	t.Logf("%d figures checked against their sources", checked)
}

// reporter is what the figure checks report to: a test, or planted's
// recorder.
type reporter interface {
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// planted records what a check reported on planted text.
type planted struct{ errs []string }

func (p *planted) Errorf(format string, args ...any) {
	p.errs = append(p.errs, fmt.Sprintf(format, args...))
}
func (p *planted) Fatalf(format string, args ...any) { p.Errorf(format, args...) }

// The figures check fails on a planted mismatch: a figure without a
// source, and one its cited section does not hold; the true figure beside
// them passes.
func TestDocsFiguresCheckFailsOnAPlantedMismatch(t *testing.T) {
	const src = "<!-- source: BENCHMARKS.md#what-does-fsync-cost-and-what-does-multiplexing-gain -->"
	for text, wantErr := range map[string]bool{
		"one master served 123,457 cycles/s on this machine.":              true,
		"multiplexed gave 99.97× the cycles/s of sequential. " + src:       true,
		"multiplexed gave 1.72× (none) the cycles/s of sequential. " + src: false,
	} {
		var p planted
		n := checkUnit(&p, "planted.md", unit{first: 1, lines: []string{text}})
		if got := len(p.errs) > 0; got != wantErr {
			t.Errorf("%q: reported %q (checked %d); want an error: %v", text, p.errs, n, wantErr)
		}
	}
}

// checkUnit reports u's figures that have no source or are not in it, and
// returns how many it checked.
func checkUnit(t reporter, page string, u unit) int {
	text := strings.Join(u.lines, "\n")
	figs := figure.FindAllString(text, -1)
	if len(figs) == 0 || notMeasured.MatchString(text) {
		return 0
	}
	refs := sourceRef.FindAllStringSubmatch(text, -1)
	if len(refs) == 0 {
		t.Errorf("%s:%d: figures %q with no source (generate them, or cite <!-- source: FILE#anchor -->)", page, u.first, figs)
		return 0
	}
	var secs, names []string
	for _, r := range refs {
		secs = append(secs, section(t, r[1], r[2]))
		names = append(names, r[1]+"#"+r[2])
	}
	for _, f := range figs {
		if !inAny(f, secs) {
			t.Errorf("%s:%d: %q is not in %s", page, u.first, f, strings.Join(names, " nor "))
		}
	}
	return len(figs)
}

// inAny: f's number stands in one of secs, as a number of its own (not a
// part of a longer one); a one-digit figure, or one of several numbers,
// whole with its unit, as a lone digit says nothing.
func inAny(f string, secs []string) bool {
	nums := number.FindAllString(f, -1)
	want := nums[0]
	if len(nums) > 1 || len(strings.Trim(want, ",.")) == 1 {
		want = f // "17m48s" whole; a lone digit with its unit
	}
	for _, s := range secs {
		if containsFigure(s, want) {
			return true
		}
	}
	return false
}

// containsFigure: want stands in s with no digit on either side (line
// breaks read as spaces, a space before a unit ignored).
func containsFigure(s, want string) bool {
	s = unitSpace.ReplaceAllString(strings.Join(strings.Fields(s), " "), "$1$2")
	want = unitSpace.ReplaceAllString(want, "$1$2")
	for i := 0; ; {
		j := strings.Index(s[i:], want)
		if j < 0 {
			return false
		}
		j += i
		before := !continues(s, j-1, -1)
		after := !isDigitByte(want[len(want)-1]) || !continues(s, j+len(want), 1)
		if before && after {
			return true
		}
		i = j + 1
	}
}

func isDigitByte(c byte) bool { return c >= '0' && c <= '9' }

// continues: s[i] carries a number on in direction dir (a digit, or a
// separator with a digit beyond it), so a match ending or starting beside
// it is a part of a longer number.
func continues(s string, i, dir int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	if isDigitByte(s[i]) {
		return true
	}
	k := i + dir
	return (s[i] == ',' || s[i] == '.') && k >= 0 && k < len(s) && isDigitByte(s[k])
}

// section is the text of file's section under the heading anchor.
func section(t reporter, file, anchor string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("source %s: %v", file, err)
	}
	lines := strings.Split(string(b), "\n")
	fenced := inFence(lines)
	for i, l := range lines {
		if m := heading.FindStringSubmatch(l); m != nil && !fenced[i] && slug(m[1]) == anchor {
			level := len(l) - len(strings.TrimLeft(l, "#"))
			end := len(lines)
			for j := i + 1; j < len(lines); j++ {
				if !fenced[j] && strings.HasPrefix(lines[j], "#") && len(lines[j])-len(strings.TrimLeft(lines[j], "#")) <= level {
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

// inFence marks the lines inside fenced blocks, whose "# comment" lines
// are no headings.
func inFence(lines []string) []bool {
	in := make([]bool, len(lines))
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
		}
		in[i] = fenced
	}
	return in
}
