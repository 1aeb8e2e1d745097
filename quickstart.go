package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"lockbench/localmasters"
	"lockbench/plan"
	"lockbench/runner"
)

// cmdQuickstart is what `lockbench` without arguments runs: the shipped
// quickstart scenario on local masters, then the report (args are sweep
// flags, e.g. a shorter --duration). On a machine without redis-server it
// first installs it where it can (as root, with apt-get); where it cannot,
// it runs the cells embedded masters can serve and says in one line which
// it skipped and how to get them.
func cmdQuickstart(args []string) error {
	args = append([]string{"-f", "quickstart"}, args...)
	if _, ok := localmasters.RedisServerPath(); !ok {
		if err := localmasters.InstallRedisServer(os.Stderr); err != nil {
			skipped, kept, modes, serr := unservedCells("quickstart")
			if serr != nil {
				return inCommand("", usageErr(serr))
			}
			fmt.Fprintf(os.Stderr, "lockbench: redis-server not found (%v): running the %d quickstart cells embedded masters can serve, skipping %d (persistence %s); for those: apt-get install redis-server, then ./lockbench again\n",
				err, kept, skipped, strings.Join(modes, ", "))
			args = append(args, "--persistence", "none")
		}
	}
	return inCommand("sweep", cmdSweep(args))
}

// unservedCells counts a shipped scenario's cells this machine cannot
// serve and can, with the persistence modes of the skipped ones.
func unservedCells(name string) (skipped, kept int, modes []string, err error) {
	sc, err := plan.Load(name, false)
	if err != nil {
		return 0, 0, nil, err
	}
	cells, err := sc.Cells()
	for _, c := range runner.Unserved(cells) {
		if !slices.Contains(modes, c.Settings.Persistence) {
			modes = append(modes, c.Settings.Persistence)
		}
		skipped++
	}
	return skipped, len(cells) - skipped, modes, err
}
