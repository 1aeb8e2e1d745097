package report

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"lockbench/results"
)

func mustThresholds(t *testing.T, exprs ...string) []results.Rule {
	t.Helper()
	rs, err := results.ParseThresholds(exprs)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// faultDir is a results directory of two fault cells that met what they
// expect: the first expects violations, the second none.
func faultDir(t *testing.T) string {
	dir := t.TempDir()
	writeSynthDir(t, dir, "chaos", []synthCell{
		{Index: 0, Config: cfg("none", "multiplexed", 16, "closed", 0, 1000), MedianUs: 400, Sigma: 0.5, PerSec: 500, Seconds: 3, ClientShare: 0.2, Seed: 1, SlowFrom: -1, SlowTo: -1},
		{Index: 1, Config: cfg("aof-always", "multiplexed", 16, "closed", 0, 1000), MedianUs: 900, Sigma: 0.5, PerSec: 300, Seconds: 3, ClientShare: 0.2, Seed: 2, SlowFrom: -1, SlowTo: -1},
	})
	files, _ := filepath.Glob(filepath.Join(dir, "cells", "00*.json"))
	sort.Strings(files)
	expect := []map[string]string{{"violations": ">0", "lost_updates": ">0"}, {"violations": "==0", "lost_updates": "==0"}}
	for i, f := range files {
		var r results.Run
		b, _ := os.ReadFile(f)
		must(t, json.Unmarshal(b, &r))
		r.Safety = results.Safety{Violations: int64(7 * (1 - i)), ResourceChecked: true, AcknowledgedWrites: 1000,
			LostUpdates: int64(3 * (1 - i)), Verdict: results.Met}
		r.Config.ChaosConfig, r.Config.Expect = &results.ChaosConfig{}, expect[i]
		must(t, results.WriteFileAtomic(f, func(w io.Writer) error { return results.WriteJSON(w, r) }))
	}
	return dir
}

// The Verdict shows what judged the cells: a fault scenario's
// expectations, met, are not "no thresholds were checked".
func TestVerdictShowsExpectations(t *testing.T) {
	dir := faultDir(t)
	s, err := Build([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Thresholds.OK || s.Thresholds.Judged != 4 || len(s.Thresholds.Expectations) != 2 {
		t.Fatalf("thresholds %+v; want 4 checks met, 2 cells' expectations", s.Thresholds)
	}
	page, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for doc, rule := range map[string]string{string(page): "violations &gt;0", string(md): "violations >0"} {
		if strings.Contains(doc, "No thresholds") || !strings.Contains(doc, "All 4 checks met") ||
			!strings.Contains(doc, rule) {
			t.Errorf("verdict should list the expectations met:\n%s", verdictOf(doc))
		}
	}
}

// A scenario-wide violations==0 binds the cells without their own rule on
// violations; the cell that expects violations>0 is judged on its own.
func TestVerdictScope(t *testing.T) {
	dir := faultDir(t)
	s, err := Build([]string{dir}, Options{Thresholds: mustThresholds(t, "violations==0", "acquire.p99<1us")})
	if err != nil {
		t.Fatal(err)
	}
	var broken []string
	for _, b := range s.Thresholds.Broken {
		broken = append(broken, b.String())
		if b.Rule == "violations==0" {
			t.Errorf("%s: the cell's own expectation should replace the threshold", b)
		}
	}
	if len(broken) != 2 || !strings.Contains(broken[0], "threshold acquire.p99<1us broken by") {
		t.Errorf("broken %q; want acquire.p99<1us broken by both cells", broken)
	}
}

// verdictOf is the Verdict section of a report, for failure messages.
func verdictOf(doc string) string {
	i := strings.Index(doc, "Verdict")
	if i < 0 {
		return doc
	}
	return doc[i:min(len(doc), i+1500)]
}
