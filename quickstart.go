package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
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
		if err := installRedisServer(os.Stderr); err != nil {
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

// installRedisServer installs the Debian package when this process may
// (root, apt-get present, LOCKBENCH_NO_INSTALL unset), and says why not
// otherwise.
func installRedisServer(w io.Writer) error {
	if os.Getenv("LOCKBENCH_NO_INSTALL") == "1" {
		return errors.New("LOCKBENCH_NO_INSTALL=1, so it is not installed")
	}
	if os.Geteuid() != 0 {
		return errors.New("not root, so it is not installed")
	}
	apt, err := exec.LookPath("apt-get")
	if err != nil {
		return errors.New("no apt-get here to install it")
	}
	fmt.Fprintln(w, "lockbench: redis-server not found; installing it (apt-get install redis-server)")
	for _, args := range [][]string{{"update", "-qq"}, {"install", "-y", "-qq", "redis-server"}} {
		var out bytes.Buffer
		cmd := exec.Command(apt, args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("apt-get %s failed: %v: %s", strings.Join(args, " "), err, lastLine(out.String()))
		}
	}
	if _, ok := localmasters.RedisServerPath(); !ok {
		return errors.New("apt-get installed redis-server, but it is not in PATH")
	}
	return nil
}

// unservedCells counts a shipped scenario's cells this machine cannot serve
// (runner.Check) and can, with the persistence modes of the skipped ones.
func unservedCells(name string) (skipped, kept int, modes []string, err error) {
	sc, err := plan.Load(name, false)
	if err != nil {
		return 0, 0, nil, err
	}
	cells, err := sc.Cells()
	if err != nil {
		return 0, 0, nil, err
	}
	for _, c := range cells {
		if runner.Check([]plan.Cell{c}) == nil {
			kept++
			continue
		}
		skipped++
		if !slices.Contains(modes, c.Settings.Persistence) {
			modes = append(modes, c.Settings.Persistence)
		}
	}
	return skipped, kept, modes, nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
