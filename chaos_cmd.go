package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"lockbench/chaos"
	"lockbench/configs"
	"lockbench/internal/cli"
	"lockbench/plan"
)

// chaosArgs are chaos' own flags besides the scenario flags.
type chaosArgs struct {
	scenarioArgs
	cells, faults, expect []string
}

func cmdChaos(args []string) error {
	if len(args) > 0 && args[0] == chaos.ClientArg {
		return cli.Quiet(chaos.ClientMain(args[1:]))
	}
	var a chaosArgs
	flags := plan.FaultDefaults()
	fs := chaosFlags(&a, &flags)
	if err := fs.Parse(args); err != nil {
		return cli.FlagErr(err)
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected argument %q", fs.Arg(0))
	}
	if fs.Changed("local") && fs.Changed("masters") {
		return cli.Usagef("local: given twice (as --local and --masters, its old name); give --local")
	}
	sc, cells, err := chaosScenario(a, fs)
	if err != nil {
		return cli.UsageErr(err)
	}
	return runScenario("chaos", sc, cells, a.scenarioArgs)
}

// chaosFlags are chaos' flags, bound to a and the fault settings.
func chaosFlags(a *chaosArgs, flags *plan.Settings) *pflag.FlagSet {
	fs := pflag.NewFlagSet("chaos", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: lockbench chaos [-f SCENARIO] [flags]\n\n"+
			"Runs a lock (any --topology: "+strings.Join(plan.TopologyNames(), ", ")+")\n"+
			"under scheduled faults (crash/restart, partitions, latency, resets, pauses, clock jumps)\n"+
			"while clients do read-modify-writes on a protected resource, and checks for overlapping\n"+
			"holds, lost updates and unavailability. Writes a results directory like sweep.\n"+
			"Shipped scenarios: "+strings.Join(configs.FaultNames(), ", ")+" (configs/chaos/).\n\nflags:")
		fs.PrintDefaults()
	}
	bindScenarioFlags(fs, &a.scenarioArgs, configs.FaultNames())
	fs.StringArrayVar(&a.cells, "cell", nil, "run only this cell (repeatable)")
	fs.StringArrayVar(&a.faults, "fault", nil, `replace the faults: KIND at=D field=value..., e.g. "crash at=3s master_index=1 restart=immediate" (repeatable)`)
	fs.StringArrayVar(&a.expect, "expect", nil, `replace the expectations: METRIC OP VALUE, e.g. "violations>0" (repeatable)`)
	plan.BindFaultFlags(fs, flags)
	return fs
}

// chaosScenario loads the scenario as a fault scenario (or makes one cell
// from flags), keeps the cells asked for, replaces faults and expectations
// given by flags and lays the other flags over every cell.
func chaosScenario(a chaosArgs, fs *pflag.FlagSet) (*plan.Scenario, []plan.Cell, error) {
	sc := plan.FlagsScenario()
	if a.file != "" {
		var err error
		if sc, err = plan.Load(a.file, true); err != nil {
			return nil, nil, err
		}
	}
	if err := sc.Select(a.cells); err != nil {
		return nil, nil, err
	}
	if err := sc.ReplaceFromFlags(a.faults, a.expect); err != nil {
		return nil, nil, err
	}
	cells, err := scenarioCells(sc, fs, a.scenarioArgs, plan.BindFaultFlags)
	return sc, cells, err
}
