package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"lockbench/internal/redisserver"
)

// CommandStat is one command's line of INFO commandstats: how often the
// server ran it and the microseconds it spent executing it (not reading or
// writing the sockets).
type CommandStat struct {
	Calls int64
	Usec  int64
}

// CommandStats reads INFO commandstats on every master, keyed by command
// name in lower case ("set", "evalsha"). A master that does not answer
// gives nil.
func (e *Engine) CommandStats(ctx context.Context) []map[string]CommandStat {
	out := make([]map[string]CommandStat, len(e.links))
	for i, info := range e.info(ctx, "commandstats") {
		if info != "" {
			out[i] = ParseCommandStats(info)
		}
	}
	return out
}

// ServerPIDs reads process_id from INFO server on every master (0 when
// unknown), so a master on this machine can be found in /proc.
func (e *Engine) ServerPIDs(ctx context.Context) []int {
	out := make([]int, len(e.links))
	for i, info := range e.info(ctx, "server") {
		out[i], _ = strconv.Atoi(ParseInfo(info)["process_id"])
	}
	return out
}

// ServerCPU reads used_cpu_user + used_cpu_sys from INFO cpu on every master,
// so a run can tell the servers' cost apart from the client's. A master that
// does not answer reports -1.
func (e *Engine) ServerCPU(ctx context.Context) []time.Duration {
	out := make([]time.Duration, len(e.links))
	for i, info := range e.info(ctx, "cpu") {
		out[i] = ParseInfo(info).CPU()
	}
	return out
}

// InfoAt is INFO's default sections from the master at addr (one of
// Addrs), for live metrics; ErrClosed once the engine is closed.
func (e *Engine) InfoAt(ctx context.Context, addr string) (string, error) {
	e.closing.RLock()
	defer e.closing.RUnlock()
	if e.closed.Load() {
		return "", ErrClosed
	}
	for i, a := range e.addrs {
		if a == addr {
			return e.links[i].infoText(ctx, "")
		}
	}
	return "", fmt.Errorf("%s is not one of the engine's masters", addr)
}

// info runs INFO section on every master; "" for a master that failed.
func (e *Engine) info(ctx context.Context, section string) []string {
	out := make([]string, len(e.links))
	for i, l := range e.links {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		s, err := l.infoText(cctx, section)
		cancel()
		if err == nil {
			out[i] = s
		}
	}
	return out
}

// infoText is INFO section ("": the default ones) from the link's master,
// or a cluster's masters' added up (mergeInfo).
func (l *link) infoText(ctx context.Context, section string) (string, error) {
	ms, err := l.masters(ctx)
	if err != nil {
		return "", err
	}
	texts := make([]string, 0, len(ms))
	for _, c := range ms {
		cmd := c.B().Info().Build()
		if section != "" {
			cmd = c.B().Info().Section(section).Build()
		}
		s, err := c.Do(ctx, cmd).ToString()
		if err != nil {
			return "", err
		}
		texts = append(texts, s)
	}
	return mergeInfo(texts), nil
}

// Info is INFO's text as name → value ("redis_version" → "7.0.15").
type Info map[string]string

// ParseInfo reads INFO's "name:value" lines (redisserver.ParseInfo).
func ParseInfo(text string) Info { return Info(redisserver.ParseInfo(text)) }

// Float is a numeric field; false when it is absent or not a number.
func (i Info) Float(name string) (float64, bool) {
	f, err := strconv.ParseFloat(i[name], 64)
	return f, err == nil
}

// CPU is used_cpu_user + used_cpu_sys, or -1 when neither is there.
func (i Info) CPU() time.Duration {
	user, okU := i.Float("used_cpu_user")
	sys, okS := i.Float("used_cpu_sys")
	if !okU && !okS {
		return -1
	}
	return time.Duration((user + sys) * float64(time.Second))
}

// ParseCommandStats reads lines such as
// "cmdstat_set:calls=12,usec=30,usec_per_call=2.50,rejected_calls=0,failed_calls=0".
func ParseCommandStats(info string) map[string]CommandStat {
	out := map[string]CommandStat{}
	for name, rest := range ParseInfo(info) {
		if cmd, ok := strings.CutPrefix(name, "cmdstat_"); ok {
			out[strings.ToLower(cmd)] = parseCommandStat(rest)
		}
	}
	return out
}

// parseCommandStat reads "calls=12,usec=30,...".
func parseCommandStat(rest string) CommandStat {
	var st CommandStat
	for _, kv := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(kv, "=")
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "calls":
			st.Calls = n
		case "usec":
			st.Usec = n
		}
	}
	return st
}
