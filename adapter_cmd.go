package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"lockbench/adapter"
	"lockbench/internal/cli"
	"lockbench/service"
)

// adapterArgs are adapter check's flags.
type adapterArgs struct {
	local      int
	topology   string
	ttl, bound time.Duration
	quiet      bool
}

// adapterFlags are adapter check's flags, bound to a; the adapter's
// command follows them.
func adapterFlags(a *adapterArgs) *pflag.FlagSet {
	fs := pflag.NewFlagSet("adapter", pflag.ContinueOnError)
	fs.SetInterspersed(false) // the adapter's own arguments follow its command
	fs.IntVar(&a.local, "local", 3, "local servers of the design the checks start (topology single: 1)")
	fs.StringVar(&a.topology, "topology", "redlock", "the design's servers the adapter is told of: redlock or single")
	fs.DurationVar(&a.ttl, "ttl", time.Second, "the locks' TTL in the checks")
	fs.DurationVar(&a.bound, "reply-bound", 3*time.Second, "how long past a request's time an answer may take before the adapter counts as hung")
	fs.BoolVar(&a.quiet, "quiet", false, "drop the adapter's stderr (its logs) instead of passing it on")
	return fs
}

// cmdAdapter is `lockbench adapter check [flags] CMD [ARGS…]`: the
// conformance checks of a lock-client adapter (docs/adapters.md), against
// local masters it starts and stops; exit 0 only when every check that
// applies passes.
func cmdAdapter(args []string) error {
	if len(args) == 0 || args[0] != "check" {
		return cli.Usagef("adapter: use lockbench adapter check [flags] CMD [ARGS…]")
	}
	var a adapterArgs
	fs := adapterFlags(&a)
	if err := fs.Parse(args[1:]); err != nil {
		return cli.FlagErr(err)
	}
	argv := fs.Args()
	switch {
	case len(argv) == 0:
		return cli.Usagef("adapter check: give the adapter's command, e.g. lockbench adapter check ./my-adapter")
	case a.topology != "redlock" && a.topology != "single":
		return cli.NotAccepted("topology", a.topology, "redlock or single")
	case a.local < 1 || a.topology == "single" && fs.Changed("local") && a.local != 1:
		return cli.Usagef("local: %d is not accepted; use 1 or more (topology single: 1)", a.local)
	case a.ttl < 100*time.Millisecond:
		return cli.Usagef("ttl: %v is not accepted; use 100ms or more", a.ttl)
	case a.bound <= 0:
		return cli.Usagef("reply-bound: %v is not accepted; use a positive duration", a.bound)
	}
	if err := adapter.CheckCommand(argv); err != nil {
		return cli.UsageErr(err)
	}
	return a.check(argv)
}

// check starts the design's servers (its service's CheckServers), runs
// the checks and stops the servers.
func (a adapterArgs) check(argv []string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if a.topology == "single" {
		a.local = 1
	}
	cs, ok := service.Lookup(a.topology).(service.CheckServers)
	if !ok {
		return cli.NotAccepted("topology", a.topology, "redlock or single")
	}
	set, err := cs.StartCheckServers(ctx, a.local, os.Stderr)
	if err != nil {
		return err
	}
	defer set.Stop()
	opt := adapter.CheckOptions{Argv: argv, Servers: set.Addrs(), TTL: a.ttl, ReplyBound: a.bound, Stderr: os.Stderr,
		Settings: map[string]any{"topology": a.topology}, DropKey: set.DropKey}
	if a.quiet {
		opt.Stderr = nil
	}
	if _, ok := adapter.Check(ctx, opt, os.Stdout); !ok {
		return errors.New("adapter check: a check failed (FAIL above)")
	}
	return nil
}
