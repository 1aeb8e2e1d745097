// Command lockbench benchmarks and load-tests distributed locks on real
// servers: the Redlock algorithm on Redis masters, one Redis master, a
// replicated master with Sentinel and WAIT, rueidis' own lock, and the
// locks people weigh against them (etcd, ZooKeeper, PostgreSQL advisory
// locks), on the same work and under the same faults.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"lockbench/internal/cli"
	"lockbench/plan"
	"lockbench/report"
	"lockbench/runner"
	"lockbench/service"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// commands: each one's line in the usage, what it runs, and its flag set
// built as it builds it (docs/flags.md is generated from them), and the
// commands a lock service brings (Redis' masters: services.go imports it).
var commands = cli.Commands{
	"quickstart": {Summary: "what lockbench without arguments runs: the quickstart sweep (installing the servers' program as root when missing), then the report", Run: cmdQuickstart},
	"run":        {Summary: "run one benchmark cell (closed or open loop) on local or given masters", Run: cmdRun, Flags: func() *pflag.FlagSet { a := runArgs{s: plan.Defaults()}; return runFlags(&a) }},
	"sweep":      {Summary: "run a scenario file's matrix of cells into a results directory, then report", Run: cmdSweep, Flags: func() *pflag.FlagSet { var a scenarioArgs; o := plan.Defaults(); return sweepFlags(&a, &o) }},
	"report":     {Summary: "build plots, tables and a capacity plan from results directories (merging them)", Run: cmdReport, Flags: func() *pflag.FlagSet { var a reportArgs; return reportFlags(&a) }},
	"compare":    {Summary: "compare two results cell by cell: old, new, delta and whether the repeats show a real difference", Run: cmdCompare, Flags: func() *pflag.FlagSet { var a compareArgs; return compareFlags(&a) }},
	"chaos":      {Summary: "run a chaos scenario (crash, partition, pause, clock jump) and check safety on a protected resource", Run: cmdChaos, Flags: func() *pflag.FlagSet { var a chaosArgs; f := plan.FaultDefaults(); return chaosFlags(&a, &f) }},
	"choose":     {Summary: "which lock: every design (Redlock, one master, a replicated one, each lock service's) on the same work under the same faults, price beside safety", Run: cmdChoose, Flags: func() *pflag.FlagSet { var a chooseArgs; return chooseFlags(&a) }},
	"adapter":    {Summary: "check a lock-client adapter (your library behind the JSON-lines protocol): adapter check CMD", Run: cmdAdapter, Flags: func() *pflag.FlagSet { var a adapterArgs; return adapterFlags(&a) }},
	"version":    {Summary: "print the version: lockbench's commit, Go's, and the lock clients' (also --version)", Run: cmdVersion},
}.WithRegistered()

func main() {
	version = cli.BuildVersion(version)
	runner.Version, report.Version, cli.Version = version, version, version
	args := os.Args[1:]
	if len(args) == 0 {
		cli.Exit("quickstart", cmdQuickstart(nil))
	}
	if args[0] == "--version" {
		args[0] = "version"
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		commands.Usage(os.Stderr)
		os.Exit(cli.OK)
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "lockbench: command: %q is not known\n", args[0])
		commands.Usage(os.Stderr)
		os.Exit(cli.Usage)
	}
	cli.Exit(args[0], cmd.Run(args[1:]))
}

// cmdVersion prints lockbench's version, Go's and the lock clients'.
func cmdVersion([]string) error {
	cli.PrintVersion(os.Stdout, version, service.LibraryPaths())
	return nil
}
