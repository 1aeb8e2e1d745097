package report

import (
	"fmt"
	"io"
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

func writeMarkdown(path string, s *Summary, figs []figure) error {
	v := makeView(s, figs, nil)
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }

	p("# lockbench report: %s\n\n", s.Name)
	if s.Description != "" {
		p("%s\n\n", s.Description)
	}
	p("%d cells · generated %s · from %s\n\n", len(s.Cells), s.GeneratedAt.Format("2006-01-02 15:04:05 UTC"), "`"+strings.Join(s.Dirs, "`, `")+"`")

	p("## Verdict\n\n")
	if v.ShowCapacity {
		p("SLO used for capacity: %s.", v.SLOText)
		if s.TargetRate > 0 {
			p(" Target rate: %.0f cycles/s.", s.TargetRate)
		}
		p("\n\n")
	}
	switch {
	case len(s.Thresholds.Checked) == 0:
		p("No thresholds were checked.\n\n")
	case s.Thresholds.OK:
		p("All thresholds met: `%s`.\n\n", strings.Join(s.Thresholds.Checked, "`, `"))
	default:
		p("**%d threshold checks broken:**\n\n", len(s.Thresholds.Broken))
		for _, br := range s.Thresholds.Broken {
			p("- `%s` broken by **%s**: actual %s\n", br.Threshold, mdEscape(br.Cell), br.ActualText)
		}
		p("\n")
	}
	if len(v.Differences) > 0 {
		p("What each swept setting changed, against the noise of the repeats (Mann–Whitney U at 0.05):\n\n")
		for _, d := range v.Differences {
			p("- %s\n", mdEscape(d.Text))
		}
		if v.MoreDifferences > 0 {
			p("- … and %d more in summary.json (differences)\n", v.MoreDifferences)
		}
		p("\n")
	}
	for _, w := range s.Warnings {
		p("> warning: %s\n\n", mdEscape(w))
	}

	if len(v.Safety) > 0 {
		p("## Safety under faults\n\nViolations: two holders of one lock within their validity windows; lost updates: acknowledged writes missing from the protected resource; availability: share of attempts / of seconds in which the lock could be had.\n\n")
		p("| # | cell | faults | acquisitions | violations | lost updates | fencing | stale writes rejected | availability (attempts) | availability (time) | expectations |\n|--:|---|---|--:|--:|--:|---|--:|--:|--:|---|\n")
		bold := func(s string, bad bool) string {
			if bad {
				return "**" + s + "**"
			}
			return s
		}
		for _, r := range v.Safety {
			p("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Index, mdEscape(r.Label), mdEscape(r.Faults), r.Acquired,
				bold(r.Violations, r.Bad), bold(r.Lost, r.Bad), r.Fencing, r.Rejected, r.AvailOps, r.AvailTime, bold(mdEscape(r.Verdict), r.VerdictBad))
		}
		p("\n")
	}
	if v.ShowCapacity {
		p("## Capacity planning\n\nPer configuration, the highest lock rate of a cell that met the SLO. Every master of one Redlock set sees every lock, so more capacity means more independent lock groups (resources sharded across separate N-master sets). ")
		p("A knee is quoted as the masters' capacity only when the servers or the wait (network, fsync) limited it; a knee set by the load generator or by a machine that lockbench and the masters share is a lower bound, and lock groups are then planned from the Redis-cost projection (one core per master at the costliest master's CPU per lock cycle, in the step with the highest measured rate).\n\n")
		p("| configuration | load | cells | max rate within SLO (cycles/s) | reached at | limited by | Redis-cost projection | headroom at target | lock groups needed | what it is |\n")
		p("|---|---|--:|--:|--:|---|--:|--:|--:|---|\n")
		for _, c := range v.Capacity {
			note := c.Note
			if c.ClientBound {
				note = "**client-bound.** " + note
			}
			p("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", mdEscape(c.Config), c.Load, c.Cells, c.MaxRateT, c.KneeLoadT, c.LimitT, c.ProjectionT, c.HeadroomT, c.GroupsT, mdEscape(note))
		}
	}
	p("\n## Plots\n\n")
	if len(v.Figures) == 0 {
		p("No plot had data to show.\n\n")
	}
	for _, f := range v.Figures {
		p("### %s\n\n", f.Title)
		if f.PNG != "" {
			p("![%s](%s)\n\n", f.Title, mdPath(f.PNG))
		}
		p("*What this shows:* %s", f.Caption)
		if f.SVG != "" {
			p(" ([SVG](%s))", mdPath(f.SVG))
		}
		p("\n\n")
	}

	writeMDCells(&b, v)
	if len(v.Timelines) > 0 {
		p("\n## Timelines\n\n")
		for _, f := range v.Timelines {
			p("### %s\n\n", mdEscape(f.Cell))
			if f.PNG != "" {
				p("![%s](%s)\n\n", mdEscape(f.Title), mdPath(f.PNG))
			}
			p("*What this shows:* %s\n\n", f.Caption)
		}
	}
	var warned bool
	for _, c := range v.Cells {
		for _, w := range c.Warnings {
			if !warned {
				p("\n## Cell warnings\n\n")
				warned = true
			}
			p("- **%s**: %s\n", mdEscape(c.Label), mdEscape(w))
		}
	}
	var events bool
	for _, c := range v.Cells {
		if len(c.EventsText) > 0 {
			if !events {
				p("\n## Events\n\n")
				events = true
			}
			p("**%s**\n\n", mdEscape(c.Label))
			for _, e := range c.EventsText {
				p("- %s\n", mdEscape(e))
			}
			p("\n")
		}
	}
	p("\n## Files\n\n")
	for _, c := range v.Cells {
		if c.PercentilesFile != "" {
			p("- %s: [acquire percentiles](%s)\n", mdEscape(c.Label), mdPath(c.PercentilesFile))
		}
	}
	p("\n## Manifest\n\n```json\n%s\n```\n", v.Manifest)
	return writeShared(path, func(w io.Writer) error { _, err := io.WriteString(w, b.String()); return err })
}

// writeMDCells is the cells table: a repeated cell's figures as
// "median ±spread", with a repeats column when any cell was repeated.
func writeMDCells(b *strings.Builder, v view) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("## Cells\n\nLatencies of successful acquires in ms; a cycle is one acquire plus its release; success = acquired / attempts.")
	if v.SpreadNote != "" {
		p(" %s", v.SpreadNote)
	}
	p("\n\n")
	repHead, repAlign := "", ""
	if v.SpreadNote != "" {
		repHead, repAlign = " repeats |", "--:|"
	}
	p("| # | cell | load |%s cycles/s | acquires/s | p50 | p90 | p99 | p99.9 | max | acquired | not acquired | errors | success | violations | client CPU µs/cycle | client CPU share | SLO |\n", repHead)
	p("|--:|---|---|%s--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n", repAlign)
	for _, c := range v.Cells {
		label := mdEscape(c.Label)
		if c.ClientBound {
			label += " (client-bound)"
		}
		slo := "missed"
		switch {
		case !v.ShowCapacity:
			slo = "—" // chaos cells: no SLO is judged
		case c.MeetsSLO:
			slo = "met"
		}
		load := c.LoadText
		if repHead != "" {
			load += " | " + c.RepeatsT
		}
		p("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			c.Index, label, load, c.Tput, c.Acq, c.P50, c.P90, c.P99, c.P999, c.Max,
			c.AcquiredT, c.NotAcquiredT, c.ErrorsT, c.Success, c.ViolationsT, c.CPU, c.Share, slo)
	}
	p("\n### Machine, Redis cost and what limited each cell\n\nShares of the whole machine from /proc in the measured window; Redis cost per lock cycle on the costliest master (commands: INFO commandstats SET/EVALSHA/EVAL; CPU: the whole server process); the projection is one core per master at that CPU cost; fsync share: the part of the acquire p50 the same cell without persistence did not have.\n\n")
	p("| # | cell | machine busy | lockbench | masters | other | steal | busiest master | Redis µs/cycle | server CPU µs/cycle | one-core projection | measured cycles/s | fsync share of p50 | limited by | evidence |\n")
	p("|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|---|\n")
	for _, c := range v.Cells {
		k := c.Cost
		p("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", c.Index, mdEscape(c.Label), k.Busy, k.Client, k.Servers, k.Other, k.Steal,
			k.Busiest, k.CmdUs, k.CPUUs, k.Projection, k.Measured, k.Fsync, k.LimitBy, mdEscape(k.LimitEvidence))
	}
}
