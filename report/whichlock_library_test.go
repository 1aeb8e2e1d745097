package report

import (
	"encoding/json"
	"strings"
	"testing"

	"lockbench/results"
)

// An external client's row names its library and version, as its
// adapter said in hello, wherever the page names the design: the table's
// design cell (Markdown and HTML), a note under it and the matrix as
// data, and the run's facts. lockbench's own rows name none, and a page
// without an external client has no note. The library is found in the row's fault cells,
// else in its price cell.
func TestWhichLockNamesExternalLibrary(t *testing.T) {
	p := &WhichLockPlan{Designs: []string{"redlock-5-mux", "node-redlock", "redis-py"}, Faults: []string{"none", "crash"},
		Price: map[string]string{"redis-py": "redis-py.price"}}
	node := &results.AdapterSettings{Library: "node-redlock", Version: "4.2.0", Language: "javascript"}
	py := &results.AdapterSettings{Library: "redis-py", Version: "4.3.4", Language: "python"}
	var cells []CellSummary
	var loaded []*cell
	add := func(name string, a *results.AdapterSettings) {
		r := results.Run{Config: &results.CellConfig{Adapter: a}, Safety: results.Safety{ResourceChecked: true, Verdict: results.Met},
			Repeats: &results.Repeats{Count: 1, Runs: []results.RepeatRun{{Repeat: 1, Verdict: results.Met}}}}
		cells = append(cells, CellSummary{Index: len(cells), Label: name, CyclesPerSec: 100, Tally: results.Tally{Acquired: 10}, Safety: r.Safety})
		loaded = append(loaded, &cell{Run: r, Info: results.CellInfo{File: "cells/" + name + ".json"}})
	}
	add("redlock-5-mux.none", nil)
	add("redlock-5-mux.crash", nil)
	add("node-redlock.none", node)
	add("node-redlock.crash", node)
	add("redis-py.none", nil) // a fault cell that did not record it: the price cell tells
	add("redis-py.price", py)
	w := buildWhichLock(p, results.Manifest{}, loaded, cells)
	want := []string{"redlock-5-mux", "node-redlock: node-redlock 4.2.0 (javascript)", "redis-py: redis-py 4.3.4 (python)"}
	for i, r := range w.Rows {
		if r.DesignText() != want[i] {
			t.Errorf("row %s: %q; want %q", r.Design, r.DesignText(), want[i])
		}
	}
	var md, html, js strings.Builder
	for _, f := range []func() error{func() error { return w.writeMarkdown(&md) }, func() error { return w.writeHTML(&html) }, func() error { return w.writeJSON(&js) }} {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	for name, page := range map[string]string{"which-lock.md": md.String(), "which-lock.html": html.String()} {
		for _, s := range []string{"node-redlock 4.2.0 (javascript)", "redis-py 4.3.4 (python)", "is an external client (choose --client)",
			"Libraries of the external clients: node-redlock: node-redlock 4.2.0 (javascript); redis-py: redis-py 4.3.4 (python)."} {
			if !strings.Contains(page, s) {
				t.Errorf("%s does not say %q", name, s)
			}
		}
	}
	if !strings.Contains(md.String(), "| node-redlock: node-redlock 4.2.0 (javascript) |") || !strings.Contains(html.String(), "node-redlock<br><small>node-redlock 4.2.0 (javascript)</small>") {
		t.Errorf("the design cells do not name the library:\n%s\n%s", md.String(), html.String())
	}
	var data struct {
		Designs []struct {
			Design  string   `json:"design"`
			Library *Library `json:"library"`
		} `json:"designs"`
	}
	if err := json.Unmarshal([]byte(js.String()), &data); err != nil {
		t.Fatal(err)
	}
	if d := data.Designs; len(d) != 3 || d[0].Library != nil || d[1].Library == nil || *d[1].Library != (Library{"node-redlock", "4.2.0", "javascript"}) || d[2].Library == nil || d[2].Library.Version != "4.3.4" {
		t.Errorf("which-lock-matrix.json's libraries: %+v", d)
	}
	own := &WhichLock{Rows: w.Rows[:1]}
	if own.libraryNote() != "" {
		t.Error("a page of lockbench's own clients has a library note")
	}
}
