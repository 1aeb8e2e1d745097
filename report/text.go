package report

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"lockbench/results"
)

// WriteText is the report's terminal summary: what it wrote, the
// capacity plan, the spread of repeated cells and what the swept settings
// changed against that noise.
func (s *Summary) WriteText(w io.Writer) {
	fmt.Fprintf(w, "lockbench report: %d cells from %s into %s\n", len(s.Cells), strings.Join(s.Dirs, ", "), s.OutDir)
	fmt.Fprintf(w, "plots: %s\n", orNone(s.Plots))
	var others []string
	for _, f := range s.Files {
		if !strings.HasSuffix(f, ".png") && !strings.HasSuffix(f, ".svg") && !strings.HasPrefix(f, "cells/") {
			others = append(others, f)
		}
	}
	fmt.Fprintf(w, "files: %s\n", orNone(others))
	if len(s.Capacity) > 0 { // none for chaos cells
		fmt.Fprintf(w, "capacity (SLO: acquire p99 ≤ %s, success ≥ %g):\n", results.FormatMicros(s.SLO.AcquireP99Micros), s.SLO.MinSuccess)
	}
	for _, c := range s.Capacity {
		line := fmt.Sprintf("  %s: ", c.Config)
		if c.MaxRate <= 0 {
			line += "no cell met the SLO"
			if c.Limit != nil {
				line += fmt.Sprintf(" (limited by %s)", c.Limit.By)
			}
			if c.ProjectedRate > 0 {
				line += fmt.Sprintf("; server-cost projection %.0f cycles/s", c.ProjectedRate)
			}
		} else {
			line += fmt.Sprintf("%.0f cycles/s", c.MaxRate)
			switch {
			case c.LowerBound && c.Limit != nil:
				line = fmt.Sprintf("  %s: ≥ %.0f cycles/s, a lower bound (limited by %s)", c.Config, c.MaxRate, c.Limit.By)
			case c.ServerCapacity:
				line += fmt.Sprintf(" (server capacity, limited by %s)", c.Limit.By)
			case c.Limit != nil:
				line += fmt.Sprintf(" (limited by %s)", c.Limit.By)
			}
			if c.ProjectedRate > 0 {
				line += fmt.Sprintf("; server-cost projection %.0f cycles/s", c.ProjectedRate)
			}
			if c.HeadroomPct != nil && c.Groups != nil {
				line += fmt.Sprintf(", headroom %+.0f%% at %.0f/s, %d lock group(s) from the %s", *c.HeadroomPct, c.TargetRate, *c.Groups, c.GroupsFrom)
			}
			if c.Shards != nil {
				line += fmt.Sprintf(", %d shard(s) at %.0f/s, one shard about %.0f locks/s from the %s (a hot key lives on one shard: one key's rate is bounded by it)", *c.Shards, c.TargetRate, c.ShardCapacity, c.ShardsFrom)
			}
			if c.ClientBound {
				line += " — CLIENT-BOUND (measures the load generator, not the servers)"
			}
		}
		fmt.Fprintln(w, line)
	}
	printSpread(w, s)
	for _, f := range s.Files {
		if f == "report.html" {
			fmt.Fprintf(w, "open: %s\n", filepath.Join(s.OutDir, f))
		}
	}
}

func orNone(v []string) string {
	if len(v) == 0 {
		return "none"
	}
	return strings.Join(v, " ")
}

// printSpread shows repeated cells as median ± spread, and what each swept
// setting changed against that noise.
func printSpread(w io.Writer, s *Summary) {
	var rep *results.Repeats
	for _, c := range s.Cells {
		if c.Repeats != nil {
			rep = c.Repeats
			break
		}
	}
	if rep == nil {
		return
	}
	fmt.Fprintf(w, "cells: medians of the repeats ± the larger side of the %s\n", results.CIText(rep))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  cell\trepeats\tcycles/s\tacquire p50 ms\tacquire p99 ms\trelease p99 ms\t")
	for _, c := range s.Cells {
		n, sp := 1, map[string]results.Spread{}
		if c.Repeats != nil {
			n, sp = c.Repeats.Count, c.Repeats.Spread
		}
		cell := func(v float64, figure string, unit float64) string {
			t := strconv.FormatFloat(v/unit, 'f', map[bool]int{true: 0, false: 3}[unit == 1], 64)
			if x, ok := sp[figure]; ok && x.N >= 2 {
				t += " ±" + results.SpreadText(x)
			}
			return t
		}
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\t%s\t\n", c.Label, n, cell(c.CyclesPerSec, "cycles_per_sec", 1),
			cell(c.Acquire.P50, "acquire_p50", 1000), cell(c.Acquire.P99, "acquire_p99", 1000), cell(c.Release.P99, "release_p99", 1000))
	}
	tw.Flush()
	for i, d := range s.Differences {
		if i == 10 {
			fmt.Fprintf(w, "  … %d more differences in summary.json\n", len(s.Differences)-10)
			break
		}
		fmt.Fprintln(w, "  "+d.Text)
	}
}
