package main

import (
	"fmt"
	"os"
	"strings"

	"lockbench/internal/cli"
	"lockbench/internal/redisserver"
	"lockbench/redislock/localmasters"
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
	if _, ok := redisserver.Path(); !ok {
		if err := localmasters.InstallRedisServer(os.Stderr); err != nil {
			skipped, kept, modes, serr := runner.UnservedIn("quickstart")
			if serr != nil {
				return cli.InCommand("", cli.UsageErr(serr))
			}
			fmt.Fprintf(os.Stderr, "lockbench: redis-server not found (%v): running the %d quickstart cells embedded masters can serve, skipping %d (persistence %s); for those: apt-get install redis-server, then ./lockbench again\n",
				err, kept, skipped, strings.Join(modes, ", "))
			args = append(args, "--persistence", "none")
		}
	}
	return cli.InCommand("sweep", cmdSweep(args))
}
