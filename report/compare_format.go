package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"lockbench/results"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// CompareFormats are compare's output formats.
var CompareFormats = []string{"text", "md", "csv", "json"}

// WriteComparison writes c in one of CompareFormats.
func WriteComparison(w io.Writer, c *Comparison, format string) error {
	switch format {
	case "json":
		return results.WriteJSON(w, c)
	case "csv":
		return writeCompareCSV(w, c)
	case "md":
		return writeCompareMD(w, c)
	case "text", "":
		return writeCompareText(w, c)
	}
	return &results.InputError{Field: "--format", Value: format, Problem: "not a format", Accepted: strings.Join(CompareFormats, ", ")}
}

// figureValue writes a median in the figure's unit: cycles/s as a whole
// number, latencies in ms.
func figureValue(f results.Figure, v float64) string {
	if f.Micros {
		return ms(v)
	}
	return results.Rate(v)
}

// spreadCell is "median ± spread" of one side, "median" with one sample.
func spreadCell(f results.Figure, sp results.Spread) string {
	if sp.N < 2 {
		return figureValue(f, sp.Median)
	}
	return fmt.Sprintf("%s ± %s", figureValue(f, sp.Median), results.SpreadText(sp))
}

// deltaText is what benchstat prints: the change when significant, "~"
// when not, and here also why a test could not say anything.
func deltaText(r CompareRow) string {
	switch r.Verdict {
	case "significant":
		if math.IsNaN(r.Delta) {
			return "changed"
		}
		return fmt.Sprintf("%+.1f%%", r.Delta)
	case "~":
		return "~"
	}
	return "too few repeats"
}

func noteText(r CompareRow) string {
	if r.Verdict == "too few repeats" {
		return fmt.Sprintf("n=%d+%d: p ≥ %.3g always", r.Old.N, r.New.N, r.MinP)
	}
	return fmt.Sprintf("p=%.3f n=%d+%d", r.P, r.Old.N, r.New.N)
}

func figureTitle(r CompareRow) string {
	f, _ := results.FigureByName(r.Figure)
	if f.Micros {
		return f.Text + " (ms)"
	}
	return f.Text
}

func writeCompareText(w io.Writer, c *Comparison) error {
	fmt.Fprintf(w, "compare %s → %s: %s matched", c.Old, c.New, cellsText(c.Matched))
	if len(c.Ignored) > 0 {
		fmt.Fprintf(w, " ignoring %s", strings.Join(c.Ignored, ", "))
	}
	fmt.Fprintf(w, "; %s at %g; ~ = no difference shown; ± = spread of the repeats\n\n", c.Test, c.Alpha)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "cell\tfigure\told\tnew\tdelta\t")
	last := ""
	for _, r := range c.Rows {
		cell := ""
		if r.Cell+r.Changed != last {
			cell = r.Cell
			if r.Changed != "" {
				cell += " [" + r.Changed + "]"
			}
			last = r.Cell + r.Changed
		}
		f, _ := results.FigureByName(r.Figure)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t(%s)\n", cell, figureTitle(r), spreadCell(f, r.Old), spreadCell(f, r.New), deltaText(r), noteText(r))
	}
	tw.Flush()
	writeCompareFooter(w, c, "")
	return nil
}

func writeCompareFooter(w io.Writer, c *Comparison, bullet string) {
	if len(c.OldOnly)+len(c.NewOnly)+len(c.Warnings) > 0 {
		fmt.Fprintln(w)
	}
	for _, l := range c.OldOnly {
		fmt.Fprintf(w, "%sonly in old: %s\n", bullet, l)
	}
	for _, l := range c.NewOnly {
		fmt.Fprintf(w, "%sonly in new: %s\n", bullet, l)
	}
	for _, l := range c.Warnings {
		fmt.Fprintf(w, "%swarning: %s\n", bullet, l)
	}
}

func writeCompareMD(w io.Writer, c *Comparison) error {
	fmt.Fprintf(w, "Comparison of `%s` (old) and `%s` (new): %s matched", c.Old, c.New, cellsText(c.Matched))
	if len(c.Ignored) > 0 {
		fmt.Fprintf(w, " ignoring %s", strings.Join(c.Ignored, ", "))
	}
	fmt.Fprintf(w, ". %s at %g; ~ means no difference shown; ± is the spread of the repeats.\n\n", c.Test, c.Alpha)
	fmt.Fprintln(w, "| cell | figure | old | new | delta | test |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|---|")
	for _, r := range c.Rows {
		f, _ := results.FigureByName(r.Figure)
		cell := mdEscape(r.Cell)
		if r.Changed != "" {
			cell += " [" + mdEscape(r.Changed) + "]"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", cell, figureTitle(r), spreadCell(f, r.Old), spreadCell(f, r.New), deltaText(r), noteText(r))
	}
	writeCompareFooter(w, c, "- ")
	return nil
}

func writeCompareCSV(w io.Writer, c *Comparison) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"cell", "changed", "figure", "old_median", "old_min", "old_max", "old_n", "new_median", "new_min", "new_max", "new_n", "delta_pct", "p", "verdict"})
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for _, r := range c.Rows {
		d := ""
		if !math.IsNaN(r.Delta) {
			d = strconv.FormatFloat(r.Delta, 'f', 2, 64)
		}
		_ = cw.Write([]string{r.Cell, r.Changed, r.Figure,
			g(r.Old.Median), g(r.Old.Min), g(r.Old.Max), strconv.Itoa(r.Old.N),
			g(r.New.Median), g(r.New.Min), g(r.New.Max), strconv.Itoa(r.New.N),
			d, g(r.P), r.Verdict})
	}
	cw.Flush()
	return cw.Error()
}

func cellsText(n int) string {
	if n == 1 {
		return "1 cell"
	}
	return fmt.Sprintf("%d cells", n)
}
