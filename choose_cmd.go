package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"lockbench/plan"
	"lockbench/report"
	"lockbench/whichlock"
)

type chooseArgs struct {
	scenarioArgs
	designs, faults, needs []string
	p99, duration          time.Duration
	quick                  bool
}

// quickDuration is each cell's measured time under --quick.
const quickDuration = 5 * time.Second

// quickly narrows a run to a first answer: one repeat, shorter cells, one
// design of each lock service, the first that can meet the needs (what
// --design or --repeat or --duration name stays theirs); gaveUp says what
// it gave up, for the page.
func (a *chooseArgs) quickly(fs *pflag.FlagSet) (gaveUp string, err error) {
	var given []string
	if !fs.Changed("repeat") {
		a.repeat, given = 1, append(given, "one run of each cell instead of 3 (so no spread, and a rare failure may not show)")
	}
	if !fs.Changed("duration") {
		a.duration, given = quickDuration, append(given, fmt.Sprintf("%s cells instead of 8s", quickDuration))
	}
	if len(a.designs) == 0 {
		ds, err := whichlock.QuickDesigns(whichlock.Ask{Faults: a.faults, Needs: a.needs, P99: a.p99, Duration: a.duration, Repeat: a.repeat})
		if err != nil {
			return "", err
		}
		a.designs = ds
		which := "the first design of each lock service only"
		if len(a.needs) > 0 {
			which = "of each lock service, only the first design that can meet your needs (the first when none can)"
		}
		given = append(given, which+" ("+strings.Join(ds, ", ")+")")
	}
	return strings.Join(given, "; "), nil
}

// chooseFlags are choose's flags, bound to a.
func chooseFlags(a *chooseArgs) *pflag.FlagSet {
	fs := pflag.NewFlagSet("choose", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: lockbench choose [flags]\n\n"+
			"Runs every lock design (Redis' Redlock, one master, a replicated master and rueidislock; etcd; ZooKeeper;\n"+
			"PostgreSQL) on the same work under the same faults, each fault cell repeated, and writes which-lock.md,\n"+
			"which-lock.html and which-lock-matrix.json: capacity beside safety, judged for your needs.\n\nflags:")
		fs.PrintDefaults()
	}
	fs.StringArrayVar(&a.designs, "design", nil, "only this design (repeatable): "+strings.Join(plan.DesignNames(), ", "))
	fs.StringArrayVar(&a.faults, "fault", nil, "only this fault (repeatable): "+strings.Join(plan.MatrixFaultNames(), ", "))
	fs.StringSliceVar(&a.needs, "need", nil, report.NeedHelp)
	fs.DurationVar(&a.p99, "p99", 0, "the acquire p99 you need: the capacity's SLO (10ms without it), and a need on each design's p99 at the common rate (0: none)")
	fs.BoolVar(&a.quick, "quick", false, "a first answer in minutes: one run of each cell, 5s cells, one design of each lock service, the first that can meet --need (the page says what it gave up)")
	fs.DurationVar(&a.duration, "duration", 8*time.Second, "each cell's measured time")
	fs.IntVar(&a.repeat, "repeat", 3, "measure every cell this many times (the fault cells' spread and how many runs were unsafe)")
	fs.StringVar(&a.out, "out", "", "results directory (default results/which-lock-YYYYMMDD-HHMMSS)")
	fs.BoolVar(&a.dryRun, "dry-run", false, "print the cells and the estimated duration, run nothing")
	return fs
}

func cmdChoose(args []string) error {
	var a chooseArgs
	fs := chooseFlags(&a)
	if err := fs.Parse(args); err != nil {
		return flagErr(err)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	gaveUp, err := "", error(nil)
	if a.quick {
		if gaveUp, err = a.quickly(fs); err != nil {
			return usageErr(err)
		}
	}
	sc, cells, wl, err := whichlock.Build(whichlock.Ask{Designs: a.designs, Faults: a.faults, Needs: a.needs, P99: a.p99, Duration: a.duration, Repeat: a.repeat})
	if err != nil {
		return usageErr(err)
	}
	wl.Quick = gaveUp
	if a.dryRun {
		whichlock.PrintUnsupported(os.Stdout, wl)
	}
	a.beforeReport = func(dir string) error { return whichlock.WritePlan(dir, wl) }
	return runScenario("choose", sc, cells, a.scenarioArgs)
}
