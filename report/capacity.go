package report

import (
	"fmt"
	"lockbench/results"
	"math"
	"sort"
)

// Capacity is the capacity plan of one configuration: cells that differ
// only in load (workers or offered rate).
type Capacity struct {
	Config string `json:"config"`
	Load   string `json:"load"` // closed or open
	Cells  int    `json:"cells"`
	// MaxRate is the highest cycles/s among cells that met the SLO; 0
	// when none did.
	MaxRate   float64 `json:"max_rate"`
	KneeCell  string  `json:"knee_cell,omitempty"`
	KneeLoad  float64 `json:"knee_load,omitempty"` // workers or offered rate of that cell
	KneeFound bool    `json:"knee_found"`          // a heavier step broke the SLO
	// HeadroomPct is MaxRate/TargetRate − 1 in %; Groups is how many
	// independent N-master lock groups the target needs, since every
	// master of one Redlock set sees every lock. Both absent without a
	// target or without a rate.
	TargetRate  float64  `json:"target_rate,omitempty"`
	HeadroomPct *float64 `json:"headroom_pct,omitempty"`
	Groups      *int     `json:"lock_groups,omitempty"`
	ClientBound bool     `json:"client_bound"`
	Note        string   `json:"note"`

	// Limit is what limited the knee: the verdict of the first heavier
	// step that broke the SLO, or of the knee cell when none did.
	// ServerCapacity: the knee is the masters' capacity (limit server or
	// latency); LowerBound: the masters may sustain more (limit generator,
	// machine, or no step broke the SLO).
	Limit          *results.Limit `json:"limit,omitempty"`
	ServerCapacity bool           `json:"redis_capacity"`
	LowerBound     bool           `json:"lower_bound"`
	// ProjectedRate is the server-cost projection: the rate one core per
	// master sustains at the costliest master's CPU per cycle (ProjectionBasis
	// "cpu"), or at its command time alone ("commands"), in the step with
	// the highest measured rate (the largest batches).
	ProjectedRate   float64 `json:"projected_rate,omitempty"`
	ProjectionBasis string  `json:"projection_basis,omitempty"`
	// GroupsFrom says what Groups and HeadroomPct were computed from:
	// "knee" (the servers' capacity) or "projection".
	GroupsFrom string `json:"lock_groups_from,omitempty"`

	// A sharded configuration's plan (its results have shards: a lock
	// lives on one), in place of lock groups: ShardCapacity is one
	// shard's locks/s and Shards how many target needs at it. ShardsFrom:
	// "knee" (the knee's rate times its busiest shard's share of the
	// locks, when the knee is the servers' capacity) or "projection" (one
	// core of the costliest shard per lock, results.ShardCapacity). A hot
	// key lives on one shard: its rate is bounded by ShardCapacity
	// whatever the shard count.
	ShardCapacity float64 `json:"shard_capacity,omitempty"`
	Shards        *int    `json:"shards_needed,omitempty"`
	ShardsFrom    string  `json:"shards_from,omitempty"`
}

// loadSkip are the axes a load sweep steps through.
var loadSkip = map[string]bool{"workers": true, "rate": true}

// capacity plans every configuration: the cells that differ only in load.
func capacity(cells []*cell, sums []CellSummary, slo SLO, target float64) []Capacity {
	byCell := summariesByCell(cells, sums)
	var out []Capacity
	for _, g := range groupBy(cells, loadSkip) {
		steps := make([]CellSummary, len(g.Cells))
		for i, c := range g.Cells {
			steps[i] = byCell[c]
		}
		sort.SliceStable(steps, func(i, j int) bool { return loadOf(steps[i]) < loadOf(steps[j]) })
		out = append(out, planCapacity(g.Label, steps, slo, target))
	}
	return out
}

// planCapacity finds the knee of one configuration's load steps (lightest
// first) and what limited it, and plans lock groups for target.
func planCapacity(config string, steps []CellSummary, slo SLO, target float64) Capacity {
	cp := Capacity{Config: config, Load: steps[0].Load, Cells: len(steps), TargetRate: target}
	cp.ProjectedRate, cp.ProjectionBasis = projection(busiestStep(steps).CommandCost)
	knee := kneeStep(steps)
	if knee == nil {
		cp.Limit = steps[0].Limit
		sloText := fmt.Sprintf("acquire p99 ≤ %s and success ≥ %s", results.FormatMicros(slo.AcquireP99Micros), results.Pct(slo.MinSuccess))
		cp.Note = fmt.Sprintf("no cell met the SLO (%s): no capacity can be quoted for this configuration", sloText)
		if cp.Limit != nil {
			cp.Note += fmt.Sprintf("; the lightest step was limited by %s (%s)", cp.Limit.By, cp.Limit.Evidence)
		}
		return cp
	}
	cp.MaxRate, cp.KneeCell, cp.KneeLoad = knee.CyclesPerSec, knee.Label, loadOf(*knee)
	next := firstBroken(steps, cp.KneeLoad)
	cp.KneeFound = next != nil
	cp.ClientBound = knee.ClientBound
	cp.Limit = kneeLimit(knee, next)
	cp.ServerCapacity = next != nil && cp.Limit != nil && (cp.Limit.By == results.LimitServer || cp.Limit.By == results.LimitLatency)
	cp.LowerBound = next == nil || (cp.Limit != nil && (cp.Limit.By == results.LimitGenerator || cp.Limit.By == results.LimitMachine))
	cp.Note = capacityNote(cp, steps, next, slo)
	planGroups(&cp, target)
	planShards(&cp, knee, busiestStep(steps), target)
	return cp
}

// planShards plans a sharded configuration in shards for target: one
// shard's capacity from the knee when it is the servers' capacity, else
// from the busiest step's costliest shard; nothing for one without shards.
func planShards(cp *Capacity, knee *CellSummary, busiest CellSummary, target float64) {
	switch {
	case cp.ServerCapacity && len(knee.Shards) > 0:
		cp.ShardCapacity, cp.ShardsFrom = cp.MaxRate*busiestShare(knee.Shards), "knee"
	case len(busiest.Shards) > 0:
		cp.ShardCapacity, cp.ShardsFrom = results.ShardCapacity(busiest.Shards), "projection"
	}
	if cp.ShardCapacity <= 0 {
		cp.ShardsFrom = ""
		return
	}
	cp.Groups, cp.GroupsFrom = nil, "" // a lock lives on one shard: more shards, not more groups
	cp.Note += fmt.Sprintf("; in shards: one shard sustains about %s locks/s (from the %s), and a hot key lives on one shard: one key's rate is bounded by that, whatever the shard count", results.Rate(cp.ShardCapacity), cp.ShardsFrom)
	if target > 0 {
		n := int(math.Ceil(target / cp.ShardCapacity))
		cp.Shards = &n
	}
}

// busiestShare is the busiest shard's share of the shards' locks: the
// part of a cell's rate its one core served.
func busiestShare(shards []results.Shard) float64 {
	most, all := 0.0, 0.0
	for _, s := range shards {
		most, all = max(most, s.Locks), all+s.Locks
	}
	if all <= 0 {
		return 0
	}
	return most / all
}

// kneeStep is the step with the highest throughput that met the SLO, nil
// when none did.
func kneeStep(steps []CellSummary) *CellSummary {
	var knee *CellSummary
	for i := range steps {
		if steps[i].MeetsSLO && (knee == nil || steps[i].CyclesPerSec > knee.CyclesPerSec) {
			knee = &steps[i]
		}
	}
	return knee
}

// firstBroken is the first step heavier than the knee's load that broke
// the SLO, nil when none did.
func firstBroken(steps []CellSummary, kneeLoad float64) *CellSummary {
	for i := range steps {
		if loadOf(steps[i]) > kneeLoad && !steps[i].MeetsSLO {
			return &steps[i]
		}
	}
	return nil
}

// kneeLimit is what limited the knee: the verdict of the step that broke
// the SLO (next), or of the knee when none did.
func kneeLimit(knee, next *CellSummary) *results.Limit {
	if next == nil {
		return knee.Limit
	}
	l := next.Limit
	if l != nil && l.By == results.LimitNone {
		// Served, yet over the SLO with CPU to spare: the wait itself.
		l = &results.Limit{By: results.LimitLatency, Evidence: fmt.Sprintf("acquire p99 %s over the SLO while the load was served: %s", results.FormatMicros(next.Acquire.P99), l.Evidence)}
	}
	return l
}

// capacityNote says in words what the knee is and what limited it.
func capacityNote(cp Capacity, steps []CellSummary, next *CellSummary, slo SLO) string {
	by, ev := "unknown", "no verdict in the results"
	if cp.Limit != nil {
		by, ev = cp.Limit.By, cp.Limit.Evidence
	}
	proj := ""
	if cp.ProjectedRate > 0 {
		proj = fmt.Sprintf("; the masters' own cost projects %s cycles/s per lock group", results.Rate(cp.ProjectedRate))
		if n := len(busiestStep(steps).Shards); n > 0 {
			proj = fmt.Sprintf("; the shards' own cost projects %s cycles/s for these %d shards (the busiest shard's core full)", results.Rate(cp.ProjectedRate), n)
		}
	}
	switch {
	case next == nil && len(steps) > 1:
		return fmt.Sprintf("lower bound: every step met the SLO, the knee lies beyond the loads tried (heaviest step limited by %s: %s)%s", by, ev, proj)
	case next == nil:
		return fmt.Sprintf("lower bound: a single load step, not a knee; it was limited by %s (%s)%s", limitPhrase(by), ev, proj)
	case cp.ServerCapacity:
		return fmt.Sprintf("server capacity: at %s acquire p99 was %s (SLO %s), limited by %s (%s)", loadText(*next), results.FormatMicros(next.Acquire.P99), results.FormatMicros(slo.AcquireP99Micros), by, ev)
	case cp.LowerBound:
		return fmt.Sprintf("lower bound: limited by %s at %s (%s)%s", limitPhrase(by), loadText(*next), ev, proj)
	case by == results.LimitContention:
		return fmt.Sprintf("contention-bound: at %s the success ratio fell to %s (SLO %s): %s; more lock groups do not help keys that are contended", loadText(*next), results.Pct(next.SuccessRatio), results.Pct(slo.MinSuccess), ev)
	}
	return fmt.Sprintf("at %s the SLO was missed (p99 %s, success %s), limited by %s (%s)", loadText(*next), results.FormatMicros(next.Acquire.P99), results.Pct(next.SuccessRatio), by, ev)
}

// limitPhrase names a verdict for a sentence.
func limitPhrase(by string) string {
	switch by {
	case results.LimitGenerator:
		return "the load generator"
	case results.LimitMachine:
		return "the shared machine"
	case results.LimitServer:
		return "the servers"
	case results.LimitNone:
		return "the load offered"
	}
	return by
}

// busiestStep is the step whose masters handled the most cycles/s: the
// cost per cycle falls as batches grow with load, so its cost is the
// nearest to what a master pays near its own limit.
func busiestStep(steps []CellSummary) CellSummary {
	b := steps[0]
	for _, s := range steps[1:] {
		if s.CommandCost != nil && (b.CommandCost == nil || s.CyclesPerSec > b.CyclesPerSec) {
			b = s
		}
	}
	return b
}

// projection is the server-cost projection of a cell: from the masters'
// whole CPU per cycle when known, else from command time alone.
func projection(rc *results.CommandCost) (float64, string) {
	switch {
	case rc == nil:
		return 0, ""
	case rc.ProjectedRateCPU > 0:
		return rc.ProjectedRateCPU, "cpu"
	case rc.ProjectedRate > 0:
		return rc.ProjectedRate, "commands"
	}
	return 0, ""
}

// planGroups sets headroom and lock groups for target: from the knee only
// when it is the masters' capacity, else from the server-cost projection,
// never from a knee the generator or the machine set.
func planGroups(cp *Capacity, target float64) {
	base := 0.0
	switch {
	case cp.ServerCapacity:
		base, cp.GroupsFrom = cp.MaxRate, "knee"
	case cp.ProjectedRate > 0:
		base, cp.GroupsFrom = cp.ProjectedRate, "projection"
	}
	if target <= 0 || base <= 0 {
		cp.GroupsFrom = ""
		return
	}
	h := (base/target - 1) * 100
	n := int(math.Ceil(target / base))
	cp.HeadroomPct, cp.Groups = &h, &n
}

func loadText(s CellSummary) string {
	if s.Load == "open" {
		return results.Rate(s.Rate) + " offered/s"
	}
	return fmt.Sprintf("%d workers", s.Workers)
}

func loadOf(s CellSummary) float64 {
	if s.Load == "open" {
		return s.Rate
	}
	return float64(s.Workers)
}
