package report

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"lockbench/results"
)

// OutcomeWords defines one outcome, the same for every design; the page
// states them, and colours, counts, needs and the recommendation read
// them alike.
type OutcomeWords struct {
	Name, Need, Text string
}

var outcomeWords = []OutcomeWords{
	{"exclusion broken", NoOverlap, "two holders (any workers of any clients) inside their critical sections on one key at the same time, " +
		"as each used its lock: from the return of its acquire to its release call (a holder that saw its lock expired or lost and wrote nothing stops at its validity's end)."},
	{"data lost", NoLostUpdate, "the protected resource lost an acknowledged update or took a stale one (a fencing token or a guarded write refuses the stale write even when exclusion broke)."},
	{"unavailable", UpIn + "D", "after a fault that takes a server, a member or a leader away (crash, leader kill, failover), the longest time in which no acquire on any key succeeded, " +
		"measured on the acquires' own timestamps; \"never granted again after the fault (the cell ended X s later)\" when nothing was granted until the cell ended: a permanent loss, not an outage of X s. " +
		"Even without a fault, a few hundred ms can pass between two grants in these cells (8 keys held 200 ms each, waiters retrying): a span of that size is no outage."},
	{"past the promoted", "", "where a failover promoted a node that took the guarded writes asynchronously: in how many runs writes were acknowledged after the last commit the promoted node had " +
		"(its last replayed transaction), and how many; every lost write is among them. \"past the promoted 0 of 3\" beside \"lost 0 of 3\": no run put a write at risk, so the cell cannot show that none would be lost."},
	{"exercised", "", "the holds the cell's faults met inside their critical sections when their lock could be handed on (docs/faults.md): the median over its runs and their range; a cell whose faults met none reads \"not exercised\", never safe."},
	{"in promise", "", "the second figure: exclusion broken only within what the lock promised its holder (a lease: its validity, TTL less elapsed and drift, as renewed; a session lock: to the end of its use). " +
		"Shown where it differs from the first."},
}

// Class colours a matrix cell from the outcomes its text shows: data lost
// in any run (bad), else exclusion broken in any run (warn), else neither
// in every judged run (ok); an outage to the end with nothing to judge
// (down); or a state with nothing measured.
func (c MatrixCell) Class() string {
	switch {
	case c.State == stateNotApplicable:
		return "na"
	case c.State == stateUnsupported:
		return "ns"
	case c.State == stateNotExercised:
		return "nx"
	case c.State != stateMeasured:
		return "nj"
	case c.Overlap == nil || c.Lost == nil:
		return "down"
	case c.Lost.Broken > 0:
		return "bad"
	case c.Overlap.Broken > 0:
		return "warn"
	case c.Unsettled:
		return "us"
	}
	return "ok"
}

// Text of a matrix cell, e.g. "overlap 3/3: 11 (9–14) · lost 0/3 · down
// 2.18 s", "not applicable", "not judged: too few locks".
func (c MatrixCell) Text() string {
	switch c.State {
	case stateNotJudged, stateNotExercised:
		if s := shortWhy(c.Why, c.Repeats); s != "" {
			return c.State + ": " + s
		}
		return c.State
	case stateMeasured:
	case stateNotApplicable:
		switch c.JudgedOn {
		case "":
			return c.State
		case immune:
			return c.State + ": immune"
		}
		return c.State + ": judged on " + c.JudgedOn
	default:
		return c.State
	}
	var parts []string
	if c.Overlap != nil {
		parts = append(parts, c.Overlap.text("overlap"))
		if ip := c.InPromise; ip != nil && (ip.Broken != c.Overlap.Broken || ip.Median != c.Overlap.Median) {
			parts = append(parts, ip.text("in promise"))
		}
	}
	if c.Lost != nil {
		parts = append(parts, c.Lost.text("lost"))
	}
	if c.Past != nil {
		parts = append(parts, c.Past.text("past the promoted"))
	}
	if e := c.Exercised; e != nil {
		parts = append(parts, e.countText("exercised"))
	}
	if c.Overlap == nil {
		parts = append(parts, "safety not judged")
	}
	if c.Down != nil {
		parts = append(parts, c.DownText())
	}
	return strings.Join(parts, " · ")
}

// text is the outcome's k of n runs with the 95% bounds of its rate, and
// where it broke, its median count and range: "overlap 0 of 3: ≤ 63%",
// "overlap 3 of 3: ≥ 37%; 11 (9–14)".
func (o *Outcome) text(name string) string {
	t := name + " " + rateText(o.Broken, o.Runs, o.Unit)
	switch {
	case o.Broken == 0:
		return t
	case o.Min == o.Max:
		return fmt.Sprintf("%s; %.0f", t, o.Median)
	}
	return fmt.Sprintf("%s; %.0f (%.0f–%.0f)", t, o.Median, o.Min, o.Max)
}

// DownText is the cell's unavailability: "down 2.18 s (1.90–2.40)" or
// "never granted again after the fault (the cell ended 5.20 s later)".
func (c MatrixCell) DownText() string {
	d := c.Down
	switch {
	case d == nil:
		return ""
	case d.ToEnd > 0:
		return d.neverText()
	case d.Min == d.Max:
		return fmt.Sprintf("down %.2f s", d.Median)
	}
	return fmt.Sprintf("down %.2f s (%.2f–%.2f)", d.Median, d.Min, d.Max)
}

// shortWhys say in a few words what a not-judged cell's reasons (the
// fault cell's, runner's notJudged, in every repeat) come to, so that the
// matrix tells a lock that granted nothing after a failover from one that
// saw too little; the whole reasons stand below the table.
type shortReason struct{ in, short string }

var shortWhys = []shortReason{
	{"no acquire won after it", "no lock won after the failover"},
	{"no granted lock was still valid at the failover", "no lock held at the failover"},
	{"no replica was promoted", "no replica promoted"},
	{"Sentinel promoted no replica", "no replica promoted"}, // results before the words were the service's
	{"acquisitions, fewer than min_acquisitions", "too few locks"},
	{"acknowledged writes, fewer than min_acquisitions", "too few writes acknowledged"},
	{"did not happen", "a fault did not happen"},
	{"hit a master that held no lock key", "the crash hit no lock"},
	{"interrupted", "interrupted"},
	{"not exercised", "no fault met a holder"},
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

// legend is every colour's meaning, in the order of the classes.
var legend = []struct{ Class, Text string }{
	{"ok", "safe, settled: neither exclusion broken nor data lost in any judged event, and enough events that the 95% bound on how often either would happen is at or below the max rate"},
	{"us", "not settled: nothing broke in the judged events, but too few to bound how often it would at the max rate (0 of 14 bounds it at 20%; 0 of 3 only at 63%)"},
	{"warn", "exclusion broken in some run, no data lost (a fencing token or guarded write held)"},
	{"bad", "data lost in some run"},
	{"down", "never granted again after the fault, to the end of the cell: unavailable, safety not judged"},
	{"nx", "not exercised: no fault met a holder inside its critical section when its lock could be handed on (never safe)"},
	{"nj", "not judged (the cell showed too little to say) or not measured (no result)"},
	{"na", "not applicable: the design has no such part; \"immune\" where the hazard cannot happen (meets a need under it), \"judged on F\" where fault F's cell stands for it"},
	{"ns", "not supported by lockbench yet (why, below)"},
}

// writeWhichLock writes which-lock.md, which-lock.html, the matrix as
// data (which-lock-matrix.json) and its picture into out when dir holds
// lockbench choose's plan; needs, when given, judge in place of the plan's.
func writeWhichLock(dir, out string, m results.Manifest, loaded []*cell, cells []CellSummary, needs *Needs, maxRate float64) (*WhichLock, error) {
	p, err := readWhichLockPlan(dir)
	if err != nil || p == nil {
		return nil, err
	}
	if needs != nil {
		p.judgeBy(*needs)
	}
	if maxRate > 0 {
		p.MaxRate = maxRate
	}
	w := buildWhichLock(p, m, loaded, cells)
	if rel, err := filepath.Rel(out, dir); err == nil {
		w.resultsRelative = filepath.ToSlash(rel)
	}
	for _, f := range []struct {
		name  string
		write func(io.Writer) error
	}{{"which-lock.md", w.writeMarkdown}, {"which-lock.html", w.writeHTML}, {WhichLockMatrixFile, w.writeJSON}} {
		if err := results.WriteFileShared(filepath.Join(out, f.name), f.write); err != nil {
			return nil, err
		}
	}
	return w, w.writePicture(out)
}

// WhichLockMatrixFile is the matrix as data, for tools and checks.
const WhichLockMatrixFile = "which-lock-matrix.json"

func (w *WhichLock) writeJSON(wr io.Writer) error {
	e := json.NewEncoder(wr)
	e.SetIndent("", "  ")
	return e.Encode(w)
}

// priceText says where the price columns come from.
func (w *WhichLock) priceText() string {
	if pc := w.PriceCells; pc != nil {
		return fmt.Sprintf("Price, from benchmark cells of the lock alone (no fault, no protected resource; a fencing token, guarded write or watchdog not included): "+
			"capacity, the highest cycles/s whose acquire p99 stayed within %s (and 99%% of acquires won) in a closed-loop sweep (%s), "+
			"with its repeats' range and what limited it (≥: a lower bound, the servers may serve more: no heavier step broke the SLO, or the generator or the shared machine limited it); "+
			"the servers' CPU per lock at that capacity; acquire p50 and p99 at one open-loop rate every design serves (%s); "+
			"time to lock p99 on one hot key (%s) beside the FIFO ideal, (workers − 1) × the key's measured period: a queue's lower bound, "+
			"with how the design waits there (queue: the server hands the lock on in order; retry, backoff, spin: the client tries again; notify: it tries again when told the key was released); ≥ where callers that gave up or won nothing in the window (their waits not in the p99) are over 1%% of the waits. "+
			"What limited a capacity: server (its CPU), latency (served, but the wait broke the SLO), machine or generator (this shared 2-core machine or lockbench itself: a lower bound), "+
			"SLO not reached (every step met it: a lower bound); ≈ names the designs whose capacity range (the repeats' range, up to the step that broke the SLO where the knee lies between two steps) overlaps this one's, between which no order is claimed. "+
			"A --p99 need is judged on the common-rate cell's acquires, its repeats pooled (at least %d): \"pooled\" is their p99 with its 95%% interval from the order statistics, "+
			"which meets the need when it lies within the bound, fails it when it lies wholly over it, and else leaves it not settled; the first figure is the repeats' median p99 and their range. \"served only\" where a design fell short of that rate (its latency is then an overload's). —: not measured.",
			pc.SLO, pc.LadderWork, pc.CommonWork, pc.HotWork, MinP99Samples)
	}
	if w.PriceWork == "" {
		return "Price: the quiet cell (no fault)."
	}
	return fmt.Sprintf("Price: each design's price cell, the lock alone (%s; a fencing token or guarded write not included; "+
		"a design without one: its quiet cell); time to lock p99: the quiet cell's, where the fault cells' workers wait for each other (%s).", w.PriceWork, w.Work)
}

// DesignText is the row's design, with an external client's library.
func (r MatrixRow) DesignText() string {
	if r.Library == nil {
		return r.Design
	}
	return r.Design + ": " + r.Library.String()
}

// libraryNote says what a row's library is, when a row has one ("").
func (w *WhichLock) libraryNote() string {
	if !slices.ContainsFunc(w.Rows, func(r MatrixRow) bool { return r.Library != nil }) {
		return ""
	}
	return "A design with a library beside its name is an external client (choose --client): that library, at the version its adapter named, " +
		"behind the adapter protocol on the servers of the design it borrows (redlock-5-mux's, or single-fixed-ttl's)."
}

// fig is a price figure, "—" where none was measured.
func (r MatrixRow) fig(us float64) string {
	if !r.Priced {
		return "—"
	}
	return results.FormatMicros(us)
}

// CyclesText is the row's capacity (an older run's: its price cell's
// cycles/s), "—" where none was measured.
func (r MatrixRow) CyclesText() string {
	switch {
	case r.Capacity != nil && len(r.Capacity.Overlaps) > 0:
		return r.CapacityText() + "; ≈ " + strings.Join(r.Capacity.Overlaps, ", ")
	case r.Capacity != nil:
		return r.CapacityText()
	case !r.Priced:
		return "—"
	}
	return fmt.Sprintf("%.0f", r.CyclesPerSec)
}

// CPUText is the servers' CPU per lock, "—" when it was not read.
func (r MatrixRow) CPUText() string {
	// With PriceCells it is the capacity step's, measured or 0.
	if r.ServerCPUPerLock <= 0 || !r.Priced && !r.commonRate {
		return "—"
	}
	return fmt.Sprintf("%.1f", r.ServerCPUPerLock)
}

func (r MatrixRow) P50Text() string { return r.fig(r.AcquireP50) + rangeText(r.Priced, r.P50Range) }

// rangeText is the repeats' range of a latency figure: " (1.5–2.3 ms)"
// ("" for one run or none).
func rangeText(priced bool, rg [2]float64) string {
	if !priced || rg[1] <= 0 || rg[0] == rg[1] {
		return ""
	}
	return " (" + results.FormatMicros(rg[0]) + "–" + results.FormatMicros(rg[1]) + ")"
}

// P99Text is the acquire p99, with what was served where the common rate
// was not.
func (r MatrixRow) P99Text() string {
	t := r.fig(r.AcquireP99) + rangeText(r.Priced, r.P99Range)
	if r.Priced && r.CommonServed > 0 {
		t += fmt.Sprintf(" (served only %.0f/s)", r.CommonServed)
	}
	if ci := r.P99CI; r.Priced && ci != nil {
		t += fmt.Sprintf("; pooled %s", ci.Text())
	}
	return t
}
func (r MatrixRow) TimeToLockText() string {
	switch {
	case r.Hot != nil:
		return r.HotText()
	case r.TimeToLockP99 <= 0:
		return "—"
	}
	return r.fig(r.TimeToLockP99)
}

// priceHeads are the price columns' heads.
func (w *WhichLock) priceHeads() []string {
	if pc := w.PriceCells; pc != nil {
		rate := "the common rate"
		if _, r, ok := strings.Cut(pc.CommonWork, "rate: "); ok {
			rate, _, _ = strings.Cut(r, ",")
			rate += "/s"
		}
		return []string{fmt.Sprintf("capacity, cycles/s at p99 ≤ %s", pc.SLO), "acquire p50 at " + rate, "acquire p99 at " + rate,
			"hot key: time to lock p99", "server CPU µs/lock at capacity"}
	}
	return []string{"cycles/s", "acquire p50", "acquire p99", "time to lock p99", "server CPU µs/lock"}
}

func (w *WhichLock) writeMarkdown(wr io.Writer) error {
	var b strings.Builder
	b.WriteString("# Which lock: price beside safety\n\n")
	if w.Quick != "" {
		b.WriteString("**A quick run** (`choose --quick`): " + w.Quick + "\n\n")
	}
	b.WriteString("Every design on the same work (the same TTL or lease, holds, workers and keys) under the same faults. " + w.priceText() +
		" Each fault's cell: in how many of its judged fault events each outcome happened (k of n events: a history holds several where the fault can repeat in one, each judged apart on what broke from it to the next; a failover or a clock jump happens once a history, and its runs are counted) with the 95% bounds of its rate (≤ the upper one when it never happened), its median and range where it did; green only where nothing happened in enough events to bound the rate at the max rate (" + pctText(w.MaxRate) + "), pale where too few did.\n\n")
	b.WriteString("| design | " + strings.Join(w.priceHeads(), " | ") + " |")
	for _, f := range w.Faults {
		b.WriteString(" " + f + " |")
	}
	b.WriteString("\n|---|--:|--:|--:|--:|--:|" + strings.Repeat("---|", len(w.Faults)) + "\n")
	for _, r := range w.Rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |", mdEscape(r.DesignText()), r.CyclesText(), r.P50Text(), r.P99Text(), r.TimeToLockText(), r.CPUText())
		for _, c := range r.Faults {
			b.WriteString(" " + mdEscape(c.Text()) + " |")
		}
		b.WriteString("\n")
	}
	if n := w.libraryNote(); n != "" {
		b.WriteString("\n" + n + "\n")
	}
	b.WriteString("\n## Outcomes, one definition for every design\n\n")
	for _, o := range w.Outcomes {
		fmt.Fprintf(&b, "- **%s**: %s\n", o.Name, o.Text)
	}
	b.WriteString("\n## Faults\n\n")
	for _, f := range w.Faults {
		fmt.Fprintf(&b, "- **%s**: %s\n", f, w.Defined[f])
	}
	b.WriteString("\n" + w.needsMarkdown())
	b.WriteString(w.whyMarkdown())
	b.WriteString("\n" + w.runMarkdown())
	_, err := io.WriteString(wr, b.String())
	return err
}

// needsMarkdown says which designs meet the needs, and every reason each
// other does not ("" without needs).
func (w *WhichLock) needsMarkdown() string {
	if !w.Needs.Any() {
		return ""
	}
	meets := "none"
	if len(w.Recommend) > 0 {
		meets = strings.Join(w.Recommend, ", ")
	}
	t := fmt.Sprintf("## Your needs: %s\n\nMeet them: %s.\n\n", w.Needs.String(), meets)
	if s := w.UnsettledText(); s != "" {
		t += s + "\n\n"
	}
	var met []string
	for _, r := range w.Rows {
		for _, m := range r.MetBy {
			met = append(met, fmt.Sprintf("- %s: %s", r.Design, m))
		}
	}
	if len(met) > 0 {
		t += "Met without a cell of their own:\n\n" + strings.Join(met, "\n") + "\n\n"
	}
	var out []string
	for _, r := range w.Rows {
		if !r.Meets {
			out = append(out, fmt.Sprintf("- %s: %s", r.Design, strings.Join(r.Reasons, "; ")))
		}
	}
	if len(out) > 0 {
		t += "Excluded, as measured:\n\n" + strings.Join(out, "\n") + "\n"
	}
	return t
}

// whyMarkdown lists why each cell that is not measured is so, and what
// each cell that judged nothing lacked.
func (w *WhichLock) whyMarkdown() string {
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
	return "\n## Why not measured, or not judged\n\n" + strings.Join(lines, "\n") + "\n"
}

func (w *WhichLock) runMarkdown() string {
	t := "## The run's facts\n\n"
	for _, f := range w.Facts() {
		t += "- " + f + "\n"
	}
	return t
}

// Facts are what the run stood on, one line each: when and where, which
// servers, each design's persistence, the external clients' libraries,
// the disk's fsync latency, and the lockbench that measured (and the one
// that rendered, when another).
func (w *WhichLock) Facts() []string {
	r := w.Run
	made := "lockbench " + r.Lockbench + ", " + r.Go
	if r.Rendered != "" {
		made += "; this page rendered by lockbench " + r.Rendered
	}
	out := []string{fmt.Sprintf("Measured %s to %s on %s.", r.Started, r.Finished, r.Machine), made + "."}
	servers := strings.Join(r.Servers, ", ")
	out = append(out, "Servers: "+orNot(servers, "not recorded")+".")
	var pers []string
	for _, row := range w.Rows {
		if row.Persistence != "" {
			pers = append(pers, row.Design+" "+row.Persistence)
		}
	}
	out = append(out, "Persistence: "+orNot(strings.Join(pers, "; "), "not recorded")+".")
	var libs []string
	for _, row := range w.Rows {
		if row.Library != nil {
			libs = append(libs, row.DesignText())
		}
	}
	if len(libs) > 0 {
		out = append(out, "Libraries of the external clients: "+strings.Join(libs, "; ")+".")
	}
	return append(out, "Disk: "+orNot(r.Fsync, "not probed in this run")+".")
}

func orNot(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

var whichLockPage = template.Must(template.New("which-lock").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Which lock</title>
<style>
body{font-family:sans-serif;margin:1.5em;color:#222;max-width:110em}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:.3em .5em;font-size:.85em;vertical-align:top}td.n{text-align:right;white-space:nowrap}
td a{color:inherit}
.ok{background:#dff0d8}.warn{background:#fcf8e3}.bad{background:#f2dede}.down{background:#fde3c8}
.us{background:#eef3ea;color:#456}.na{background:#eee;color:#777}.ns{background:#f6f6f6;color:#777;font-style:italic}.nj{background:#fff;color:#a60;font-style:italic}.nx{background:#fff7d6;color:#865;font-style:italic}
.meets{font-weight:bold}.legend span{display:inline-block;padding:.1em .5em;margin-right:.3em;border:1px solid #ccc}
p,li{line-height:1.4}
</style></head><body>
<h1>Which lock: price beside safety</h1>
{{if .Quick}}<p><strong>A quick run</strong> (<code>choose --quick</code>): {{.Quick}}</p>{{end}}
<p>Every design on the same work (the same TTL or lease, holds, workers and keys) under the same faults. {{.PriceText}}
Each fault's cell: in how many of its judged fault events each outcome happened (k of n events: a history holds several where the fault can repeat in one, each judged apart on what broke from it to the next; a failover or a clock jump happens once a history, and its runs are counted) with the 95% bounds of its rate (≤ the upper one when it never happened), its median and range where it did; green only where nothing happened in enough events to bound the rate at the max rate ({{.MaxRateText}}), pale where too few did; each links to its result.</p>
{{if .Needs.Any}}<h2>Your needs: {{.Needs.String}}</h2>
<p>Meet them: {{if .Recommend}}{{range $i, $d := .Recommend}}{{if $i}}, {{end}}<strong>{{$d}}</strong>{{end}}{{else}}none{{end}}.</p>
{{if .UnsettledText}}<p><strong>{{.UnsettledText}}</strong></p>{{end}}
{{if .MetBy}}<p>Met without a cell of their own:</p><ul>{{range .MetBy}}<li>{{.}}</li>{{end}}</ul>{{end}}{{end}}
<table><tr><th>design</th>{{range .PriceHeads}}<th>{{.}}</th>{{end}}{{range .Faults}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr><td{{if .Meets}} class="meets"{{end}}>{{.Design}}{{with .Library}}<br><small>{{.}}</small>{{end}}</td><td class="n">{{if .CapHref}}<a href="{{.CapHref}}" title="{{.Capacity.Note}}">{{.CyclesText}}</a>{{else}}{{.CyclesText}}{{end}}</td><td class="n">{{if .CommonHref}}<a href="{{.CommonHref}}">{{.P50Text}}</a>{{else}}{{.P50Text}}{{end}}</td><td class="n">{{if .CommonHref}}<a href="{{.CommonHref}}">{{.P99Text}}</a>{{else}}{{.P99Text}}{{end}}</td><td class="n">{{if .HotHref}}<a href="{{.HotHref}}">{{.TimeToLockText}}</a>{{else}}{{.TimeToLockText}}{{end}}</td><td class="n">{{.CPUText}}</td>
{{range .Cells}}<td class="{{.Class}}" title="{{.Why}}">{{if .Href}}<a href="{{.Href}}">{{.Text}}</a>{{else}}{{.Text}}{{end}}</td>{{end}}</tr>
{{end}}</table>
{{with .LibraryNote}}<p>{{.}}</p>
{{end}}<p class="legend">{{range .Legend}}<span class="{{.Class}}">{{.Text}}</span> {{end}}</p>
<p><img src="which-lock.png" alt="price against the faults survived, one point per design" width="900"></p>
<p>{{.PictureText}}</p>
<h2>Outcomes, one definition for every design</h2>
<ul>{{range .Outcomes}}<li><strong>{{.Name}}</strong>: {{.Text}}</li>{{end}}</ul>
<h2>Faults</h2>
<ul>{{range .FaultDefs}}<li><strong>{{.Name}}</strong>: {{.Text}}</li>{{end}}</ul>
{{if .Excluded}}<h2>Excluded, as measured</h2>
<ul>{{range .Excluded}}<li><strong>{{.Design}}</strong><ul>{{range .Reasons}}<li>{{.}}</li>{{end}}</ul></li>{{end}}</ul>{{end}}
{{if .Whys}}<h2>Why not measured, or not judged</h2>
<ul>{{range .Whys}}<li>{{.Design}} × {{.Fault}} (<em>{{.State}}</em>): {{.Why}}</li>{{end}}</ul>{{end}}
<h2>The run's facts</h2>
<ul class="meta">{{range .Facts}}<li>{{.}}</li>{{end}}</ul>
<p>The matrix as data: <a href="which-lock-matrix.json">which-lock-matrix.json</a>.</p>
</body></html>
`))

// pageRow is a row as the page shows it: its cells with their links, and
// its price figures' (the capacity's knee step, the common-rate cell, the
// hot key's cell).
type pageRow struct {
	MatrixRow
	Cells                        []pageCell
	CapHref, CommonHref, HotHref string
}

type pageCell struct {
	MatrixCell
	Href string
}

type pageWhy struct{ Design, Fault, State, Why string }

func (w *WhichLock) writeHTML(wr io.Writer) error {
	var rows []pageRow
	var excluded []MatrixRow
	var whys []pageWhy
	var metBy []string
	for _, r := range w.Rows {
		pr := pageRow{MatrixRow: r}
		if r.Capacity != nil && r.Capacity.Result != "" {
			pr.CapHref = w.href(r.Capacity.Result)
		}
		if r.commonRate && r.Priced {
			pr.CommonHref = w.href(r.PriceResult)
		}
		if r.Hot != nil {
			pr.HotHref = w.href(r.Hot.Result)
		}
		for i, c := range r.Faults {
			pc := pageCell{MatrixCell: c}
			if c.Result != "" {
				pc.Href = w.href(c.Result)
			}
			pr.Cells = append(pr.Cells, pc)
			if c.Why != "" {
				whys = append(whys, pageWhy{r.Design, w.Faults[i], c.State, c.Why})
			}
		}
		rows = append(rows, pr)
		for _, m := range r.MetBy {
			metBy = append(metBy, r.Design+": "+m)
		}
		if w.Needs.Any() && !r.Meets {
			excluded = append(excluded, r)
		}
	}
	var defs []OutcomeWords
	for _, f := range w.Faults {
		defs = append(defs, OutcomeWords{Name: f, Text: w.Defined[f]})
	}
	return whichLockPage.Execute(wr, struct {
		*WhichLock
		Rows        []pageRow
		PriceText   string
		Legend      any
		FaultDefs   []OutcomeWords
		Excluded    []MatrixRow
		Whys        []pageWhy
		PriceHeads  []string
		MetBy       []string
		LibraryNote string
	}{w, rows, w.priceText(), legend, defs, excluded, whys, w.priceHeads(), metBy, w.libraryNote()})
}

// href is a result file's link from the page.
func (w *WhichLock) href(result string) string {
	if result == "" {
		return ""
	}
	return filepath.ToSlash(filepath.Join(w.resultsRelative, result))
}

// UnsettledText is the honest answer when no design meets the needs but
// some fall short only for want of runs ("": not so), naming what is not
// settled: fault outcomes on too few events, or a p99 on too few acquires.
func (w *WhichLock) UnsettledText() string {
	if len(w.Recommend) > 0 {
		return ""
	}
	var only []string
	few := map[bool]bool{} // true: a p99 on too few acquires; false: outcomes on too few events
	for _, r := range w.Rows {
		unsettled := len(r.Reasons) > 0
		for _, why := range r.Reasons {
			unsettled = unsettled && strings.Contains(why, notSettled)
		}
		if unsettled {
			only = append(only, r.Design)
			for _, why := range r.Reasons {
				few[strings.Contains(why, p99SamplesShort)] = true
			}
		}
	}
	if len(only) == 0 {
		return ""
	}
	var short []string
	if few[false] {
		short = append(short, fmt.Sprintf("outcomes stand on too few fault events to bound them at the max rate %s (%d judged events at that rate: more --events or --repeat)", pctText(w.MaxRate), RunsToSettle(w.MaxRate)))
	}
	if few[true] {
		short = append(short, fmt.Sprintf("acquire p99 stands on fewer than the %d acquires a p99 need is judged on (more --repeat: the common-rate runs are pooled)", MinP99Samples))
	}
	return fmt.Sprintf("Nothing settled meets these needs yet: %s broke nothing the needs name, but their %s; run longer (choose --budget) before choosing on it.",
		strings.Join(only, ", "), strings.Join(short, ", and "))
}

// MaxRateText is the max rate as the page says it.
func (w *WhichLock) MaxRateText() string { return pctText(w.MaxRate) }

// neverText is a permanent loss of the service, the same words in the
// cell and in every reason: "never granted again after the fault (the
// cell ended 5.97–6.00 s later)", in how many runs when not in all.
func (d *Outage) neverText() string {
	t := "never granted again after the fault"
	if d.ToEnd < d.Runs {
		t += fmt.Sprintf(" in %d of %d runs", d.ToEnd, d.Runs)
	}
	if d.Min == d.Max {
		return t + fmt.Sprintf(" (the cell ended %.2f s later)", d.Max)
	}
	return t + fmt.Sprintf(" (the cell ended %.2f–%.2f s later)", d.Min, d.Max)
}

// countText is a count over runs: "exercised 12" or "exercised 12 (8–15)".
func (o *Outcome) countText(name string) string {
	if o.Min == o.Max {
		return fmt.Sprintf("%s %.0f", name, o.Median)
	}
	return fmt.Sprintf("%s %.0f (%.0f–%.0f)", name, o.Median, o.Min, o.Max)
}
