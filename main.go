// Command lockbench benchmarks and load-tests the Redlock distributed lock on
// real Redis masters.
package main

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"

	"lockbench/bench"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// Exit codes shared by every command.
const (
	exitOK          = 0
	exitFailure     = 1   // the run could not be done
	exitUsage       = 2   // bad input: nothing was started
	exitInterrupted = 130 // SIGINT/SIGTERM: partial results were kept
)

type command struct {
	summary string
	run     func(args []string) int
}

var commands = map[string]command{
	"quickstart": {"what lockbench without arguments runs: the quickstart sweep (installing redis-server as root when missing), then the report", cmdQuickstart},
	"run":        {"run one benchmark cell (closed or open loop) on local or given masters", cmdRun},
	"masters":    {"start local redis-server masters and keep them up until Ctrl-C", cmdMasters},
	"sweep":      {"run a scenario file's matrix of cells into a results directory, then report", cmdSweep},
	"report":     {"build plots, tables and a capacity plan from results directories (merging them)", cmdReport},
	"compare":    {"compare two results cell by cell: old, new, delta and whether the repeats show a real difference", cmdCompare},
	"chaos":      {"run a chaos scenario (crash, partition, pause, clock jump) and check safety on a protected resource", cmdChaos},
	"version":    {"print the version", func([]string) int { fmt.Println("lockbench", version); return exitOK }},
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: lockbench COMMAND [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(os.Stderr, "\n'lockbench COMMAND --help' shows a command's flags.")
}

func main() {
	bench.Version = version
	args := os.Args[1:]
	if len(args) == 0 {
		os.Exit(cmdQuickstart(nil))
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage()
		os.Exit(exitOK)
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "lockbench: command: %q is not known\n", args[0])
		usage()
		os.Exit(exitUsage)
	}
	os.Exit(cmd.run(args[1:]))
}

// usageError marks bad input (exit 2).
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }

func exitCode(err error) int {
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitFailure
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
