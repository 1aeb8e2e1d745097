package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"lockbench/adapter"
	"lockbench/internal/cli"
	"lockbench/internal/fsyncprobe"
	"lockbench/plan"
	"lockbench/report"
	"lockbench/whichlock"
)

type chooseArgs struct {
	scenarioArgs
	ask     whichlock.Ask
	quick   bool
	clients []string
	maxRate float64
}

// chooseFlags are choose's flags, bound to a.
func chooseFlags(a *chooseArgs) *pflag.FlagSet {
	fs := pflag.NewFlagSet("choose", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: lockbench choose [flags]\n\n"+
			"Runs every lock design of each lock service (--design lists them; topologies\n"+
			strings.Join(plan.TopologyNames(), ", ")+")\n"+
			"on the same work under the same faults, each fault cell repeated, and writes which-lock.md,\n"+
			"which-lock.html and which-lock-matrix.json: capacity beside safety, judged for your needs.\n\nflags:")
		fs.PrintDefaults()
	}
	fs.StringArrayVar(&a.ask.Designs, "design", nil, "only this design (repeatable): "+strings.Join(plan.DesignNames(), ", "))
	fs.StringArrayVar(&a.clients, "client", nil, "an external client's row (repeatable): NAME=CMD on Redlock's 5 masters, NAME@single=CMD on one; CMD its adapter (docs/adapters.md)")
	fs.StringArrayVar(&a.ask.Faults, "fault", nil, "only this fault (repeatable): "+strings.Join(plan.MatrixFaultNames(), ", "))
	fs.StringSliceVar(&a.ask.Needs, "need", nil, report.NeedHelp)
	fs.DurationVar(&a.ask.P99, "p99", 0, "the acquire p99 you need: the capacity's SLO (10ms without it), and a need on each design's p99 at the common rate (0: none)")
	fs.Float64Var(&a.maxRate, "max-rate", report.DefaultMaxRate, "settle an outcome clean only when 0 of n runs bounds its rate (95%) at or below this (0.2: 14 runs; 0.1: 29); a need recommends only settled outcomes")
	fs.BoolVar(&a.quick, "quick", false, "a first answer in minutes: one run of each cell, 5s cells, one design of each lock service, the first that can meet --need (the page says what it gave up)")
	fs.DurationVar(&a.ask.Duration, "duration", whichlock.FullDuration, "each cell's measured time (shorter than 8s: the common-rate price cell runs 2 s, too few acquires to settle a --p99 need)")
	fs.IntVar(&a.ask.Events, "events", plan.MatrixEvents, "fault events in each fault cell's history where the fault can repeat in one (a crash, a pause, a partition; a failover or a clock jump happen once a history and repeat as runs): each event is judged apart")
	fs.IntVar(&a.ask.Repeat, "repeat", 3, "measure every cell this many times (the fault cells' spread and how many runs were unsafe)")
	fs.DurationVar(&a.budget, "budget", DefaultBudget, "bound the run's time: no cell starts that would end past it; after every cell's first run, the fault cells your --need names (and with --p99 the common-rate cells, until they pool its 10,000 acquires) take their runs until settled (past --repeat while the budget lasts), then the other unsettled fault cells and the common-rate cells short of 10,000 acquires, then the other repeats (0: no bound, and no runs past --repeat; --quick: 0 unless given; settled cells stop early either way)")
	fs.StringVar(&a.out, "out", "", "results directory (default results/which-lock-YYYYMMDD-HHMMSS)")
	fs.BoolVar(&a.dryRun, "dry-run", false, "print the cells and the estimated duration, run nothing")
	return fs
}

func cmdChoose(args []string) error {
	var a chooseArgs
	fs := chooseFlags(&a)
	if err := fs.Parse(args); err != nil {
		return cli.FlagErr(err)
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if a.budget < 0 {
		return cli.NotAccepted("--budget", a.budget.String(), "a duration such as 90m (0: no bound)")
	}
	if a.ask.Events < 1 {
		return cli.NotAccepted("--events", fmt.Sprint(a.ask.Events), fmt.Sprintf("1..%d fault events in one fault cell's history", whichlock.MaxEvents))
	}
	if a.ask.Clients, err = clientDesigns(a.clients); err != nil {
		return cli.UsageErr(err)
	}
	gaveUp := ""
	if a.quick && !fs.Changed("budget") {
		a.budget = 0 // a first answer: one run of each cell, no more
	}
	if a.quick {
		if gaveUp, err = whichlock.Quick(&a.ask, fs.Changed("repeat"), fs.Changed("duration"), fs.Changed("events")); err != nil {
			return cli.UsageErr(err)
		}
	}
	sc, cells, wl, err := whichlock.Build(a.ask)
	if err != nil {
		return cli.UsageErr(err)
	}
	wl.Quick = gaveUp
	if a.maxRate <= 0 || a.maxRate >= 1 {
		return cli.NotAccepted("--max-rate", fmt.Sprint(a.maxRate), report.MaxRateAccepted)
	}
	wl.MaxRate = a.maxRate
	if a.dryRun {
		whichlock.PrintUnsupported(os.Stdout, wl)
	} else {
		wl.Fsync = probeFsync()
	}
	a.beforeReport = func(dir string) error { return whichlock.WritePlan(dir, wl) }
	a.settle = whichlock.Settler{MaxRate: a.maxRate, Named: wl.Needs.Faults(), P99: wl.Needs.P99 > 0}
	err = runScenario("choose", sc, cells, a.scenarioArgs)
	if a.dryRun && err == nil {
		fmt.Println(budgetNote(a.budget))
	}
	return err
}

// clientDesigns are --client's designs, each named once and its adapter
// a program this machine can run (checked before anything starts).
func clientDesigns(specs []string) ([]plan.Design, error) {
	var out []plan.Design
	for _, spec := range specs {
		d, err := plan.ClientDesign(spec)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(out, func(o plan.Design) bool { return o.Name == d.Name }) {
			return nil, fmt.Errorf("client: name %q is given twice; give each client its own", d.Name)
		}
		if err := adapter.CheckCommand(adapter.SplitCommand(d.Client())); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// probeFsync measures the disk's write+fsync latency where the servers
// keep their data, for the page's facts (nil, said, when it cannot).
func probeFsync() *fsyncprobe.Result {
	r, err := fsyncprobe.Probe(os.TempDir(), 200)
	if err != nil {
		fmt.Fprintf(os.Stderr, "lockbench choose: %v (the page will say the disk was not probed)\n", err)
		return nil
	}
	fmt.Fprintf(os.Stderr, "lockbench choose: disk: %s\n", r)
	return &r
}

// DefaultBudget is choose's --budget: a full run on a 2-core machine ends
// within 2 h (the last cell may end past it by its own length, and the
// report takes a minute).
const DefaultBudget = 110 * time.Minute

// budgetNote is what the dry run adds to its estimate.
func budgetNote(budget time.Duration) string {
	if budget <= 0 {
		return "(the estimate runs every cell --repeat times; a fault cell whose verdict settles sooner stops early)"
	}
	return fmt.Sprintf("(the estimate runs every cell --repeat times; a fault cell whose verdict settles sooner stops early, and --budget %s bounds the run: what is left goes to more runs of the unsettled fault cells)", budget)
}
