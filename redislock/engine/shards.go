package engine

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// Shard is one shard of a cluster as its slot map says: its master's
// address and the slot ranges it holds (each lo, hi inclusive).
type Shard struct {
	Master string
	Slots  [][2]int64
}

// SlotsText is the shard's slots as "slots 0-5460" ("slots 0-99,200-299"
// for a shard of several ranges).
func (s Shard) SlotsText() string {
	parts := make([]string, len(s.Slots))
	for i, r := range s.Slots {
		parts[i] = fmt.Sprintf("%d-%d", r[0], r[1])
	}
	return "slots " + strings.Join(parts, ",")
}

// Shards reads a cluster's slot map (CLUSTER SLOTS, from the first node
// that answers): one shard per master, in the order of its first slot.
// Nil for an engine on independent masters or a replicated set.
func (e *Engine) Shards(ctx context.Context) ([]Shard, error) {
	if len(e.links) != 1 || !e.links[0].cluster {
		return nil, nil
	}
	var err error
	for _, c := range e.links[0].nodes() {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		var ranges []rueidis.RedisMessage
		ranges, err = c.Do(cctx, c.B().ClusterSlots().Build()).ToArray()
		cancel()
		if err == nil {
			return shardsOf(ranges)
		}
	}
	return nil, fmt.Errorf("CLUSTER SLOTS: no node answered: %w", err)
}

// shardsOf groups CLUSTER SLOTS' ranges ([lo, hi, [host, port, id],
// replicas...]) by their master.
func shardsOf(ranges []rueidis.RedisMessage) ([]Shard, error) {
	byMaster := map[string]*Shard{}
	for _, r := range ranges {
		e, _ := r.ToArray()
		if len(e) < 3 {
			return nil, fmt.Errorf("CLUSTER SLOTS: an entry of %d fields, want at least 3", len(e))
		}
		lo, _ := e[0].AsInt64()
		hi, _ := e[1].AsInt64()
		node, _ := e[2].ToArray()
		if len(node) < 2 {
			return nil, fmt.Errorf("CLUSTER SLOTS: slots %d-%d name no master", lo, hi)
		}
		host, _ := node[0].ToString()
		port, _ := node[1].AsInt64()
		addr := host + ":" + strconv.FormatInt(port, 10)
		if byMaster[addr] == nil {
			byMaster[addr] = &Shard{Master: addr}
		}
		byMaster[addr].Slots = append(byMaster[addr].Slots, [2]int64{lo, hi})
	}
	out := make([]Shard, 0, len(byMaster))
	for _, s := range byMaster {
		sort.Slice(s.Slots, func(i, j int) bool { return s.Slots[i][0] < s.Slots[j][0] })
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Slots[0][0] < out[j].Slots[0][0] })
	return out, nil
}

// ServerCPUOf is ServerCPU read from the cluster's nodes at addrs (its
// shards' masters) one by one, not added up: -1 for one that does not
// answer.
func (e *Engine) ServerCPUOf(ctx context.Context, addrs []string) []time.Duration {
	out := make([]time.Duration, len(addrs))
	for i, info := range e.infoOf(ctx, addrs, "cpu") {
		out[i] = -1
		if info != "" {
			out[i] = ParseInfo(info).CPU()
		}
	}
	return out
}

// CommandStatsOf is CommandStats read from the cluster's nodes at addrs;
// nil for one that does not answer.
func (e *Engine) CommandStatsOf(ctx context.Context, addrs []string) []map[string]CommandStat {
	out := make([]map[string]CommandStat, len(addrs))
	for i, info := range e.infoOf(ctx, addrs, "commandstats") {
		if info != "" {
			out[i] = ParseCommandStats(info)
		}
	}
	return out
}

// ServerPIDsOf is ServerPIDs read from the cluster's nodes at addrs.
func (e *Engine) ServerPIDsOf(ctx context.Context, addrs []string) []int {
	out := make([]int, len(addrs))
	for i, info := range e.infoOf(ctx, addrs, "server") {
		out[i], _ = strconv.Atoi(ParseInfo(info)["process_id"])
	}
	return out
}

// infoOf runs INFO section on each cluster node at addrs, as the cluster
// client knows them; "" for one it does not know or that failed.
func (e *Engine) infoOf(ctx context.Context, addrs []string, section string) []string {
	out := make([]string, len(addrs))
	e.closing.RLock()
	defer e.closing.RUnlock()
	if e.closed.Load() || len(e.links) != 1 || !e.links[0].cluster {
		return out
	}
	nodes := e.links[0].client.Nodes()
	for i, a := range addrs {
		c, ok := nodes[a]
		if !ok {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		out[i], _ = c.Do(cctx, c.B().Info().Section(section).Build()).ToString()
		cancel()
	}
	return out
}
