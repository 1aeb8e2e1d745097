package main

import (
	"context"
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
// mastersArgs are masters' flags.
type mastersArgs struct {
	n                              int
	persistence, addrFile, metrics string
	keep                           time.Duration
}

// mastersFlags are masters' flags, bound to a.
func mastersFlags(a *mastersArgs) *pflag.FlagSet {
	fs := pflag.NewFlagSet("masters", pflag.ContinueOnError)
	fs.IntVar(&a.n, "local", 5, "number of local redis-server masters")
	fs.StringVar(&a.persistence, "persistence", "none", "none, aof-no, aof-everysec, aof-always")
	fs.DurationVar(&a.keep, "for", time.Hour, "stop the masters after this long (or at Ctrl-C)")
	fs.StringVar(&a.addrFile, "addr-file", "", "also write the comma-separated addresses to this file")
	fs.StringVar(&a.metrics, "metrics-addr", "", metricsAddrUsage)
	return fs
}

func cmdMasters(args []string) error {
	var a mastersArgs
	fs := mastersFlags(&a)
	n, persistence, keep, addrFile, metricsAddr := &a.n, &a.persistence, &a.keep, &a.addrFile, &a.metrics
	if err := fs.Parse(args); err != nil {
		return flagErr(err)
	}
	p, err := localmasters.ParsePersistence(*persistence)
	if err != nil {
		return usageErr(err)
	}
	if *n < 1 {
		return usagef("local: %d is not accepted; use 1 or more", *n)
	}
	if *keep <= 0 {
		return usagef("for: %v is not accepted; use a positive duration", *keep)
	}
	if *metricsAddr != "" {
		if err := metrics.CheckAddr(*metricsAddr); err != nil {
			return usageErr(err)
		}
	}
	exp, err := startMetrics("masters", *metricsAddr)
	if err != nil {
		return err
	}
	defer exp.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	set, err := localmasters.Start(ctx, localmasters.Options{N: *n, Persistence: p, Embedded: "never", Log: os.Stderr})
	if err != nil {
		return err
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
			return err
		}
	}
	fmt.Println(addrs)
	t := time.NewTimer(*keep)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	return nil
}
