package results

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// Shard is one shard of a sharded service's servers: each holds part of
// the keys and a lock lives on one, so shards add capacity across keys
// but not for one key (unlike Redlock's masters, each of which sees every
// lock). Server is its key in the per-server rows (Servers,
// CommandCost); the figures are of the measured window.
type Shard struct {
	Server string `json:"server"`
	Holds  string `json:"holds"` // its part of the keys, in the service's words ("slots 0-5460")
	// Commands are the lock commands it ran (CommandCost's calls); Locks
	// the cell's cycles by its share of all shards' lock commands (a
	// server counts commands, not locks).
	Commands int64   `json:"commands"`
	Locks    float64 `json:"locks"`
	// CPUSeconds is its server's CPU (-1: unknown); CPUMicrosLock and
	// CommandMicrosLock are its CPU and command time per lock it served.
	CPUSeconds        float64 `json:"cpu_seconds"`
	CPUMicrosLock     float64 `json:"cpu_us_per_lock,omitempty"`
	CommandMicrosLock float64 `json:"command_us_per_lock,omitempty"`
	// Capacity is the locks/s one core of it sustains at that cost
	// (1 s / CPUMicrosLock; from command time alone when its CPU is
	// unknown): the bound of any one key's rate.
	Capacity float64 `json:"capacity,omitempty"`
	Busiest  bool    `json:"busiest,omitempty"` // spent the most CPU (command time when CPU is unknown)
}

// ShardOf is what a service's cell says of one shard: its server and
// what it holds.
type ShardOf struct{ Server, Holds string }

// NewShards works out the shards' figures from r's per-server rows (its
// CommandCost's calls and usec, its Servers' CPU) over r's acquired
// cycles; nil without command counts.
func NewShards(r *Run, of []ShardOf) []Shard {
	cc := r.CommandCost
	if cc == nil || len(of) == 0 {
		return nil
	}
	out := make([]Shard, len(of))
	var all int64
	for i, s := range of {
		out[i] = Shard{Server: s.Server, Holds: s.Holds, CPUSeconds: -1}
		for _, n := range cc.PerMaster[s.Server].Calls {
			out[i].Commands += n
		}
		all += out[i].Commands
		if r.Servers != nil {
			if c, ok := r.Servers.PerMaster[s.Server]; ok {
				out[i].CPUSeconds = c
			}
		}
	}
	for i := range out {
		shardCost(&out[i], cc.PerMaster[out[i].Server].Usec, all, r.Outcomes.Acquired)
	}
	markBusiest(out, cc)
	return out
}

// shardCost sets s's locks (its share of all commands of cycles) and its
// cost and capacity per lock.
func shardCost(s *Shard, usec, all, cycles int64) {
	if all <= 0 || s.Commands <= 0 {
		return
	}
	s.Locks = float64(cycles) * float64(s.Commands) / float64(all)
	if s.Locks <= 0 {
		return
	}
	s.CommandMicrosLock = float64(usec) / s.Locks
	s.Capacity = perSecond(s.CommandMicrosLock)
	if s.CPUSeconds >= 0 {
		s.CPUMicrosLock = s.CPUSeconds * 1e6 / s.Locks
		s.Capacity = perSecond(s.CPUMicrosLock)
	}
}

// markBusiest marks the shard that spent the most CPU, or command time
// when a CPU is unknown.
func markBusiest(out []Shard, cc *CommandCost) {
	best, most := -1, -1.0
	for i, s := range out {
		v := s.CPUSeconds
		if v < 0 || anyCPUUnknown(out) {
			v = float64(cc.PerMaster[s.Server].Usec)
		}
		if v > most {
			best, most = i, v
		}
	}
	if best >= 0 {
		out[best].Busiest = true
	}
}

func anyCPUUnknown(out []Shard) bool {
	for _, s := range out {
		if s.CPUSeconds < 0 {
			return true
		}
	}
	return false
}

// ShardCapacity is one shard's locks/s at the costliest shard's cost per
// lock (the lowest Capacity): what a key's rate is bounded by, and what
// a plan in shards counts per shard. 0 when none is known.
func ShardCapacity(shards []Shard) float64 {
	low := 0.0
	for _, s := range shards {
		if s.Capacity > 0 && (low == 0 || s.Capacity < low) {
			low = s.Capacity
		}
	}
	return low
}

// printShards is a sharded cell's shard table and what its capacity is
// in shards.
func printShards(w io.Writer, r *Run) {
	if len(r.Shards) == 0 {
		return
	}
	fmt.Fprintf(w, "shards: %d (a lock lives on one shard)\n", len(r.Shards))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "shard\tholds\tlock commands\tlocks (by commands)\tCPU s\tCPU µs/lock\tone core: locks/s\t")
	for _, s := range r.Shards {
		cpu, perLock := "—", "—"
		if s.CPUSeconds >= 0 {
			cpu, perLock = fmt.Sprintf("%.2f", s.CPUSeconds), fmt.Sprintf("%.1f", s.CPUMicrosLock)
		}
		name := s.Server
		if s.Busiest {
			name = "(busiest) " + name
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%s\t%s\t%.0f\t\n", name, s.Holds, s.Commands, s.Locks, cpu, perLock, s.Capacity)
	}
	tw.Flush()
	if c := ShardCapacity(r.Shards); c > 0 {
		fmt.Fprintf(w, "capacity in shards: one shard's core sustains about %.0f locks/s (the costliest shard's CPU per lock): the most any one key takes, whatever the shard count; more shards add capacity across keys only%s\n",
			c, cellCapacityText(r))
	}
}

// cellCapacityText is the cell's own projection at its busiest shard: the
// rate of all its shards together at this spread of keys.
func cellCapacityText(r *Run) string {
	cc := r.CommandCost
	rate := cc.ProjectedRateCPU
	if rate <= 0 {
		rate = cc.ProjectedRate
	}
	if rate <= 0 {
		return ""
	}
	return fmt.Sprintf("; these %d shards together about %.0f cycles/s at this spread of keys (until the busiest shard's core is full)", len(r.Shards), rate)
}
