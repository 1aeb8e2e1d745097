package report

import (
	"fmt"
	"io"
	"lockbench/results"
	"strings"
)

// mdEscape keeps a cell's text from breaking a Markdown table.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// mdPath makes a relative file name safe inside a Markdown link target.
func mdPath(p string) string {
	return strings.NewReplacer(" ", "%20", "(", "%28", ")", "%29").Replace(p)
}

// mdDoc is a Markdown report being written.
type mdDoc struct{ strings.Builder }

func (d *mdDoc) p(format string, a ...any) { fmt.Fprintf(&d.Builder, format, a...) }

// writeMarkdown writes report.md: the same sections as the HTML page.
func writeMarkdown(path string, s *Summary, figs []figure) error {
	v := makeView(s, figs, nil)
	var d mdDoc
	d.header(s)
	d.verdict(s, v)
	d.price(v)
	d.safety(v)
	d.contention(v)
	d.capacity(v)
	d.plots(v)
	d.cells(v)
	d.costs(v)
	d.timelines(v)
	d.cellWarnings(v)
	d.events(v)
	d.files(v)
	d.p("\n## Manifest\n\n```json\n%s\n```\n", v.Manifest)
	return results.WriteFileShared(path, func(w io.Writer) error { _, err := io.WriteString(w, d.String()); return err })
}

func (d *mdDoc) header(s *Summary) {
	d.p("# lockbench report: %s\n\n", s.Name)
	if s.Description != "" {
		d.p("%s\n\n", s.Description)
	}
	d.p("%d cells · generated %s · from %s\n\n", len(s.Cells), s.GeneratedAt.Format("2006-01-02 15:04:05 UTC"), "`"+strings.Join(s.Dirs, "`, `")+"`")
}

// verdict: the SLO, the thresholds, what each swept setting changed and
// the report's warnings.
func (d *mdDoc) verdict(s *Summary, v view) {
	if len(s.Findings) > 0 {
		d.p("## What this run says\n\n")
		for _, f := range s.Findings {
			d.p("- %s\n", mdEscape(f))
		}
		d.p("\n")
	}
	d.p("## Verdict\n\n")
	if v.ShowCapacity {
		d.p("SLO used for capacity: %s.", v.SLOText)
		if s.TargetRate > 0 {
			d.p(" Target rate: %.0f cycles/s.", s.TargetRate)
		}
		d.p("\n\n")
	}
	d.thresholds(s.Thresholds)
	d.differences(v)
	for _, w := range s.Warnings {
		d.p("> warning: %s\n\n", mdEscape(w))
	}
}

func (d *mdDoc) thresholds(t ThresholdsResult) {
	if t.Judged == 0 {
		d.p("No thresholds or expectations were checked (--threshold, report.thresholds, expect:).\n\n")
		return
	}
	if t.OK {
		d.p("All %d checks met.\n\n", t.Judged)
	} else {
		d.p("**%d of %d checks not met or not judged:**\n\n", len(t.Broken), t.Judged)
		for _, b := range t.Broken {
			d.p("- %s `%s` %s **%s**: actual %s\n", b.Kind(), b.Rule, b.Verb(), mdEscape(b.Cell), mdEscape(b.ActualText))
		}
		d.p("\n")
	}
	if len(t.Checked) > 0 {
		d.p("Thresholds, on every cell (a cell's own expectation on the same metric replaces one): `%s`.\n\n", strings.Join(t.Checked, "`, `"))
	}
	if len(t.Expectations) > 0 {
		d.p("Expectations, each cell's own:\n\n")
		for _, c := range t.Expectations {
			d.p("- **%s**: `%s`\n", mdEscape(c.Cell), strings.Join(c.Rules, "`, `"))
		}
		d.p("\n")
	}
}

func (d *mdDoc) differences(v view) {
	if len(v.Differences) == 0 {
		return
	}
	d.p("What each swept setting changed, against the noise of the repeats (Mann–Whitney U at 0.05):\n\n")
	for _, x := range v.Differences {
		d.p("- %s\n", mdEscape(x.Text))
	}
	if v.MoreDifferences > 0 {
		d.p("- … and %d more in summary.json (differences)\n", v.MoreDifferences)
	}
	d.p("\n")
}

// mdBold marks a bad figure.
func mdBold(s string, bad bool) string {
	if bad {
		return "**" + s + "**"
	}
	return s
}

func (d *mdDoc) safety(v view) {
	if len(v.Safety) == 0 {
		return
	}
	d.p("## Safety under faults\n\nViolations: exclusion broken, two holders of one key inside their critical sections at once as each used its lock (acquire's return to release call; within the validity window is the second figure, in the JSON); lost updates: acknowledged writes missing from the protected resource; availability: share of attempts / of seconds in which the lock could be had; unavailable: the longest span after a server-taking fault with no acquire won.\n\n")
	d.p("| # | cell | faults | acquisitions | violations | lost updates | fencing | stale writes rejected | availability (attempts) | availability (time) | history (porcupine) | expectations |\n|--:|---|---|--:|--:|--:|---|--:|--:|--:|---|---|\n")
	for _, r := range v.Safety {
		hist := mdBold(mdEscape(r.History), r.HistoryBad)
		if r.HistoryLink != "" {
			hist += fmt.Sprintf(" ([its history](%s))", r.HistoryLink)
		}
		d.p("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Index, mdEscape(r.Label), mdEscape(r.Faults), r.Acquired,
			mdBold(r.Violations, r.Bad), mdBold(r.Lost, r.Bad), r.Fencing, r.Rejected, r.AvailOps, r.AvailTime, hist, mdBold(mdEscape(r.Verdict), r.VerdictBad))
	}
	d.p("\n")
}

// price is the topologies' price and safety table.
func (d *mdDoc) price(v view) {
	if len(v.Price) == 0 {
		return
	}
	d.p("## Topologies: price and safety\n\n%s\n\n", v.PriceNote)
	d.p("| # | cell | topology | servers | wait replicas | persistence | load | acquire p50 (ms) | × single | acquire p99 (ms) | × single | cycles/s | × single | server CPU µs/cycle | × single | violations | few acks | lost updates | verdict |\n")
	d.p("|--:|---|---|---|--:|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
	for _, r := range v.Price {
		d.p("| %d | %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %s | %s |\n", r.Index, mdEscape(r.Label), r.TopologyT, r.ServersT,
			r.WaitReplicas, r.Persistence, mdEscape(r.Load), r.P50, r.P50R, r.P99, r.P99R, r.Cycles, r.CyclesR, r.CPU, r.CPUR,
			mdBold(mdEscape(r.ViolationsT), r.Bad), r.Unconfirmed, mdBold(r.LostT, r.Bad), mdEscape(r.VerdictT))
	}
	d.p("\n")
}

func (d *mdDoc) contention(v view) {
	if len(v.Contention) == 0 {
		return
	}
	d.p("## Contention as callers feel it\n\nTime to lock spans every retry and wait of a caller; commands are summed over every server; the handoff gap is a key's idle time between a release and its next holder while callers waited; p99 ÷ FIFO ideal (one hot key) is the time to lock p99 over (contenders − 1) × hold + contenders × mean handoff gap, what a first-come first-served queue gives; starved workers gave up or waited over 10× the median.\n\n")
	d.p("| # | cell | strategy | workers | keys | cycles/s | time to lock p50 | p99 | max | attempts/lock | commands/lock | handoff gap p50 | p99 ÷ FIFO ideal | gave up | starved | Jain's index | wake-ups (message / timeout) |\n|--:|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range v.Contention {
		d.p("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Index, mdEscape(r.Label), r.Strategy, r.Workers, r.Keys, r.Cycles,
			r.P50, r.P99, r.Max, r.Attempts, r.Commands, r.Gap, r.FIFO, r.GaveUp, r.Starved, r.Jain, r.Wakeups)
	}
	d.p("\n")
}

func (d *mdDoc) capacity(v view) {
	if !v.ShowCapacity {
		return
	}
	d.p("## Capacity planning\n\nPer configuration, the highest lock rate of a cell that met the SLO. Every master of one Redlock set sees every lock, so more capacity means more independent lock groups (resources sharded across separate N-master sets); a sharded design (a cluster of shards) is planned in shards instead, and a hot key lives on one shard: one key's rate is bounded by one shard's. ")
	d.p("A knee is quoted as the masters' capacity only when the servers or the wait (network, fsync) limited it; a knee set by the load generator or by a machine that lockbench and the masters share is a lower bound, and lock groups are then planned from the server-cost projection (one core per master at the costliest master's CPU per lock cycle, in the step with the highest measured rate).\n\n")
	d.p("| configuration | load | cells | max rate within SLO (cycles/s) | reached at | limited by | server-cost projection | headroom at target | lock groups needed | what it is |\n")
	d.p("|---|---|--:|--:|--:|---|--:|--:|--:|---|\n")
	for _, c := range v.Capacity {
		note := c.Note
		if c.ClientBound {
			note = "**client-bound.** " + note
		}
		d.p("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", mdEscape(c.Config), c.Load, c.Cells, c.MaxRateT, c.KneeLoadT, c.LimitT, c.ProjectionT, c.HeadroomT, c.GroupsT, mdEscape(note))
	}
}

func (d *mdDoc) plots(v view) {
	d.p("\n## Plots\n\n")
	if len(v.Figures) == 0 {
		d.p("No plot had data to show.\n\n")
	}
	for _, f := range v.Figures {
		d.p("### %s\n\n", f.Title)
		if f.PNG != "" {
			d.p("![%s](%s)\n\n", f.Title, mdPath(f.PNG))
		}
		d.p("*What this shows:* %s", f.Caption)
		if f.SVG != "" {
			d.p(" ([SVG](%s))", mdPath(f.SVG))
		}
		d.p("\n\n")
	}
}

func (d *mdDoc) timelines(v view) {
	if len(v.Timelines) == 0 {
		return
	}
	d.p("\n## Timelines\n\n")
	for _, f := range v.Timelines {
		d.p("### %s\n\n", mdEscape(f.Cell))
		if f.PNG != "" {
			d.p("![%s](%s)\n\n", mdEscape(f.Title), mdPath(f.PNG))
		}
		d.p("*What this shows:* %s\n\n", f.Caption)
	}
}

func (d *mdDoc) cellWarnings(v view) {
	var warned bool
	for _, c := range v.Cells {
		for _, w := range c.Warnings {
			if !warned {
				d.p("\n## Cell warnings\n\n")
				warned = true
			}
			d.p("- **%s**: %s\n", mdEscape(c.Label), mdEscape(w))
		}
	}
}

func (d *mdDoc) events(v view) {
	var events bool
	for _, c := range v.Cells {
		if len(c.EventsText) == 0 {
			continue
		}
		if !events {
			d.p("\n## Events\n\n")
			events = true
		}
		d.p("**%s**\n\n", mdEscape(c.Label))
		for _, e := range c.EventsText {
			d.p("- %s\n", mdEscape(e))
		}
		d.p("\n")
	}
}

func (d *mdDoc) files(v view) {
	d.p("\n## Files\n\n")
	for _, c := range v.Cells {
		if c.PercentilesFile != "" {
			d.p("- %s: [acquire percentiles](%s)\n", mdEscape(c.Label), mdPath(c.PercentilesFile))
		}
	}
}

// cells is the cells table: a repeated cell's figures as
// "median ±spread", with a repeats column when any cell was repeated.
func (d *mdDoc) cells(v view) {
	d.p("## Cells\n\nLatencies of successful acquires in ms; a cycle is one acquire plus its release; success = acquired / attempts.")
	for _, note := range []string{v.SpreadNote, v.AdapterNote} {
		if note != "" {
			d.p(" %s", note)
		}
	}
	d.p("\n\n")
	repHead, repAlign := "", ""
	if v.SpreadNote != "" {
		repHead, repAlign = " repeats |", "--:|"
	}
	d.p("| # | cell | load |%s cycles/s | acquires/s | p50 | p90 | p99 | p99.9 | max | acquired | not acquired | errors | success | violations | client CPU µs/cycle | client CPU share | SLO |\n", repHead)
	d.p("|--:|---|---|%s--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n", repAlign)
	for _, c := range v.Cells {
		label := mdEscape(c.Label)
		if c.ClientBound {
			label += " (client-bound)"
		}
		load := c.LoadText
		if repHead != "" {
			load += " | " + c.RepeatsT
		}
		d.p("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			c.Index, label, load, c.Tput, c.Acq, c.P50, c.P90, c.P99, c.P999, c.Max,
			c.AcquiredT, c.NotAcquiredT, c.ErrorsT, c.Success, c.ViolationsT, c.CPU, c.Share, sloText(c, v.ShowCapacity))
	}
}

// sloText says whether a cell met the SLO; chaos cells judge no SLO.
func sloText(c cellView, judged bool) string {
	switch {
	case !judged:
		return "—"
	case c.MeetsSLO:
		return "met"
	}
	return "missed"
}

// costs is the table of machine shares, server cost and verdicts.
func (d *mdDoc) costs(v view) {
	d.p("\n### Machine, server cost and what limited each cell\n\nShares of the whole machine from /proc in the measured window; server cost per lock cycle on the costliest master (commands: the lock's in its own statistics, e.g. INFO commandstats; CPU: the whole server process); the projection is one core per master at that CPU cost; fsync share: the part of the acquire p50 the same cell without persistence did not have.\n\n")
	d.p("| # | cell | machine busy | lockbench | masters | other | steal | busiest master | server µs/cycle | server CPU µs/cycle | one-core projection | measured cycles/s | fsync share of p50 | limited by | evidence |\n")
	d.p("|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|---|\n")
	for _, c := range v.Cells {
		k := c.Cost
		d.p("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", c.Index, mdEscape(c.Label), k.Busy, k.Client, k.Servers, k.Other, k.Steal,
			k.Busiest, k.CmdUs, k.CPUUs, k.Projection, k.Measured, k.Fsync, k.LimitBy, mdEscape(k.LimitEvidence))
	}
}
