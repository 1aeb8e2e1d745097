package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"lockbench/localmasters"
	"lockbench/metrics"
)

// cmdMasters starts local masters and keeps them up, so several runs (say
// lockbench and --driver redsync) can be measured back to back on the same
// servers.
func cmdMasters(args []string) int {
	fs := pflag.NewFlagSet("masters", pflag.ContinueOnError)
	n := fs.Int("local", 5, "number of local redis-server masters")
	persistence := fs.String("persistence", "none", "none, aof-no, aof-everysec, aof-always")
	keep := fs.Duration("for", time.Hour, "stop the masters after this long (or at Ctrl-C)")
	addrFile := fs.String("addr-file", "", "also write the comma-separated addresses to this file")
	metricsAddr := fs.String("metrics-addr", "", metricsAddrUsage)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintln(os.Stderr, "lockbench masters:", err)
		return exitUsage
	}
	p, err := localmasters.ParsePersistence(*persistence)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lockbench masters:", err)
		return exitUsage
	}
	if *n < 1 {
		fmt.Fprintf(os.Stderr, "lockbench masters: local: %d is not accepted; use 1 or more\n", *n)
		return exitUsage
	}
	if *keep <= 0 {
		fmt.Fprintf(os.Stderr, "lockbench masters: for: %v is not accepted; use a positive duration\n", *keep)
		return exitUsage
	}
	if *metricsAddr != "" {
		if err := metrics.CheckAddr(*metricsAddr); err != nil {
			fmt.Fprintln(os.Stderr, "lockbench masters:", err)
			return exitUsage
		}
	}
	exp, err := startMetrics("masters", *metricsAddr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lockbench masters:", err)
		return exitFailure
	}
	defer exp.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	set, err := localmasters.Start(ctx, localmasters.Options{N: *n, Persistence: p, Embedded: "never", Log: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, "lockbench masters:", err)
		return exitFailure
	}
	defer set.Stop()
	if exp != nil {
		exp.WatchMasters(set.Addrs(), func(ctx context.Context, addr string) (string, error) {
			return localmasters.Do(ctx, addr, "INFO")
		})
	}
	addrs := strings.Join(set.Addrs(), ",")
	if *addrFile != "" {
		if err := os.WriteFile(*addrFile, []byte(addrs+"\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "lockbench masters:", err)
			return exitFailure
		}
	}
	fmt.Println(addrs)
	t := time.NewTimer(*keep)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	return exitOK
}
