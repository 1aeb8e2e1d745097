package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"lockbench/results"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// view is what the HTML and Markdown templates read: the summary with its
// numbers already rounded and united.
type view struct {
	S         *Summary
	Figures   []figView
	Timelines []figView
	Cells     []cellView
	Capacity  []capView
	Manifest  string
	SLOText   string
	// Safety rows appear when any cell checked a protected resource or
	// had fault events (chaos scenarios).
	Safety []safetyRow
	// Contention rows appear when any cell's callers waited (more than one
	// attempt per lock, or some gave up).
	Contention []contentionRow
	// Price rows appear when the cells differ in topology.
	Price     []priceView
	PriceNote string
	// ShowCapacity is false when every cell is a fault scenario: their load
	// is contention by design, and an SLO knee would say nothing.
	ShowCapacity bool
	// Differences shown in the verdict (the first maxDifferences), and
	// how many more summary.json lists.
	Differences     []Difference
	MoreDifferences int
	// SpreadNote says what "± x%" means, when any cell was repeated.
	SpreadNote string
	// AdapterNote says what a client CPU's brackets are, when any cell
	// ran an external client.
	AdapterNote string
}

const adapterNote = "With an external client (--client) the client CPU is lockbench's and its adapter process's together; the adapter's part is in brackets."

// maxDifferences keeps the verdict readable on large sweeps.
const maxDifferences = 24

type safetyRow struct {
	Index                                int
	Label, Faults, Acquired              string
	Violations, Lost, Rejected, AvailOps string
	AvailTime, Fencing                   string
	Bad                                  bool
	// History is porcupine's verdict on the resource's history, with a
	// link to the failing key's history; HistoryBad unless linearizable.
	History, HistoryLink string
	HistoryBad           bool
	// Verdict of a chaos cell; VerdictBad when it failed.
	Verdict    string
	VerdictBad bool
}

type figView struct {
	Name, Title, Caption string
	DataURI              template.URL
	PNG, SVG             string // relative file names when written
	Open                 bool   // timelines of cells with events start open
	Cell                 string
}

type cellView struct {
	CellSummary
	Tput, Acq                        string
	P50, P90, P99, P999, Max         string
	FailedP99, ReleaseP99            string
	Success, CPU, Share, LoadText    string
	RepeatsT                         string
	AcquiredT, NotAcquiredT, ErrorsT string
	ViolationsT                      string // "not judged (…)" when the probe judged no hold
	Hlogs                            []string
	MasterRows                       []masterRow
	EventsText                       []string
	BusiestText                      string
	Cost                             costView
}

// costView is a cell's machine split, server cost and verdict, as text.
type costView struct {
	Busy, Client, Servers, Other, Steal, Busiest string
	CmdUs, CPUUs, Projection, Measured, Fsync    string
	LimitBy, LimitEvidence                       string
}

func makeCostView(c CellSummary) costView {
	v := costView{"—", "—", "—", "—", "—", "—", "—", "—", "—", results.Rate(c.CyclesPerSec), "—", "—", ""}
	if m := c.Machine; m != nil {
		v.Busy, v.Client, v.Servers = results.Pct0(m.BusyShare+m.StealShare), results.Pct0(m.ClientShare), results.Pct0(m.ServersShare)
		v.Other, v.Steal = results.Pct0(m.OtherShare), results.Pct0(m.StealShare)
		if m.ProxyShare != nil {
			v.Client += " (proxy " + results.Pct0(*m.ProxyShare) + ")"
		}
		if m.AdapterShare != nil {
			v.Client += " (adapter " + results.Pct0(*m.AdapterShare) + ")"
		}
		if !m.MastersShareMachine {
			v.Servers = "elsewhere"
		}
	}
	if c.ServerBusiestShare > 0 || c.Machine != nil {
		r := results.Run{Servers: &results.Servers{BusiestShare: c.ServerBusiestShare}, Machine: c.Machine}
		if b, ok := results.BusiestMaster(&r); ok {
			v.Busiest = results.Pct0(b)
		}
	}
	if rc := c.CommandCost; rc != nil {
		v.CmdUs = results.Sig3(rc.CommandMicrosCycle)
		if rc.CPUMicrosCycle > 0 {
			v.CPUUs = results.Sig3(rc.CPUMicrosCycle)
		}
		if p, basis := projection(rc); p > 0 {
			v.Projection = projectionText(p, basis)
		}
	}
	if c.FsyncShareP50 != nil {
		v.Fsync = results.Pct0(*c.FsyncShareP50)
	}
	if c.Limit != nil {
		v.LimitBy, v.LimitEvidence = c.Limit.By, c.Limit.Evidence
	}
	return v
}

type masterRow struct {
	Addr                                                 string
	OK, Taken, Timeout, Err, Pending, NotSent, Late, Rel string
	Unconfirmed                                          string
}

type capView struct {
	Capacity
	MaxRateT, KneeLoadT, HeadroomT, GroupsT string
	LimitT, ProjectionT                     string
}

func makeView(s *Summary, figs []figure, png map[string][]byte) view {
	v := view{S: s}
	v.SLOText = fmt.Sprintf("acquire p99 ≤ %s and success ratio ≥ %s", results.FormatMicros(s.SLO.AcquireP99Micros), results.Pct(s.SLO.MinSuccess))
	v.Figures, v.Timelines = figViews(s, figs, png)
	for _, c := range s.Cells {
		v.Cells = append(v.Cells, makeCellView(c, s.OutDir))
		if c.Safety.ResourceChecked || len(c.Events) > 0 {
			v.Safety = append(v.Safety, makeSafetyRow(c))
		}
		if !c.Safety.ResourceChecked {
			v.ShowCapacity = true
		}
		if row, ok := makeContentionRow(c); ok {
			v.Contention = append(v.Contention, row)
		}
	}
	if !slices.ContainsFunc(v.Contention, func(r contentionRow) bool { return r.Waited }) {
		v.Contention = nil
	}
	for _, r := range s.Price {
		v.Price = append(v.Price, makePriceView(r))
	}
	v.PriceNote = priceNote
	v.SpreadNote = spreadNote(s.Cells)
	if slices.ContainsFunc(s.Cells, func(c CellSummary) bool { return c.AdapterCPUPerCycle != nil }) {
		v.AdapterNote = adapterNote
	}
	for _, c := range s.Capacity {
		v.Capacity = append(v.Capacity, makeCapView(c))
	}
	v.Differences = s.Differences
	if len(v.Differences) > maxDifferences {
		v.Differences, v.MoreDifferences = v.Differences[:maxDifferences], len(s.Differences)-maxDifferences
	}
	b, _ := json.MarshalIndent(s.Manifest, "", "  ")
	v.Manifest = string(b)
	return v
}

// figViews splits the figures into the report's plots and the cells'
// timelines, with their written files and, given png, inline images.
func figViews(s *Summary, figs []figure, png map[string][]byte) (plots, timelines []figView) {
	written := map[string]bool{}
	for _, p := range s.Plots {
		written[p] = true
	}
	for _, f := range figs {
		fv := figView{Name: f.Name, Title: f.Title, Caption: f.Caption}
		if b := png[f.Name+".png"]; b != nil {
			fv.DataURI = template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(b))
		}
		if written[f.Name+".png"] {
			fv.PNG = f.Name + ".png"
		}
		if written[f.Name+".svg"] {
			fv.SVG = f.Name + ".svg"
		}
		if f.Cell >= 0 {
			fv.Cell = s.Cells[f.Cell].Label
			fv.Open = len(s.Cells[f.Cell].Events) > 0
			timelines = append(timelines, fv)
			continue
		}
		plots = append(plots, fv)
	}
	return plots, timelines
}

// makeCellView is a cell's row and details; outDir holds its logs.
func makeCellView(c CellSummary, outDir string) cellView {
	cv := cellFigures(c)
	cv.LoadText = cellLoadText(c)
	cv.Hlogs = hlogFiles(c, outDir)
	cv.MasterRows = masterRows(c.PerMaster)
	if c.ServerBusiestShare > 0 {
		cv.BusiestText = results.Pct0(c.ServerBusiestShare)
	}
	cv.Cost = makeCostView(c)
	cv.EventsText = eventTexts(c.Events)
	for _, f := range c.Failovers {
		cv.EventsText = append(cv.EventsText, f.Text())
	}
	if ll := c.Safety.LockLoss; ll != nil {
		cv.EventsText = append(cv.EventsText, ll.Text())
	}
	return cv
}

// cellLoadText is the load column: the loop and its size.
func cellLoadText(c CellSummary) string {
	if c.Load != "open" {
		return "closed, " + strconv.Itoa(c.Workers) + " workers"
	}
	t := "open, " + results.Rate(c.Rate) + "/s"
	if ol := c.OpenLoop; ol != nil {
		t += ", served " + results.Rate(ol.ServedRate) + "/s"
		if ol.Overloaded {
			t += " (OVERLOADED)"
		}
	}
	return t
}

// hlogFiles are the cell's interval logs present in outDir, relative to it.
func hlogFiles(c CellSummary, outDir string) []string {
	stem := strings.TrimSuffix(c.PercentilesFile, ".acquire.percentiles.txt")
	if stem == "" {
		stem = filepath.ToSlash(filepath.Join("cells", c.ID))
	}
	var out []string
	for _, m := range metrics {
		rel := stem + "." + m + ".hlog"
		if _, err := os.Stat(filepath.Join(outDir, filepath.FromSlash(rel))); err == nil {
			out = append(out, rel)
		}
	}
	return out
}

// masterRows are the per-master outcomes, by address.
func masterRows(per map[string]results.MasterOutcomes) []masterRow {
	var out []masterRow
	for _, a := range sortedKeys(per) {
		m := per[a]
		out = append(out, masterRow{a, results.Count(m.OK), results.Count(m.Taken), results.Count(m.Timeout), results.Count(m.Error),
			results.Count(m.Pending), results.Count(m.NotSent), results.Count(m.Late), results.Count(m.LateReleased), results.Count(m.Unconfirmed)})
	}
	return out
}

// eventTexts number a cell's fault events: "1. at 3.0 s: crash m1 — …".
func eventTexts(events []results.Event) []string {
	var out []string
	for i, e := range events {
		t := fmt.Sprintf("%d. at %.1f s: %s", i+1, e.AtSeconds, e.Kind)
		if e.Target != "" {
			t += " " + e.Target
		}
		if e.Detail != "" {
			t += " — " + e.Detail
		}
		out = append(out, t)
	}
	return out
}

// makeCapView is one capacity row as text.
func makeCapView(c Capacity) capView {
	cv := capView{Capacity: c, MaxRateT: "—", KneeLoadT: "—", HeadroomT: "—", GroupsT: "—", LimitT: "—", ProjectionT: "—"}
	if c.Limit != nil {
		cv.LimitT = c.Limit.By
	}
	if c.ProjectedRate > 0 {
		cv.ProjectionT = projectionText(c.ProjectedRate, c.ProjectionBasis)
	}
	if c.MaxRate > 0 {
		cv.MaxRateT = results.Rate(c.MaxRate)
		if c.LowerBound {
			cv.MaxRateT = "≥ " + cv.MaxRateT + " (lower bound)"
		}
		if c.Load == "open" {
			cv.KneeLoadT = results.Rate(c.KneeLoad) + " offered/s"
		} else {
			cv.KneeLoadT = strconv.FormatFloat(c.KneeLoad, 'f', -1, 64) + " workers"
		}
	}
	if c.HeadroomPct != nil {
		cv.HeadroomT = fmt.Sprintf("%+.0f%%", *c.HeadroomPct)
	}
	if c.Groups != nil {
		cv.GroupsT = strconv.Itoa(*c.Groups)
		if c.GroupsFrom == "projection" {
			cv.GroupsT += " (from the projection)"
		}
	}
	if c.Shards != nil {
		cv.GroupsT = fmt.Sprintf("%d shards of %s locks/s (from the %s)", *c.Shards, results.Rate(c.ShardCapacity), c.ShardsFrom)
	}
	return cv
}

// projectionText is a server-cost projection and what it was worked out from.
func projectionText(rate float64, basis string) string {
	return results.Rate(rate) + "/s (" + map[string]string{"cpu": "server CPU", "commands": "command time"}[basis] + ")"
}

// cellFigures writes a cell's figures for the tables: a repeated cell's
// as "median ±spread".
func cellFigures(c CellSummary) cellView {
	sp := func(text, figure string) string { return withSpread(text, c.Repeats, figure) }
	cv := cellView{CellSummary: c,
		Tput: sp(results.Rate(c.CyclesPerSec), "cycles_per_sec"), Acq: sp(results.Rate(c.AcquiresPerSec), "acquires_per_sec"),
		P50: sp(ms(c.Acquire.P50), "acquire_p50"), P90: sp(ms(c.Acquire.P90), "acquire_p90"), P99: sp(ms(c.Acquire.P99), "acquire_p99"), P999: sp(ms(c.Acquire.P999), "acquire_p999"), Max: ms(c.Acquire.Max),
		FailedP99: ms(c.Failed.P99), ReleaseP99: sp(ms(c.Release.P99), "release_p99"), RepeatsT: "1",
		Success: results.Pct(c.SuccessRatio), CPU: results.Sig3(c.ClientCPUPerCycle), Share: results.Pct0(c.ClientCPUShare),
		AcquiredT: results.Count(c.Acquired), NotAcquiredT: results.Count(c.NotAcquired), ErrorsT: results.Count(c.Errors),
	}
	if a := c.AdapterCPUPerCycle; a != nil {
		cv.CPU += " (adapter " + results.Sig3(*a) + ")"
	}
	cv.ViolationsT = results.Count(c.Violations)
	if c.Safety.NotJudged != "" {
		cv.ViolationsT = "not judged (" + c.Safety.NotJudged + ")"
	}
	if c.Repeats != nil {
		cv.RepeatsT = strconv.Itoa(c.Repeats.Count)
	}
	return cv
}

// spreadNote says what "±" means, when any cell was repeated.
func spreadNote(cells []CellSummary) string {
	for _, c := range cells {
		if c.Repeats != nil {
			return "Figures of repeated cells are medians of their repeats ± the larger side of the " + results.CIText(c.Repeats) + "; max and counts cover all repeats."
		}
	}
	return ""
}

// withSpread appends " ±3.1%" to a repeated cell's figure.
func withSpread(text string, rep *results.Repeats, figure string) string {
	if rep == nil {
		return text
	}
	sp := rep.Spread[figure]
	if sp.N < 2 {
		return text
	}
	return text + " ±" + results.SpreadText(sp)
}

// makeSafetyRow is one line of the safety table: what was done to the lock
// and what it cost in correctness and availability.
func makeSafetyRow(c CellSummary) safetyRow {
	kinds := map[string]int{}
	var order []string
	for _, e := range c.Events {
		if kinds[e.Kind] == 0 {
			order = append(order, e.Kind)
		}
		kinds[e.Kind]++
	}
	var faults []string
	for _, k := range order {
		if kinds[k] > 1 {
			faults = append(faults, fmt.Sprintf("%s ×%d", k, kinds[k]))
		} else {
			faults = append(faults, k)
		}
	}
	if len(faults) == 0 {
		faults = []string{"none"}
	}
	sf := c.Safety
	row := safetyRow{Index: c.Index, Label: c.Label, Faults: strings.Join(faults, ", "), Acquired: results.Count(c.Acquired),
		Violations: results.Count(sf.Violations), Lost: "—", Rejected: "—", AvailOps: "—", AvailTime: "—", Fencing: "no",
		Bad: sf.Violations > 0 || sf.DataLost() > 0}
	if sf.ResourceChecked {
		row.Lost = spreadCount(c.Repeats, "lost_updates", sf.LostUpdates)
		row.AvailOps, row.AvailTime = results.Pct(sf.AvailabilityOps), results.Pct(sf.AvailabilityTime)
		row.Violations = spreadCount(c.Repeats, "violations", sf.Violations)
		if u := c.Repeats.UnsafeText(); u != "" {
			row.Label += " (" + u + ")"
			row.Bad = row.Bad || c.Repeats.Unsafe > 0
		}
	}
	if sf.Fencing {
		row.Fencing = "yes"
		row.Rejected = results.Count(sf.StaleWritesRejected)
	}
	if sf.GuardedWrite {
		row.Fencing = "guarded write"
		row.Rejected = results.Count(sf.StaleWritesRejected)
	}
	row.History, row.HistoryBad = sf.Linearizability.Summary()
	row.HistoryLink = filepath.ToSlash(c.HistoryFile)
	row.Verdict, row.VerdictBad = verdictText(sf)
	return row
}

// spreadCount is a checker's count: one run's, or the repeats' median
// with their range, "17 (15–19)".
func spreadCount(rep *results.Repeats, figure string, n int64) string {
	if rep == nil {
		return results.Count(n)
	}
	if sp, ok := rep.Spread[figure]; ok && sp.Min != sp.Max {
		return fmt.Sprintf("%s (%s–%s)", results.Count(n), results.Count(int64(sp.Min)), results.Count(int64(sp.Max)))
	}
	return results.Count(n)
}

// verdictText is what a chaos cell showed: never "met" without
// expectations that held on a cell that judged something.
func verdictText(sf results.Safety) (string, bool) {
	switch sf.Verdict {
	case "not judged":
		return "NOT JUDGED: " + sf.NotJudged, true
	case "not met":
		return "NOT MET", true
	case "checkers disagree":
		return "CHECKERS DISAGREE: " + sf.Disagreement, true
	case "":
		if !sf.ResourceChecked {
			return "—", false
		}
		return "unchecked", false
	}
	return sf.Verdict, false
}

// ms writes µs as milliseconds with about three significant digits.
func ms(us float64) string { return results.Sig3(us / 1000) }

func writeHTML(path string, s *Summary, figs []figure, png map[string][]byte) error {
	var buf bytes.Buffer
	if err := htmlTmpl.Execute(&buf, makeView(s, figs, png)); err != nil {
		return fmt.Errorf("report.html: %w", err)
	}
	return results.WriteFileShared(path, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err })
}

var htmlTmpl = template.Must(template.New("html").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>lockbench report: {{.S.Name}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Liberation Sans", sans-serif; margin: 0 auto; max-width: 1360px; padding: 0 24px 48px; color: #1d2125; line-height: 1.45; }
h1 { font-size: 1.7em; margin: 24px 0 4px; }
h2 { font-size: 1.3em; margin-top: 36px; border-bottom: 2px solid #dde2e6; padding-bottom: 4px; }
h3 { font-size: 1.1em; margin: 24px 0 6px; }
.meta { color: #5c6670; margin: 0 0 12px; }
nav a { margin-right: 14px; }
a { color: #0b5cad; }
table { border-collapse: collapse; font-size: 0.86em; margin: 8px 0 16px; }
th, td { border: 1px solid #d5dadf; padding: 3px 6px; text-align: right; white-space: nowrap; }
th { background: #f1f3f5; white-space: normal; vertical-align: bottom; }
td.label { white-space: normal; min-width: 200px; max-width: 380px; }
td.l, th.l { text-align: left; }
td.wrap { white-space: normal; min-width: 320px; text-align: left; }
table.full { width: 100%; }
tr:nth-child(even) td { background: #fafbfc; }
.scroll { overflow-x: auto; }
.ok { color: #19692c; font-weight: 600; }
.bad { color: #b3261e; font-weight: 600; }
.warn { background: #fff6e0; border-left: 4px solid #e0a100; padding: 6px 10px; margin: 6px 0; }
figure { margin: 12px 0 28px; }
figure img { max-width: 100%; height: auto; border: 1px solid #e3e6e9; }
figcaption { color: #3c454d; font-size: 0.92em; margin-top: 4px; max-width: 1100px; }
details { margin: 6px 0; }
summary { cursor: pointer; font-weight: 600; }
pre { background: #f6f8fa; padding: 10px; overflow-x: auto; font-size: 0.82em; }
</style>
</head>
<body>
<h1>lockbench report: {{.S.Name}}</h1>
{{with .S.Description}}<p>{{.}}</p>{{end}}
<p class="meta">{{len .S.Cells}} cells · generated {{.S.GeneratedAt.Format "2006-01-02 15:04:05 UTC"}} · from {{range $i, $d := .S.Dirs}}{{if $i}}, {{end}}<code>{{$d}}</code>{{end}}{{with .S.Manifest.LockbenchVersion}} · lockbench {{.}}{{end}}{{with .S.Manifest.ServerVersions}} · {{range $i, $v := .}}{{if $i}}, {{end}}{{$v}}{{end}}{{end}}</p>
<nav><a href="#verdict">Verdict</a>{{if .Price}}<a href="#price">Topologies</a>{{end}}{{if .Safety}}<a href="#safety">Safety</a>{{end}}{{if .ShowCapacity}}<a href="#capacity">Capacity</a>{{end}}<a href="#plots">Plots</a><a href="#cells">Cells</a>{{if .Timelines}}<a href="#timelines">Timelines</a>{{end}}<a href="#details">Per-cell details</a><a href="#manifest">Manifest</a></nav>

{{if .S.Findings}}<h2 id="findings">What this run says</h2>
<ul>{{range .S.Findings}}<li>{{.}}</li>{{end}}</ul>{{end}}
<h2 id="verdict">Verdict</h2>
{{if .ShowCapacity}}<p>SLO used for capacity: {{.SLOText}}. Target rate: {{if .S.TargetRate}}{{printf "%.0f" .S.TargetRate}} cycles/s{{else}}not given (--target-rate){{end}}.</p>{{end}}
{{with .S.Thresholds}}{{if .Judged}}
{{if .OK}}<p class="ok">All {{.Judged}} checks met.</p>
{{else}}<p class="bad">{{len .Broken}} of {{.Judged}} checks not met or not judged:</p>
<ul>{{range .Broken}}<li>{{.Kind}} <code>{{.Rule}}</code> {{.Verb}} <b>{{.Cell}}</b>: actual {{.ActualText}}</li>{{end}}</ul>{{end}}
{{if .Checked}}<p>Thresholds, on every cell (a cell's own expectation on the same metric replaces one): {{range $i, $t := .Checked}}{{if $i}}, {{end}}<code>{{$t}}</code>{{end}}.</p>{{end}}
{{if .Expectations}}<p>Expectations, each cell's own:</p>
<ul>{{range .Expectations}}<li><b>{{.Cell}}</b>: {{range $i, $r := .Rules}}{{if $i}}, {{end}}<code>{{$r}}</code>{{end}}</li>{{end}}</ul>{{end}}
{{else}}<p>No thresholds or expectations were checked (--threshold, report.thresholds, expect:).</p>{{end}}{{end}}
{{if .Differences}}<p id="noise">What each swept setting changed, against the noise of the repeats (Mann–Whitney U at 0.05; the spread is the larger relative spread of the two cells):</p>
<ul>{{range .Differences}}<li>{{.Text}}</li>{{end}}</ul>{{if .MoreDifferences}}<p>… and {{.MoreDifferences}} more in summary.json (differences).</p>{{end}}{{end}}
{{range .S.Warnings}}<div class="warn">{{.}}</div>{{end}}

{{if .Price}}<h2 id="price">Topologies: price and safety</h2>
<p>{{.PriceNote}}</p>
<div class="scroll"><table>
<tr><th>#</th><th class="l">cell</th><th class="l">topology</th><th class="l">servers</th><th>wait replicas</th><th class="l">persistence</th><th class="l">load</th><th>acquire p50 (ms)</th><th>× single</th><th>acquire p99 (ms)</th><th>× single</th><th>cycles/s</th><th>× single</th><th>server CPU µs/cycle</th><th>× single</th><th>violations</th><th>few acks</th><th>lost updates</th><th class="l">verdict</th></tr>
{{range .Price}}<tr><td>{{.Index}}</td><td class="l label">{{.Label}}</td><td class="l">{{.TopologyT}}</td><td class="l">{{.ServersT}}</td><td>{{.WaitReplicas}}</td><td class="l">{{.Persistence}}</td><td class="l">{{.Load}}</td><td>{{.P50}}</td><td>{{.P50R}}</td><td>{{.P99}}</td><td>{{.P99R}}</td><td>{{.Cycles}}</td><td>{{.CyclesR}}</td><td>{{.CPU}}</td><td>{{.CPUR}}</td><td{{if .Bad}} class="bad"{{end}}>{{.ViolationsT}}</td><td>{{.Unconfirmed}}</td><td{{if .Bad}} class="bad"{{end}}>{{.LostT}}</td><td class="l wrap">{{.VerdictT}}</td></tr>
{{end}}</table></div>
{{end}}

{{if .Safety}}<h2 id="safety">Safety under faults</h2>
<p>Violations (a fault cell's): exclusion broken, two holders of one key inside their critical sections at once, as each used its lock (from the return of its acquire to its release call), whatever the lock promised; within the promise (a lease: its validity window) is the second figure, in the cell's JSON. A benchmark cell's probe judges holds within their validity windows. Lost updates: acknowledged read-modify-writes on the protected resource missing from its final value. History: whether porcupine, judging only the resource's history (one operation per critical section), finds an order of the sections that explains every value read; a history that is not linearizable links to the failing key's history. With fencing, the resource rejects writes carrying a token older than one it has seen. Availability: share of acquire attempts that succeeded; unavailable: after a fault that took a server, member or leader away, the longest span in which no acquire succeeded, on the acquires' own timestamps.</p>
<div class="scroll"><table>
<tr><th>#</th><th class="l">cell</th><th class="l">faults</th><th>acquisitions</th><th>violations</th><th>lost updates</th><th>fencing</th><th>stale writes rejected</th><th>availability (attempts)</th><th>availability (time)</th><th class="l">history (porcupine)</th><th class="l">expectations</th></tr>
{{range .Safety}}<tr><td>{{.Index}}</td><td class="l label">{{.Label}}</td><td class="l">{{.Faults}}</td><td>{{.Acquired}}</td><td{{if .Bad}} class="bad"{{end}}>{{.Violations}}</td><td{{if .Bad}} class="bad"{{end}}>{{.Lost}}</td><td>{{.Fencing}}</td><td>{{.Rejected}}</td><td>{{.AvailOps}}</td><td>{{.AvailTime}}</td><td class="l wrap{{if .HistoryBad}} bad{{end}}">{{.History}}{{if .HistoryLink}} (<a href="{{.HistoryLink}}">its history</a>){{end}}</td><td class="l wrap{{if .VerdictBad}} bad{{end}}">{{.Verdict}}</td></tr>
{{end}}</table></div>
{{end}}

{{if .Contention}}<h2 id="contention">Contention as callers feel it</h2>
<p>Time to lock: from a caller's first attempt on a key to holding it, across every retry and wait (callers that gave up are counted apart). Attempts and commands per lock: what waiting puts on the servers (commands summed over every server). Handoff gap: on one key, from a holder's release to the next holder's acquire while callers waited. Starved: workers that gave up or waited more than 10× the median. Jain's index: 1 when every worker acquired equally often. p99 ÷ FIFO ideal (one hot key): the time to lock p99 over what a first-come first-served queue gives, (contenders − 1) × hold + contenders × mean handoff gap; near 1 for a fair queue (a lock service's FIFO), far above it when callers that retry overtake each other.</p>
<div class="scroll"><table>
<tr><th>#</th><th class="l">cell</th><th class="l">strategy</th><th>workers</th><th>keys</th><th>cycles/s</th><th>time to lock p50</th><th>p99</th><th>max</th><th>attempts/lock</th><th>commands/lock</th><th>handoff gap p50</th><th>p99 ÷ FIFO ideal</th><th>gave up</th><th>starved</th><th>Jain's index</th><th>wake-ups (message / timeout)</th></tr>
{{range .Contention}}<tr><td>{{.Index}}</td><td class="l label">{{.Label}}</td><td class="l">{{.Strategy}}</td><td>{{.Workers}}</td><td>{{.Keys}}</td><td>{{.Cycles}}</td><td>{{.P50}}</td><td>{{.P99}}</td><td>{{.Max}}</td><td>{{.Attempts}}</td><td>{{.Commands}}</td><td>{{.Gap}}</td><td>{{.FIFO}}</td><td>{{.GaveUp}}</td><td>{{.Starved}}</td><td>{{.Jain}}</td><td>{{.Wakeups}}</td></tr>
{{end}}</table></div>
{{end}}

{{if .ShowCapacity}}<h2 id="capacity">Capacity planning</h2>
<p>For each configuration (cells that differ only in workers or offered rate), the highest lock rate achieved by a cell that met the SLO.
Every master of one Redlock set sees every lock, so more capacity means more independent lock groups: resources sharded across separate N-master sets. A sharded design (a cluster of shards) is planned in shards instead, and a hot key lives on one shard: one key's rate is bounded by one shard's.</p>
<p>A knee is quoted as the masters' capacity only when the servers or the wait (network, fsync) limited it. A knee set by the load generator or by a machine that lockbench and the masters share is a lower bound: the server-cost projection beside it (one core per master at the costliest master's CPU per lock cycle, as its servers report it, in the step with the highest measured rate) is then what lock groups are planned from.</p>
<div class="scroll"><table class="full">
<tr><th class="l">configuration</th><th>load</th><th>cells</th><th>max rate within SLO (cycles/s)</th><th>reached at</th><th>limited by</th><th>server-cost projection</th><th>headroom at target</th><th>lock groups needed</th><th class="l">what it is</th></tr>
{{range .Capacity}}<tr><td class="l label">{{.Config}}</td><td>{{.Load}}</td><td>{{.Cells}}</td><td>{{.MaxRateT}}</td><td>{{.KneeLoadT}}</td><td>{{.LimitT}}</td><td>{{.ProjectionT}}</td><td>{{.HeadroomT}}</td><td>{{.GroupsT}}</td><td class="wrap">{{if .ClientBound}}<span class="bad">client-bound.</span> {{end}}{{.Note}}</td></tr>
{{end}}</table></div>
{{end}}

<h2 id="plots">Plots</h2>
{{if not .Figures}}<p>No plot had data to show.</p>{{end}}
{{range .Figures}}<figure id="fig-{{.Name}}">
<h3>{{.Title}}</h3>
{{if .DataURI}}<img src="{{.DataURI}}" alt="{{.Title}}">{{end}}
<figcaption><b>What this shows:</b> {{.Caption}}{{if or .PNG .SVG}} Files:{{with .PNG}} <a href="{{.}}">{{.}}</a>{{end}}{{with .SVG}} <a href="{{.}}">{{.}}</a>{{end}}{{end}}</figcaption>
</figure>
{{end}}

<h2 id="cells">Cells</h2>
<h3>Throughput and latency</h3>
<p>Latencies in ms. Acquire latency is of successful acquires (open loop: from the intended start, so queueing counts); a cycle is one acquire plus its release.{{with .SpreadNote}} {{.}}{{end}}</p>
<div class="scroll"><table>
<tr><th>#</th><th class="l">cell</th><th class="l">load</th>{{if .SpreadNote}}<th>repeats</th>{{end}}<th>cycles/s</th><th>acquires/s</th><th>acquire p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th><th>failed acquire p99</th><th>release p99</th><th>SLO</th></tr>
{{range .Cells}}<tr><td>{{.Index}}</td><td class="l label">{{.Label}}{{if .Interrupted}} <span class="bad">(interrupted)</span>{{end}}</td><td class="l">{{.LoadText}}</td>{{if $.SpreadNote}}<td>{{.RepeatsT}}</td>{{end}}<td>{{.Tput}}</td><td>{{.Acq}}</td><td>{{.P50}}</td><td>{{.P90}}</td><td>{{.P99}}</td><td>{{.P999}}</td><td>{{.Max}}</td><td>{{.FailedP99}}</td><td>{{.ReleaseP99}}</td><td>{{if not $.ShowCapacity}}—{{else if .MeetsSLO}}<span class="ok">met</span>{{else}}<span class="bad">missed</span>{{end}}</td></tr>
{{end}}</table></div>
<h3>Outcomes, safety and client cost</h3>
<p>Success = acquired / (acquired + not acquired + errors). Violations are moments the safety probe saw two holders of one lock. A client CPU share near 100% means the figure measures the load generator, not the servers.{{with .AdapterNote}} {{.}}{{end}}</p>
<div class="scroll"><table>
<tr><th>#</th><th class="l">cell</th><th>acquired</th><th>not acquired</th><th>errors</th><th>success</th><th>safety violations</th><th>client CPU µs/cycle</th><th>client CPU share</th><th>client-bound</th></tr>
{{range .Cells}}<tr><td>{{.Index}}</td><td class="l label">{{.Label}}</td><td>{{.AcquiredT}}</td><td>{{.NotAcquiredT}}</td><td>{{.ErrorsT}}</td><td>{{.Success}}</td><td{{if .Violations}} class="bad"{{end}}>{{.ViolationsT}}</td><td>{{.CPU}}</td><td>{{.Share}}</td><td>{{if .ClientBound}}<span class="bad">yes</span>{{else}}no{{end}}</td></tr>
{{end}}</table></div>
<h3 id="limits">Machine, server cost and what limited each cell</h3>
<p>Shares of the whole machine (cores × time) from /proc in the measured window: busy (incl. steal), lockbench, the masters that run on this machine, everything else. Server cost: the costliest master's command time (the lock's commands in its own statistics, e.g. INFO commandstats) and whole process CPU per lock cycle; the projection is what one core per master sustains at that CPU cost. Fsync share: the part of the acquire p50 that the same cell without persistence did not have. The verdict rules are in the README.</p>
<div class="scroll"><table>
<tr><th>#</th><th class="l">cell</th><th>machine busy</th><th>lockbench</th><th>masters</th><th>other</th><th>steal</th><th>busiest master (of a core)</th><th>server µs/cycle (commands)</th><th>server CPU µs/cycle</th><th>one-core projection</th><th>measured cycles/s</th><th>fsync share of p50</th><th>limited by</th><th class="l">evidence</th></tr>
{{range .Cells}}<tr><td>{{.Index}}</td><td class="l label">{{.Label}}</td><td>{{.Cost.Busy}}</td><td>{{.Cost.Client}}</td><td>{{.Cost.Servers}}</td><td>{{.Cost.Other}}</td><td>{{.Cost.Steal}}</td><td>{{.Cost.Busiest}}</td><td>{{.Cost.CmdUs}}</td><td>{{.Cost.CPUUs}}</td><td>{{.Cost.Projection}}</td><td>{{.Cost.Measured}}</td><td>{{.Cost.Fsync}}</td><td>{{.Cost.LimitBy}}</td><td class="l wrap">{{.Cost.LimitEvidence}}</td></tr>
{{end}}</table></div>

{{if .Timelines}}<h2 id="timelines">Timelines</h2>
<p>Per-second throughput and acquire p99 of each cell; cells with faults or steps are open.</p>
{{range .Timelines}}<details{{if .Open}} open{{end}} id="fig-{{.Name}}"><summary>{{.Cell}}</summary>
<figure>{{if .DataURI}}<img src="{{.DataURI}}" alt="{{.Title}}">{{end}}
<figcaption><b>What this shows:</b> {{.Caption}}{{if or .PNG .SVG}} Files:{{with .PNG}} <a href="{{.}}">{{.}}</a>{{end}}{{with .SVG}} <a href="{{.}}">{{.}}</a>{{end}}{{end}}</figcaption></figure>
</details>
{{end}}{{end}}

<h2 id="details">Per-cell details</h2>
{{range .Cells}}<details><summary>{{.Index}}: {{.Label}}</summary>
<p>N = {{.CellSummary.Masters}} masters · measured {{printf "%.1f" .MeasuredSeconds}} s · max concurrent holders of one key: {{.MaxHolders}} · safety probe: {{if .Safety.NotJudged}}not judged ({{.Safety.NotJudged}}){{else}}{{.Safety.JudgedHolds}} holds judged on validity windows{{if .Safety.HoldsNotJudged}}, {{.Safety.HoldsNotJudged}} not judged{{end}}{{end}}{{with .OpenLoop}} · open loop: offered {{.Offered}}, served {{.Served}}, unserved {{.Unserved}}, pacer lag p99 {{printf "%.0f" .PacerLag.P99}} µs{{end}}{{with .BusiestText}} · busiest master CPU {{.}} of a core{{end}}{{with .PercentilesFile}} · <a href="{{.}}">acquire percentile distribution</a>{{end}}{{range .Hlogs}} · <a href="{{.}}">{{.}}</a>{{end}}</p>
{{if .MasterRows}}<table><tr><th class="l">master</th><th>ok</th><th>taken</th><th>timeout</th><th>error</th><th>few acks</th><th>pending</th><th>not sent</th><th>late</th><th>late released</th></tr>
{{range .MasterRows}}<tr><td class="l">{{.Addr}}</td><td>{{.OK}}</td><td>{{.Taken}}</td><td>{{.Timeout}}</td><td>{{.Err}}</td><td>{{.Unconfirmed}}</td><td>{{.Pending}}</td><td>{{.NotSent}}</td><td>{{.Late}}</td><td>{{.Rel}}</td></tr>
{{end}}</table>{{end}}
{{if .EventsText}}<p>Events:</p><ul>{{range .EventsText}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{range .Warnings}}<div class="warn">{{.}}</div>{{end}}
</details>
{{end}}

<h2 id="manifest">Manifest</h2>
{{with .S.Manifest}}<table>
<tr><th class="l">name</th><td class="l">{{.Name}}</td></tr>
{{with .ConfigFile}}<tr><th class="l">config file</th><td class="l">{{.}}</td></tr>{{end}}
<tr><th class="l">lockbench / Go</th><td class="l">{{.LockbenchVersion}} / {{.GoVersion}}</td></tr>
{{with .ServerVersions}}<tr><th class="l">servers</th><td class="l">{{range $i, $v := .}}{{if $i}}, {{end}}{{$v}}{{end}}</td></tr>{{end}}
<tr><th class="l">client machine</th><td class="l">{{.Machine.Hostname}} ({{.Machine.OS}}/{{.Machine.Arch}}, {{.Machine.Cores}} cores)</td></tr>
<tr><th class="l">started / finished</th><td class="l">{{.StartedAt.Format "2006-01-02 15:04:05 MST"}} / {{if .FinishedAt.IsZero}}—{{else}}{{.FinishedAt.Format "2006-01-02 15:04:05 MST"}}{{end}}{{if .Interrupted}} <span class="bad">(interrupted)</span>{{end}}</td></tr>
{{with .Segment}}<tr><th class="l">segment</th><td class="l">{{.}}</td></tr>{{end}}
<tr><th class="l">cells</th><td class="l">{{len .Cells}}</td></tr>
</table>{{end}}
<details><summary>manifest.json</summary>
<pre>{{.Manifest}}</pre>
</details>
</body>
</html>
`))

// contentionRow is one line of the contention table.
type contentionRow struct {
	Index                                  int
	Label, Strategy, Workers, Keys, Cycles string
	P50, P99, Max, Attempts, Commands, Gap string
	FIFO                                   string // time to lock p99 over a FIFO queue's ideal (one hot key)
	GaveUp, Starved, Jain, Wakeups         string
	Waited                                 bool // callers retried or gave up
}

// fifoText is a hot key's time to lock p99 as a ratio to what a FIFO
// queue would give it in a closed loop: every other contender holds the
// lock once before it, and each hand-over, its own included, costs a
// handoff gap: (contenders − 1) × hold + contenders × the gap's mean. "—"
// with more than one key or no handoff measured.
func fifoText(c CellSummary) string {
	ct := c.Contention
	hold, err := results.ParseDuration(c.Hold)
	if ct == nil || ct.HandoffGap == nil || c.Keys != 1 || c.Workers < 2 || err != nil {
		return "—"
	}
	n := float64(c.Workers)
	ideal := (n-1)*float64(time.Duration(hold).Microseconds()) + n*ct.HandoffGap.Mean
	if ideal <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", ct.TimeToLock.P99/ideal)
}

// makeContentionRow is a cell's contention line; false when it has none.
func makeContentionRow(c CellSummary) (contentionRow, bool) {
	ct := c.Contention
	if ct == nil {
		return contentionRow{}, false
	}
	row := contentionRow{Index: c.Index, Label: c.Label, Strategy: c.WaitStrategy, Workers: strconv.Itoa(c.Workers),
		Keys: results.Count(int64(c.Keys)), Cycles: results.Rate(c.CyclesPerSec),
		P50: results.FormatMicros(ct.TimeToLock.P50), P99: results.FormatMicros(ct.TimeToLock.P99), Max: results.FormatMicros(ct.TimeToLock.Max),
		Attempts: results.Sig3(ct.AttemptsPerLock), Commands: "—", Gap: "—", FIFO: fifoText(c), GaveUp: results.Count(ct.GaveUp),
		Starved: strconv.Itoa(ct.Starved), Jain: "—", Wakeups: "—", Waited: ct.AttemptsPerLock > 1.05 || ct.GaveUp > 0}
	if ct.CommandsPerLock > 0 {
		row.Commands = results.Sig3(ct.CommandsPerLock)
	}
	if g := ct.HandoffGap; g != nil {
		row.Gap = results.FormatMicros(g.P50)
	}
	if f := c.Fairness; f != nil {
		row.Jain = strconv.FormatFloat(f.JainIndex, 'f', 3, 64)
	}
	if w := ct.Wakeups; w != nil {
		row.Wakeups = fmt.Sprintf("%d / %d", w.ByMessage, w.ByTimeout)
	}
	return row, true
}
