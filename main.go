// Command lockbench benchmarks and load-tests distributed locks on real
// servers: the Redlock algorithm on Redis masters, one Redis master, a
// replicated master with Sentinel and WAIT, rueidis' own lock, and the
// locks people weigh against them (etcd, ZooKeeper, PostgreSQL advisory
// locks), on the same work and under the same faults.
package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"sort"

	"lockbench/runner"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

type command struct {
	summary string
	run     func(args []string) error
}

var commands = map[string]command{
	"quickstart": {"what lockbench without arguments runs: the quickstart sweep (installing redis-server as root when missing), then the report", cmdQuickstart},
	"run":        {"run one benchmark cell (closed or open loop) on local or given masters", cmdRun},
	"masters":    {"start local redis-server masters and keep them up until Ctrl-C", cmdMasters},
	"sweep":      {"run a scenario file's matrix of cells into a results directory, then report", cmdSweep},
	"report":     {"build plots, tables and a capacity plan from results directories (merging them)", cmdReport},
	"compare":    {"compare two results cell by cell: old, new, delta and whether the repeats show a real difference", cmdCompare},
	"chaos":      {"run a chaos scenario (crash, partition, pause, clock jump) and check safety on a protected resource", cmdChaos},
	"choose":     {"which lock: every design (Redlock, one master, a replicated one, each lock service's) on the same work under the same faults, price beside safety", cmdChoose},
	"version":    {"print the version: lockbench's commit, Go's, and the lock clients' (also --version)", cmdVersion},
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

// buildVersion is version, or without one the commit the binary was built
// from (go build records it), "+dirty" with uncommitted changes.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if version != "dev" || !ok {
		return version
	}
	rev, dirty := "", ""
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 12:
			rev = s.Value[:12]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "+dirty"
		}
	}
	if rev == "" {
		return version
	}
	return rev + dirty
}

func main() {
	version = buildVersion()
	runner.Version = version
	args := os.Args[1:]
	if len(args) == 0 {
		exit("quickstart", cmdQuickstart(nil))
	}
	if args[0] == "--version" {
		args[0] = "version"
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
	exit(args[0], cmd.run(args[1:]))
}

// cmdVersion prints lockbench's version, Go's, and the versions of the
// client libraries it measures with, as the binary records them.
func cmdVersion([]string) error {
	fmt.Println("lockbench", version)
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	fmt.Println(bi.GoVersion)
	for _, d := range bi.Deps {
		for _, lib := range versionedLibs {
			if d.Path == lib {
				fmt.Printf("%s %s\n", d.Path, d.Version)
			}
		}
	}
	return nil
}

// versionedLibs are the clients whose versions shape what is measured.
var versionedLibs = []string{"github.com/redis/rueidis", "github.com/go-redsync/redsync/v4", "go.etcd.io/etcd/client/v3",
	"github.com/go-zookeeper/zk", "github.com/jackc/pgx/v5", "github.com/HdrHistogram/hdrhistogram-go"}
