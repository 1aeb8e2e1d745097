package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"lockbench/results"
)

// WhichLockFile is what lockbench choose writes beside its results: the
// designs and faults it crossed, the pairs a design cannot take (with the
// settings check's reason) and the needs the user stated. A results
// directory with one gets the which-lock matrix.
const WhichLockFile = "which-lock.json"

// WhichLockPlan is the content of WhichLockFile.
type WhichLockPlan struct {
	Designs []string `json:"designs"`
	Faults  []string `json:"faults"`
	// Unsupported: design → fault → why the design cannot take it.
	Unsupported map[string]map[string]string `json:"unsupported"`
	// NotMeasured: design → fault → the program this machine lacked.
	NotMeasured map[string]map[string]string `json:"not_measured,omitempty"`
	// Price: design → the name of its price cell, a benchmark cell of the
	// lock alone (none: the quiet cell's figures stand in, as before
	// price cells).
	Price map[string]string `json:"price,omitempty"`
	// Work is every fault cell's, PriceWork every price cell's (settings
	// as choose lays them over a design's).
	Work      string `json:"work,omitempty"`
	PriceWork string `json:"price_work,omitempty"`
	Needs     Needs  `json:"needs"`
}

// PriceCell is the name of a design's price cell after its own
// (design.price).
const PriceCell = "price"

// Needs are what a user asks of a lock: a fencing token (or a guarded
// write), no lost update under each named fault, an acquire p99 under
// a bound on the price cell (the quiet cell without one; 0: none).
type Needs struct {
	Fencing   bool          `json:"fencing,omitempty"`
	SafeUnder []string      `json:"safe_under,omitempty"`
	P99       time.Duration `json:"p99,omitempty"`
}

// MatrixCell is one design under one fault, over its repeats.
type MatrixCell struct {
	State string `json:"state"` // measured, not judged, unsupported, not measured
	Why   string `json:"why,omitempty"`
	// Measured: the checkers' medians, their ranges, in how many runs it
	// was unsafe, the longest unavailability (s, -1: none measured).
	LostUpdates, LostMin, LostMax int64
	Violations, ViolMin, ViolMax  int64
	Unsafe, Runs                  int
	Unavailable                   float64
	Cell                          int // its index in the results
	repeats                       int // measured (judged or not)
}

// Unsafe states of a matrix cell.
const (
	stateMeasured    = "measured"
	stateNotJudged   = "not judged"
	stateUnsupported = "unsupported"
	stateNotMeasured = "not measured"
)

// MatrixRow is one design: its price on the quiet cell (fault none) and
// one cell per fault.
type MatrixRow struct {
	Design                 string
	Fenced                 bool
	CyclesPerSec           float64
	AcquireP50, AcquireP99 float64 // µs
	TimeToLockP99          float64 // µs
	ServerCPUPerLock       float64 // µs, 0: not read
	PriceCell              bool    // the price is a price cell's (else the quiet cell's)
	Faults                 []MatrixCell
	Meets                  bool
	Excluded               string // why the row does not meet the needs
}

// CPUText is the servers' CPU per lock, "—" when it was not read (a
// fault cell reads none).
func (r MatrixRow) CPUText() string {
	if r.ServerCPUPerLock <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f", r.ServerCPUPerLock)
}

// WhichLock is the matrix: designs by faults, price beside safety.
type WhichLock struct {
	Faults          []string
	Rows            []MatrixRow
	Needs           Needs
	Work, PriceWork string
}

// readWhichLockPlan reads dir's plan; nil without one.
func readWhichLockPlan(dir string) (*WhichLockPlan, error) {
	b, err := os.ReadFile(filepath.Join(dir, WhichLockFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var p WhichLockPlan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", WhichLockFile, err)
	}
	return &p, nil
}

// CellName is the name lockbench choose gives design d under fault f.
func CellName(d, f string) string { return d + "." + f }

// buildWhichLock fills the matrix from the cells named design.fault.
func buildWhichLock(p *WhichLockPlan, loaded []*cell, cells []CellSummary) *WhichLock {
	byName := map[string]int{}
	for i, c := range cells {
		byName[c.Label] = i
	}
	w := &WhichLock{Faults: p.Faults, Needs: p.Needs, Work: p.Work, PriceWork: p.PriceWork}
	for _, d := range p.Designs {
		row := MatrixRow{Design: d, Fenced: strings.HasSuffix(d, "-fencing") || strings.HasSuffix(d, "-guarded")}
		if i, ok := byName[CellName(d, "none")]; ok {
			row.price(cells[i], loaded[i])
		}
		if i, ok := byName[p.Price[d]]; ok {
			row.priceCell(cells[i], loaded[i])
		}
		for _, f := range p.Faults {
			row.Faults = append(row.Faults, matrixCell(p, d, f, byName, cells))
		}
		row.Meets, row.Excluded = p.Needs.judge(row, p.Faults)
		w.Rows = append(w.Rows, row)
	}
	return w
}

// price takes the row's price from its quiet cell.
func (r *MatrixRow) price(c CellSummary, l *cell) {
	r.CyclesPerSec, r.AcquireP50, r.AcquireP99 = c.CyclesPerSec, c.Acquire.P50, c.Acquire.P99
	if c.Contention != nil {
		r.TimeToLockP99 = c.Contention.TimeToLock.P99
	}
	if sv := l.Run.Servers; sv != nil {
		r.ServerCPUPerLock = results.FiniteOr0(sv.TopologyMicrosCycle())
	}
}

// priceCell takes the row's price, but its time to lock, from its price
// cell: the lock alone, where the quiet cell's cycles/s is its holds'
// pace. Its time to lock stays the quiet cell's: 8 workers on 8 keys
// wait for each other there.
func (r *MatrixRow) priceCell(c CellSummary, l *cell) {
	ttl := r.TimeToLockP99
	r.price(c, l)
	r.TimeToLockP99, r.PriceCell = ttl, true
}

// priceSource names the cell the row's price came from.
func (r MatrixRow) priceSource() string {
	if r.PriceCell {
		return "price cell"
	}
	return "quiet cell"
}

// matrixCell is design d under fault f: measured, judged nothing,
// unsupported (with why) or not measured.
func matrixCell(p *WhichLockPlan, d, f string, byName map[string]int, cells []CellSummary) MatrixCell {
	if why, ok := p.Unsupported[d][f]; ok {
		return MatrixCell{State: stateUnsupported, Why: why, Cell: -1}
	}
	if why, ok := p.NotMeasured[d][f]; ok {
		return MatrixCell{State: stateNotMeasured, Why: why, Cell: -1}
	}
	i, ok := byName[CellName(d, f)]
	if !ok {
		return MatrixCell{State: stateNotMeasured, Why: "no result for this cell (interrupted, or left out with --design/--fault)", Cell: -1}
	}
	c := cells[i]
	m := MatrixCell{State: stateMeasured, Cell: c.Index, LostUpdates: c.Safety.LostUpdates, Violations: c.Safety.Violations, Runs: 1, Unavailable: -1, repeats: 1}
	m.LostMin, m.LostMax, m.ViolMin, m.ViolMax = m.LostUpdates, m.LostUpdates, m.Violations, m.Violations
	if rep := c.Repeats; rep != nil {
		m.Runs, m.Unsafe, m.repeats = rep.Judged, rep.Unsafe, rep.Count
		m.LostMin, m.LostMax = repeatRange(rep, "lost_updates", m.LostUpdates)
		m.ViolMin, m.ViolMax = repeatRange(rep, "violations", m.Violations)
		if sp, ok := rep.Spread["unavailable_s"]; ok && sp.Max > 0 {
			m.Unavailable = sp.Max
		}
	} else if m.LostUpdates > 0 || m.Violations > 0 {
		m.Unsafe = 1
	}
	for _, fo := range c.Failovers {
		if fo.Unavailable != nil {
			m.Unavailable = math.Max(m.Unavailable, *fo.Unavailable)
		}
	}
	switch {
	case c.Interrupted || c.Safety.Verdict == "interrupted":
		m.State, m.Why, m.repeats = stateNotJudged, "interrupted: its history is partial", 1
	case c.Safety.Verdict == results.NotJudged || m.Runs == 0:
		m.State, m.Why = stateNotJudged, c.Safety.NotJudged
	}
	return m
}

func repeatRange(rep *results.Repeats, figure string, n int64) (lo, hi int64) {
	if sp, ok := rep.Spread[figure]; ok {
		return int64(sp.Min), int64(sp.Max)
	}
	return n, n
}

// judge says whether a design meets the needs, and the measured reason
// when it does not.
func (n Needs) judge(r MatrixRow, faults []string) (bool, string) {
	if n.Fencing && !r.Fenced {
		return false, "no fencing token or guarded write in this design"
	}
	switch {
	case n.P99 > 0 && r.AcquireP99 == 0:
		return false, "neither its price cell nor its quiet cell (fault none) was measured: no acquire p99 to weigh"
	case n.P99 > 0 && r.AcquireP99 > float64(n.P99.Microseconds()):
		return false, fmt.Sprintf("acquire p99 %s on its %s, over %s", results.FormatMicros(r.AcquireP99), r.priceSource(), n.P99)
	}
	for _, f := range n.SafeUnder {
		i := slices.Index(faults, f)
		if i < 0 {
			return false, fmt.Sprintf("fault %s was not run", f)
		}
		switch c := r.Faults[i]; {
		case c.State == stateUnsupported:
			return false, fmt.Sprintf("%s: not supported (%s)", f, c.Why)
		case c.State != stateMeasured:
			return false, fmt.Sprintf("%s: %s", f, c.State)
		case c.LostMax > 0:
			return false, fmt.Sprintf("%s: lost updates in %d of %d runs (up to %d)", f, c.Unsafe, c.Runs, c.LostMax)
		}
	}
	return true, ""
}

// writeWhichLock writes which-lock.md and which-lock.html into out when
// dir holds lockbench choose's plan.
func writeWhichLock(dir, out string, loaded []*cell, cells []CellSummary) (*WhichLock, error) {
	p, err := readWhichLockPlan(dir)
	if err != nil || p == nil {
		return nil, err
	}
	w := buildWhichLock(p, loaded, cells)
	if err := results.WriteFileShared(filepath.Join(out, "which-lock.md"), w.writeMarkdown); err != nil {
		return nil, err
	}
	return w, results.WriteFileShared(filepath.Join(out, "which-lock.html"), w.writeHTML)
}

// Text of a matrix cell: "0", "3 (0–7), unsafe 2/3", "unsupported",
// "not judged: no lock won after the failover", ...
func (c MatrixCell) Text() string {
	switch c.State {
	case stateUnsupported:
		return "not supported"
	case stateNotJudged:
		if s := shortWhy(c.Why, c.repeats); s != "" {
			return c.State + ": " + s
		}
		return c.State
	case stateNotMeasured:
		return c.State
	}
	t := fmt.Sprintf("lost %s, viol %s", rangeText(c.LostUpdates, c.LostMin, c.LostMax), rangeText(c.Violations, c.ViolMin, c.ViolMax))
	if c.Runs > 1 || c.Unsafe > 0 {
		t += fmt.Sprintf("; unsafe %d/%d", c.Unsafe, c.Runs)
	}
	if c.Unavailable >= 0 {
		t += fmt.Sprintf("; unavailable %.2fs", c.Unavailable)
	}
	return t
}

// shortWhys say in a few words what a not-judged cell's reasons (the
// fault cell's, runner's notJudged, in every repeat) come to, so that the
// matrix tells a lock that granted nothing after a failover from one that
// saw too little; the whole reasons stand below the table.
type shortReason struct{ in, short string }

var shortWhys = []shortReason{
	{"no acquire won after it", "no lock won after the failover"},
	{"no granted lock was still valid at the failover", "no lock held at the failover"},
	{"Sentinel promoted no replica", "no replica promoted"},
	{"acquisitions, fewer than min_acquisitions", "too few locks"},
	{"acknowledged writes, fewer than min_acquisitions", "too few writes acknowledged"},
	{"did not happen", "a fault did not happen"},
	{"hit a master that held no lock key", "the crash hit no lock"},
	{"interrupted", "interrupted"},
}

// shortWhy is what most of a cell's not-judged repeats lacked (each
// repeat's first reason in shortWhys; "" : none has one), with in how many
// of its repeats when not in all.
func shortWhy(why string, repeats int) string {
	parts := strings.Split(why, "; repeat ")
	counts := make([]int, len(shortWhys))
	for _, r := range parts {
		if i := slices.IndexFunc(shortWhys, func(w shortReason) bool { return strings.Contains(r, w.in) }); i >= 0 {
			counts[i]++
		}
	}
	best := 0
	for i, n := range counts {
		if n > counts[best] {
			best = i
		}
	}
	runs := max(repeats, len(parts))
	switch n := counts[best]; {
	case n == 0:
		return ""
	case n == runs:
		return shortWhys[best].short
	default:
		return fmt.Sprintf("%s in %d of %d runs", shortWhys[best].short, n, runs)
	}
}

// Class colors a matrix cell: safe, unsafe, or a state with nothing to
// judge.
func (c MatrixCell) Class() string {
	switch {
	case c.State == stateUnsupported:
		return "na"
	case c.State != stateMeasured:
		return "nj"
	case c.LostMax > 0:
		return "bad"
	case c.ViolMax > 0:
		return "warn"
	}
	return "ok"
}

func rangeText(n, lo, hi int64) string {
	if lo == hi {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%d (%d–%d)", n, lo, hi)
}

// lostText tells a violation from a lost update.
const lostText = "A violation: two holders at once, each within what its lock promised it (Redis: its validity, the TTL less drift " +
	"from the acquire; a session's lock: to the end of its use, lease or not). A lost update is the data's loss: a Redis holder " +
	"still writing past its validity (paused past its TTL: Kleppmann's case) loses updates with no violation."

// LostText is lostText, for the page's template.
func (w *WhichLock) LostText() string { return lostText }

// PriceText says where the price columns come from.
func (w *WhichLock) PriceText() string {
	if w.PriceWork == "" {
		return "Price: the quiet cell (no fault)."
	}
	return fmt.Sprintf("Price: each design's price cell, the lock alone (%s; a fencing token or guarded write not included; "+
		"a design without one: its quiet cell), but time to lock p99: the quiet cell's, where the fault cells' workers wait for each other (%s).", w.PriceWork, w.Work)
}

func (w *WhichLock) writeMarkdown(wr io.Writer) error {
	var b strings.Builder
	b.WriteString("# Which lock: price beside safety\n\n")
	b.WriteString("Every design on the same work (the same TTL or lease, holds, workers and keys) under the same faults. " +
		w.PriceText() + " Each fault: lost updates and violations (median, range over the repeats), " +
		"in how many runs it was unsafe, and the longest unavailability after a kill. " + lostText + " " +
		"*not supported*: the design cannot take that fault (why, below); *not measured*: no result; *not judged*: the cell showed too little to say.\n\n")
	b.WriteString("| design | cycles/s | acquire p50 | acquire p99 | time to lock p99 | server CPU µs/lock |")
	for _, f := range w.Faults {
		b.WriteString(" " + f + " |")
	}
	b.WriteString("\n|---|--:|--:|--:|--:|--:|" + strings.Repeat("---|", len(w.Faults)) + "\n")
	for _, r := range w.Rows {
		fmt.Fprintf(&b, "| %s | %.0f | %s | %s | %s | %s |", r.Design, r.CyclesPerSec, results.FormatMicros(r.AcquireP50), results.FormatMicros(r.AcquireP99),
			results.FormatMicros(r.TimeToLockP99), r.CPUText())
		for _, c := range r.Faults {
			b.WriteString(" " + mdEscape(c.Text()) + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n" + w.needsText() + "\n")
	b.WriteString(w.whyText())
	_, err := io.WriteString(wr, b.String())
	return err
}

// needsText says which designs meet the needs, and why each other does
// not ("" without needs).
func (w *WhichLock) needsText() string {
	n := w.Needs
	if !n.Fencing && len(n.SafeUnder) == 0 && n.P99 == 0 {
		return ""
	}
	var meet, out []string
	for _, r := range w.Rows {
		if r.Meets {
			meet = append(meet, r.Design)
		} else {
			out = append(out, fmt.Sprintf("- %s: %s", r.Design, r.Excluded))
		}
	}
	meets := "none"
	if len(meet) > 0 {
		meets = strings.Join(meet, ", ")
	}
	t := fmt.Sprintf("## Your needs: %s\n\nMeet them: %s.\n\n", n.String(), meets)
	if len(out) > 0 {
		t += "Excluded, as measured:\n\n" + strings.Join(out, "\n") + "\n"
	}
	return t
}

// String is the needs as flags say them.
func (n Needs) String() string {
	var out []string
	if n.Fencing {
		out = append(out, "fencing")
	}
	for _, f := range n.SafeUnder {
		out = append(out, "safe under "+f)
	}
	if n.P99 > 0 {
		out = append(out, "acquire p99 ≤ "+n.P99.String())
	}
	return strings.Join(out, ", ")
}

// whyText lists why each unsupported pair is, and what each cell that
// judged nothing lacked.
func (w *WhichLock) whyText() string {
	var lines []string
	for _, r := range w.Rows {
		for i, c := range r.Faults {
			if c.Why != "" {
				lines = append(lines, fmt.Sprintf("- %s × %s (%s): %s", r.Design, w.Faults[i], c.State, c.Why))
			}
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return "## Why not\n\n" + strings.Join(lines, "\n") + "\n"
}

var whichLockPage = template.Must(template.New("which-lock").Funcs(template.FuncMap{"us": results.FormatMicros}).Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Which lock</title>
<style>
body{font-family:sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:.3em .5em;font-size:.9em}td.n{text-align:right}
.ok{background:#dff0d8}.warn{background:#fcf8e3}.bad{background:#f2dede}.na{background:#eee;color:#777}.nj{background:#fff;color:#a60;font-style:italic}
.meets{font-weight:bold}
</style></head><body>
<h1>Which lock: price beside safety</h1>
<p>Every design on the same work (the same TTL or lease, holds, workers and keys) under the same faults. {{.PriceText}}
Each fault: lost updates and violations (median, range over the repeats), in how many runs it was unsafe, the longest unavailability after a kill.
{{.LostText}}
Grey: <em>not supported</em> by the design (why below). Italic: <em>not judged</em> (the cell showed too little) or <em>not measured</em>.</p>
<table><tr><th>design</th><th>cycles/s</th><th>acquire p50</th><th>acquire p99</th><th>time to lock p99</th><th>server CPU µs/lock</th>{{range .Faults}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr><td{{if .Meets}} class="meets"{{end}}>{{.Design}}</td><td class="n">{{printf "%.0f" .CyclesPerSec}}</td><td class="n">{{us .AcquireP50}}</td><td class="n">{{us .AcquireP99}}</td><td class="n">{{us .TimeToLockP99}}</td><td class="n">{{.CPUText}}</td>
{{range .Faults}}<td class="{{.Class}}" title="{{.Why}}">{{.Text}}</td>{{end}}</tr>
{{end}}</table>
<pre>{{.Notes}}</pre>
</body></html>
`))

func (w *WhichLock) writeHTML(wr io.Writer) error {
	return whichLockPage.Execute(wr, struct {
		*WhichLock
		Notes string
	}{w, w.needsText() + "\n" + w.whyText()})
}
