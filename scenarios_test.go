package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"html"
	"image"
	_ "image/png"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"lockbench/configs"
	"lockbench/internal/redistest"
)

// Every shipped scenario: --dry-run lists its cells, and a CI-sized run
// (short cells) goes end to end and writes one result per cell.
func TestShippedScenariosEndToEnd(t *testing.T) {
	redistest.Require(t)
	for _, name := range configs.Names() {
		if strings.HasPrefix(name, "chaos") {
			continue // fault scenarios have their own command and tests
		}
		t.Run(name, func(t *testing.T) {
			// Two scenarios at a time (-parallel: GOMAXPROCS): each sweep has
			// servers of its own, and nothing here bounds a time; serially
			// they took 2.7 of CI's 18 minutes.
			t.Parallel()
			stdout, stderr, code := lockbench(t, "sweep", "-f", name, "--dry-run")
			m := regexp.MustCompile(`scenario \S+: (\d+) cells, estimated`).FindStringSubmatch(stdout)
			if code != 0 || m == nil {
				t.Fatalf("dry run: exit %d %q %q", code, stdout, stderr)
			}
			want, _ := strconv.Atoi(m[1])
			if lines := strings.Count(stdout, "\n"); lines < want+3 {
				t.Fatalf("dry run lists %d lines for %d cells", lines, want)
			}
			dir := filepath.Join(t.TempDir(), "res")
			args := []string{"sweep", "-f", name, "--duration", "300ms", "--warmup", "0s", "--out", dir, "--no-report"}
			_, stderr, code = lockbench(t, args...)
			if code != 0 {
				t.Fatalf("run: exit %d\n%s", code, stderr)
			}
			cells, _ := filepath.Glob(filepath.Join(dir, "cells", "*.json"))
			if len(cells) != want {
				t.Fatalf("%d cell results, want %d", len(cells), want)
			}
			for _, c := range cells {
				var r struct {
					Outcomes struct{ Acquired, NotAcquired, Errors int64 } `json:"outcomes"`
					Safety   struct{ Violations int64 }                    `json:"safety"`
				}
				b, _ := os.ReadFile(c)
				if err := json.Unmarshal(b, &r); err != nil {
					t.Fatalf("%s: %v", c, err)
				}
				if r.Safety.Violations != 0 {
					t.Errorf("%s: %d violations", filepath.Base(c), r.Safety.Violations)
				}
			}
		})
	}
}

// A report from a real (short) sweep: every plot decodes as an image of
// non-trivial size and the HTML references only things that exist.
func TestReportFromRealSweep(t *testing.T) {
	redistest.Require(t)
	dir := filepath.Join(t.TempDir(), "qs")
	_, stderr, code := lockbench(t, "sweep", "-f", "quickstart", "--duration", "2500ms", "--warmup", "0s", "--local", "3", "--out", dir)
	if code != 0 {
		t.Fatalf("quickstart: exit %d\n%s", code, stderr)
	}
	pngs, _ := filepath.Glob(filepath.Join(dir, "*.png"))
	svgs, _ := filepath.Glob(filepath.Join(dir, "*.svg"))
	if len(pngs) < 3 || len(svgs) != len(pngs) {
		t.Fatalf("plots: %d png, %d svg", len(pngs), len(svgs))
	}
	for _, p := range pngs {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		img, _, err := image.Decode(f)
		f.Close()
		if err != nil || img.Bounds().Dx() < 300 || img.Bounds().Dy() < 300 {
			t.Fatalf("%s: %v %v", p, err, img)
		}
		if st, _ := os.Stat(p); st.Size() < 1024 {
			t.Fatalf("%s: only %d bytes", p, st.Size())
		}
	}
	for _, p := range svgs {
		b, _ := os.ReadFile(p)
		if !bytes.Contains(b, []byte("<svg")) {
			t.Fatalf("%s is not SVG", p)
		}
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	refs := regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(string(page), -1)
	if len(refs) == 0 {
		t.Fatal("report.html references nothing")
	}
	images := 0
	for _, r := range refs {
		ref := html.UnescapeString(r[1])
		switch {
		case strings.HasPrefix(ref, "#"):
		case strings.HasPrefix(ref, "data:image/png;base64,"):
			b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(ref, "data:image/png;base64,"))
			if err != nil {
				t.Fatalf("embedded image: %v", err)
			}
			if _, _, err := image.Decode(bytes.NewReader(b)); err != nil {
				t.Fatalf("embedded image does not decode: %v", err)
			}
			images++
		case strings.Contains(ref, "://"):
			t.Fatalf("report.html fetches %s: it must work offline", ref)
		default:
			if _, err := os.Stat(filepath.Join(dir, ref)); err != nil {
				t.Fatalf("report.html references missing %s", ref)
			}
		}
	}
	if images < 3 {
		t.Fatalf("report.html embeds %d images", images)
	}
	for _, f := range []string{"report.md", "summary.json", "cells.csv", "manifest.json"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Fatalf("%s missing or empty", f)
		}
	}
}
