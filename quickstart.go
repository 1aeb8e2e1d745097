package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"lockbench/internal/cli"
	"lockbench/plan"
	"lockbench/runner"
	"lockbench/service"
)

// cmdQuickstart is what `lockbench` without arguments runs: the shipped
// quickstart scenario on local masters of the default topology, then the
// report (args are sweep flags, e.g. a shorter --duration). On a machine
// without its server program it first installs it where it can (the
// service's Installer: as root, with apt-get); where it cannot, it runs
// the cells embedded masters can serve and says in one line which it
// skipped and how to get them.
func cmdQuickstart(args []string) error {
	args = append([]string{"-f", "quickstart"}, args...)
	inst, ok := service.Lookup(plan.DefaultTopology).(service.Installer)
	if !ok {
		return cli.InCommand("sweep", cmdSweep(args))
	}
	var missing service.NotInstalled
	if err := inst.Install(os.Stderr); errors.As(err, &missing) {
		skipped, kept, modes, serr := runner.UnservedIn("quickstart")
		if serr != nil {
			return cli.InCommand("", cli.UsageErr(serr))
		}
		fmt.Fprintf(os.Stderr, "lockbench: %v: running the %d quickstart cells embedded masters can serve, skipping %d (persistence %s); for those: %s, then ./lockbench again\n",
			missing, kept, skipped, strings.Join(modes, ", "), missing.Hint)
		args = append(args, "--persistence", "none")
	} else if err != nil {
		return err
	}
	return cli.InCommand("sweep", cmdSweep(args))
}
