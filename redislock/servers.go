package redislock

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"lockbench/internal/affinity"
	"lockbench/redislock/engine"
	"lockbench/redislock/localmasters"
)

// pinSelf runs lockbench on cpus only, with as many Go processors, and
// returns how to undo it.
func pinSelf(cpus []int) (func() error, error) {
	before, err := affinity.AllowedCPUs(0)
	if err != nil {
		return nil, err
	}
	if err := affinity.PinProcess(0, cpus); err != nil {
		return nil, err
	}
	procs := runtime.GOMAXPROCS(len(cpus))
	return func() error {
		runtime.GOMAXPROCS(procs)
		return affinity.PinProcess(0, before)
	}, nil
}

// aofSettings maps a persistence mode onto appendonly/appendfsync.
func aofSettings(p string) (appendonly, appendfsync string) {
	switch p {
	case "aof-no":
		return "yes", "no"
	case "aof-everysec":
		return "yes", "everysec"
	case "aof-always":
		return "yes", "always"
	}
	return "no", ""
}

// checkMaster connects to the master at addr and reads its INFO server
// section; display is the address without a password. The caller closes c.
func checkMaster(ctx context.Context, addr string, tlsFiles engine.TLSFiles) (c rueidis.Client, display, info string, err error) {
	opt, display, err := engine.MasterOption(addr, tlsFiles)
	if err != nil {
		return nil, "", "", err
	}
	opt.Dialer.Timeout = 3 * time.Second
	c, err = engine.NewSingleClient(opt)
	if err != nil {
		return nil, "", "", fmt.Errorf("master %s: %v", display, redactErr(err, addr))
	}
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	info, err = c.Do(cctx, c.B().Info().Section("server").Build()).ToString()
	cancel()
	if err != nil {
		c.Close()
		return nil, "", "", fmt.Errorf("master %s: not a usable Redis server: %v", display, redactErr(err, addr))
	}
	return c, display, info, nil
}

// setPersistence sets the persistence mode on the master with CONFIG SET
// and returns how to restore its original appendonly/appendfsync (which
// then closes c).
func setPersistence(ctx context.Context, c rueidis.Client, display, persistence string) (restore func(context.Context) error, err error) {
	orig := map[string]string{}
	for _, k := range []string{"appendonly", "appendfsync"} {
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		kv, err := c.Do(cctx, c.B().ConfigGet().Parameter(k).Build()).AsStrMap()
		cancel()
		if err != nil {
			return nil, fmt.Errorf("persistence: master %s refused CONFIG GET %s (%v); leave persistence unset to use the server's own", display, k, err)
		}
		orig[k] = kv[k]
	}
	set := func(ctx context.Context, ao, af string) error {
		if af != "" {
			if err := c.Do(ctx, c.B().ConfigSet().ParameterValue().ParameterValue("appendfsync", af).Build()).Error(); err != nil {
				return err
			}
		}
		return c.Do(ctx, c.B().ConfigSet().ParameterValue().ParameterValue("appendonly", ao).Build()).Error()
	}
	ao, af := aofSettings(persistence)
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err = set(cctx, ao, af)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("persistence: master %s refused CONFIG SET (%v); leave persistence unset to use the server's own", display, err)
	}
	return func(ctx context.Context) error {
		defer c.Close()
		if err := set(ctx, orig["appendonly"], orig["appendfsync"]); err != nil {
			return fmt.Errorf("master %s: restoring appendonly=%s appendfsync=%s: %v", display, orig["appendonly"], orig["appendfsync"], err)
		}
		return nil
	}, nil
}

// redactErr keeps a password that a client library echoed out of errors.
func redactErr(err error, url string) string {
	s := err.Error()
	if i := strings.Index(url, "://"); i >= 0 {
		if at := strings.Index(url[i+3:], "@"); at >= 0 {
			cred := url[i+3 : i+3+at]
			if _, pw, ok := strings.Cut(cred, ":"); ok && pw != "" {
				s = strings.ReplaceAll(s, pw, "xxxxx")
			}
		}
	}
	return s
}

// splitCPUs is --local-cpus as the local servers' CPUs and lockbench's
// (none without it).
func splitCPUs(cpus string) (local, client []int, err error) {
	if cpus == "" {
		return nil, nil, nil
	}
	return affinity.SplitCPUs(cpus)
}

func pidsOf(ms []*localmasters.Master) []int {
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = m.Pid()
	}
	return out
}
