package engine

import (
	"context"
	"strconv"
	"strings"
	"time"
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
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
				out[i], _ = strconv.Atoi(v)
			}
		}
	}
	return out
}

// info runs INFO section on every master; "" for a master that failed.
func (e *Engine) info(ctx context.Context, section string) []string {
	out := make([]string, len(e.links))
	for i, l := range e.links {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		s, err := l.client.Do(cctx, l.client.B().Info().Section(section).Build()).ToString()
		cancel()
		if err == nil {
			out[i] = s
		}
	}
	return out
}

// ParseCommandStats reads lines such as
// "cmdstat_set:calls=12,usec=30,usec_per_call=2.50,rejected_calls=0,failed_calls=0".
func ParseCommandStats(info string) map[string]CommandStat {
	out := map[string]CommandStat{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		name, isCmd := strings.CutPrefix(name, "cmdstat_")
		if !ok || !isCmd {
			continue
		}
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
		out[strings.ToLower(name)] = st
	}
	return out
}
