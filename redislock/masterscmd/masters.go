// Package masterscmd is Redis' own command, lockbench masters: local
// redis-server masters kept up until Ctrl-C, so that several runs can be
// measured back to back on the same servers. Its init registers it with
// the commands (cli.Register).
package masterscmd

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"lockbench/internal/cli"
	"lockbench/internal/redisserver"
	"lockbench/metrics"
	"lockbench/redislock"
	"lockbench/redislock/localmasters"
)

func init() {
	cli.Register("masters", cli.Command{
		Summary: "start local redis-server masters and keep them up until Ctrl-C",
		Run:     cmdMasters,
		Flags:   func() *pflag.FlagSet { var a mastersArgs; return mastersFlags(&a) },
	})
}

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
	fs.StringVar(&a.metrics, "metrics-addr", "", metrics.AddrUsage)
	return fs
}

// cmdMasters starts local masters and keeps them up, so several runs (say
// lockbench and --driver redsync) can be measured back to back on the same
// servers.
func cmdMasters(args []string) error {
	var a mastersArgs
	fs := mastersFlags(&a)
	if err := fs.Parse(args); err != nil {
		return cli.FlagErr(err)
	}
	p, err := localmasters.ParsePersistence(a.persistence)
	if err != nil {
		return cli.UsageErr(err)
	}
	if a.n < 1 {
		return cli.Usagef("local: %d is not accepted; use 1 or more", a.n)
	}
	if a.keep <= 0 {
		return cli.Usagef("for: %v is not accepted; use a positive duration", a.keep)
	}
	if a.metrics != "" {
		if err := metrics.CheckAddr(a.metrics); err != nil {
			return cli.UsageErr(err)
		}
	}
	return a.serve(p)
}

// serve starts the masters and keeps them up for a.keep or until a
// signal, with their live metrics when asked.
func (a mastersArgs) serve(p localmasters.Persistence) error {
	exp, err := metrics.Start("masters", a.metrics, cli.Version)
	if err != nil {
		return err
	}
	defer exp.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	set, err := localmasters.Start(ctx, localmasters.Options{N: a.n, Persistence: p, Embedded: "never", Log: os.Stderr})
	if err != nil {
		return err
	}
	defer set.Stop()
	if exp != nil {
		exp.WatchMasters(set.Addrs(), redislock.InfoReading(func(ctx context.Context, addr string) (string, error) { return redisserver.Do(ctx, addr, "INFO") }))
	}
	addrs := strings.Join(set.Addrs(), ",")
	if a.addrFile != "" {
		if err := os.WriteFile(a.addrFile, []byte(addrs+"\n"), 0o644); err != nil {
			return err
		}
	}
	fmt.Println(addrs)
	ctx, cancel := context.WithTimeout(ctx, a.keep) // --for counts once they are up
	defer cancel()
	<-ctx.Done()
	return nil
}
