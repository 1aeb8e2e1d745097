package runner

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"lockbench/plan"
	"lockbench/results"
)

// progress shows a scenario's cells as they run: a live bar on a
// terminal and plain lines otherwise.
type progress struct {
	cells   []plan.Cell
	repeats int
	tty     bool
	bar     *progressbar.ProgressBar
	cur     plan.Cell
	repeat  int
	secs    int
}

// NewProgress is sweep's and chaos' display of cells run repeats times
// each.
func NewProgress(cells []plan.Cell, repeats int) Progress { return newProgress(cells, repeats) }

func newProgress(cells []plan.Cell, repeats int) *progress {
	p := &progress{cells: cells, repeats: max(repeats, 1), tty: term.IsTerminal(int(os.Stderr.Fd()))}
	if p.tty {
		total := 0
		for _, c := range cells {
			total += int(time.Duration(c.Settings.Duration).Seconds()) * p.repeats
		}
		p.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(os.Stderr), progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetElapsedTime(true), progressbar.OptionShowDescriptionAtLineEnd(), progressbar.OptionSetWidth(30),
			progressbar.OptionFullWidth(), progressbar.OptionThrottle(200*time.Millisecond))
	}
	return p
}

// Log is where master start-up lines go without breaking the bar.
func (p *progress) Log() io.Writer {
	if p.tty {
		return barWriter{p.bar}
	}
	return os.Stderr
}

func (p *progress) StartCell(c plan.Cell, repeat int) {
	p.cur = c
	p.repeat = repeat
	p.secs = 0
	kindOf(c).started(p, c)
}

// repeatTag says which repeat runs, when there are several.
func (p *progress) repeatTag() string {
	switch {
	case p.repeat > p.repeats: // a budget's run past the repeats asked for
		return fmt.Sprintf(" (repeat %d, past %d: not settled yet)", p.repeat, p.repeats)
	case p.repeats <= 1:
		return ""
	}
	return fmt.Sprintf(" (repeat %d/%d)", p.repeat, p.repeats)
}

func (p *progress) Interval(iv results.Interval) {
	secs := iv.End.Sub(iv.Start).Seconds()
	if secs <= 0 {
		return
	}
	rate := float64(iv.Counts[results.Acquire]) / secs
	p.secs++
	if p.tty {
		p.bar.Describe(fmt.Sprintf("cell %d/%d%s %s | %.0f cycles/s p99 %.2fms", p.position(p.cur), len(p.cells), p.repeatTag(), p.cur.Label, rate, iv.AcquireP99/1000))
		_ = p.bar.Add(1)
		return
	}
	if p.secs%5 == 0 {
		fmt.Fprintf(os.Stderr, "  %ds: %.0f cycles/s, acquire p99 %.2fms\n", p.secs, rate, iv.AcquireP99/1000)
	}
}

// EndCell sums up a benchmark cell (a fault cell's runner said its own).
func (p *progress) EndCell(c plan.Cell, repeat int, res *CellResult) {
	r := &res.Run
	p.repeat = repeat
	if p.tty {
		_ = p.bar.Add(int(time.Duration(c.Settings.Duration).Seconds()) - p.secs) // a fault cell has no interval ticks
	}
	kindOf(c).ended(p, c, r)
}

// position is c's place among the cells run, from 1 (a cell selected
// with --cell keeps its number in the file, not its place here).
func (p *progress) position(c plan.Cell) int {
	for i, x := range p.cells {
		if x.Index == c.Index {
			return i + 1
		}
	}
	return c.Index + 1
}

// printf prints a line to stderr, where no bar is.
func (p *progress) printf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}

// println prints a whole line, above the bar on a terminal.
func (p *progress) println(line string) {
	if p.tty {
		_, _ = progressbar.Bprintln(p.bar, line)
		return
	}
	fmt.Fprintln(os.Stderr, line)
}

// faultSummary lists a fault cell's faults on one line.
func faultSummary(c plan.Cell) string { return strings.Join(faultList(c), "; ") }

// faultList is a fault cell's faults in words: "none" for none.
func faultList(c plan.Cell) []string {
	var out []string
	for _, f := range c.Faults {
		out = append(out, f.String())
	}
	if out == nil {
		return []string{"none"}
	}
	return out
}

// faultLines are --dry-run's lines for a fault cell's faults.
func faultLines(c plan.Cell) []string {
	fs := faultList(c)
	if fs[0] == "none" {
		return []string{"faults: none"}
	}
	for i := range fs {
		fs[i] = "fault: " + fs[i]
	}
	return fs
}

func (p *progress) Finish() {
	if p.tty && p.bar != nil {
		_ = p.bar.Finish()
		fmt.Fprintln(os.Stderr)
	}
}

// barWriter prints whole lines above a live progress bar.
type barWriter struct{ bar *progressbar.ProgressBar }

func (b barWriter) Write(p []byte) (int, error) {
	_, err := progressbar.Bprintln(b.bar, strings.TrimRight(string(p), "\n"))
	return len(p), err
}
