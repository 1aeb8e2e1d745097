package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
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
}

// loadSkip are the axes a load sweep steps through.
var loadSkip = map[string]bool{"workers": true, "rate": true}

func capacity(cells []*cell, sums []CellSummary, slo SLO, target float64) []Capacity {
	byIndex := map[*cell]CellSummary{}
	for i, c := range cells {
		byIndex[c] = sums[i]
	}
	var out []Capacity
	for _, g := range groupBy(cells, loadSkip) {
		steps := make([]CellSummary, len(g.Cells))
		for i, c := range g.Cells {
			steps[i] = byIndex[c]
		}
		sort.SliceStable(steps, func(i, j int) bool { return loadOf(steps[i]) < loadOf(steps[j]) })
		cp := Capacity{Config: g.Label, Load: steps[0].Load, Cells: len(steps), TargetRate: target}
		var knee *CellSummary
		for i := range steps {
			if steps[i].MeetsSLO && (knee == nil || steps[i].CyclesPerSec > knee.CyclesPerSec) {
				knee = &steps[i]
			}
		}
		sloText := fmt.Sprintf("acquire p99 ≤ %s and success ≥ %s", FormatMicros(slo.AcquireP99Micros), pct(slo.MinSuccess))
		if knee == nil {
			cp.Note = fmt.Sprintf("no cell met the SLO (%s): no capacity can be quoted for this configuration", sloText)
			out = append(out, cp)
			continue
		}
		cp.MaxRate = knee.CyclesPerSec
		cp.KneeCell = knee.Label
		cp.KneeLoad = loadOf(*knee)
		var next *CellSummary // the first heavier step that broke the SLO
		for i := range steps {
			if loadOf(steps[i]) > cp.KneeLoad && !steps[i].MeetsSLO {
				cp.KneeFound = true
				if next == nil {
					next = &steps[i]
				}
			}
		}
		cp.ClientBound = knee.ClientBound
		if target > 0 && cp.MaxRate > 0 {
			h := (cp.MaxRate/target - 1) * 100
			n := int(math.Ceil(target / cp.MaxRate))
			cp.HeadroomPct, cp.Groups = &h, &n
		}
		switch {
		case cp.ClientBound:
			cp.Note = fmt.Sprintf("client-bound: the load generator was saturated (client CPU %s of the machine) at this rate, so it measures the client, not Redis; the masters may sustain more — rerun with more client machines", pct0(knee.ClientCPUShare))
		case !cp.KneeFound && len(steps) > 1:
			cp.Note = "every step met the SLO: the highest step is a lower bound, the knee lies beyond the loads tried"
		case !cp.KneeFound:
			cp.Note = "a single load step: a lower bound, not a knee"
		case next.ClientBound:
			cp.Note = fmt.Sprintf("client-bound beyond the knee: at %s the load generator ran out of CPU (%s of the machine); more client machines may move the knee", loadText(*next), pct0(next.ClientCPUShare))
		case next.Acquire.P99 <= slo.AcquireP99Micros:
			cp.Note = fmt.Sprintf("contention-bound: at %s the success ratio fell to %s (SLO %s) while p99 stayed within %s: more attempts found the lock taken", loadText(*next), pct(next.SuccessRatio), pct(slo.MinSuccess), FormatMicros(slo.AcquireP99Micros))
		default:
			cp.Note = fmt.Sprintf("server-bound (or network-bound): at %s acquire p99 rose to %s (SLO %s) while the client had spare CPU (%s)", loadText(*next), FormatMicros(next.Acquire.P99), FormatMicros(slo.AcquireP99Micros), pct0(next.ClientCPUShare))
			if next.ServerBusiestShare >= 0.8 {
				cp.Note += fmt.Sprintf("; the busiest master used %s of a core", pct0(next.ServerBusiestShare))
			}
		}
		out = append(out, cp)
	}
	return out
}

func loadText(s CellSummary) string {
	if s.Load == "open" {
		return rate(s.Rate) + " offered/s"
	}
	return fmt.Sprintf("%d workers", s.Workers)
}

func loadOf(s CellSummary) float64 {
	if s.Load == "open" {
		return s.Rate
	}
	return float64(s.Workers)
}

// pct0 writes a CPU share as a whole percentage: finer is noise.
func pct0(r float64) string { return strconv.FormatFloat(math.Round(r*100), 'f', 0, 64) + "%" }

// pct writes a ratio as a percentage with at most two decimals.
func pct(r float64) string {
	return strconv.FormatFloat(math.Round(r*10000)/100, 'f', -1, 64) + "%"
}
