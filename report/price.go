package report

import (
	"fmt"
	"slices"
	"strings"

	"lockbench/plan"
	"lockbench/report/plots"
	"lockbench/results"
)

// PriceRow is one cell of the price and safety table: what its topology
// costs (latency, rate, the servers' CPU) and how safe it was, each price
// also as a ratio to the single-master cell with the same other settings
// (persistence and load) in the same run.
type PriceRow struct {
	Index        int    `json:"index"`
	Label        string `json:"label"`
	Topology     string `json:"topology"`
	Masters      int    `json:"masters"`
	Replicas     int    `json:"replicas,omitempty"`
	Sentinels    int    `json:"sentinels,omitempty"`
	WaitReplicas int    `json:"wait_replicas"`
	Mode         string `json:"mode,omitempty"`
	Persistence  string `json:"persistence"`
	Load         string `json:"load"`
	// Server names a lock service's server ("member", "server"); "" for
	// Redis' masters.
	Server string `json:"server,omitempty"`
	// AcquireP50/P99 in µs; ServerCPUPerCycle is every server of the
	// topology (replicas and Sentinels too, when they were read).
	AcquireP50        float64 `json:"acquire_p50_us"`
	AcquireP99        float64 `json:"acquire_p99_us"`
	CyclesPerSec      float64 `json:"cycles_per_sec"`
	ServerCPUPerCycle float64 `json:"server_cpu_us_per_cycle,omitempty"`
	// Single is the index of the cell the ratios are to; nil (and no
	// ratios) when the run has no single cell with these other settings.
	Single *int        `json:"single_cell,omitempty"`
	Ratios *PriceRatio `json:"ratios_to_single,omitempty"`
	// Safety: the probe's violations (NotJudged says why none could be
	// seen), few acks, and a fault cell's lost updates and verdict.
	Violations  int64  `json:"violations"`
	NotJudged   string `json:"not_judged,omitempty"`
	Unconfirmed int64  `json:"few_acks,omitempty"`
	LostUpdates *int64 `json:"lost_updates,omitempty"`
	Verdict     string `json:"verdict,omitempty"`
	// labels are its topology's own names for it (plan.Labeler).
	labels plan.Labels
}

// PriceRatio is a cell's price over its single-master twin's.
type PriceRatio struct {
	AcquireP50        float64 `json:"acquire_p50"`
	AcquireP99        float64 `json:"acquire_p99"`
	CyclesPerSec      float64 `json:"cycles_per_sec"`
	ServerCPUPerCycle float64 `json:"server_cpu_us_per_cycle,omitempty"`
}

// topologyOf is a cell's topology as recorded (older results: the
// default).
func topologyOf(s settings) string {
	if s.Topology == "" {
		return plan.DefaultTopology
	}
	return s.Topology
}

// labelsOf are c's topology's names for it.
func labelsOf(c *cell) plan.Labels {
	var rec results.Settings
	if c.Run.Config != nil {
		rec = c.Run.Config.Settings
	}
	return plan.LabelsOf(topologyOf(c.Set), rec, c.Set.N)
}

// priceKey is what a cell shares with its single-master twin: every
// setting of the load and the servers' persistence, none of the topology.
func priceKey(s settings) string { return loadKey(s.Persistence, s.TTL, s) }

// classKey is priceKey with the persistence's fsync class in its place
// and no TTL (a lease means something else to each service, and
// PostgreSQL's lock has none): the twin of another service's cell.
func classKey(s settings) string { return loadKey(FsyncClass(s.Persistence), "", s) }

func loadKey(persistence, ttl string, s settings) string {
	return fmt.Sprintf("%s|%s|%d|%g|%g|%s|%s|%s", persistence, s.Load, s.Workers, s.Rate, s.Keys, s.Distribution, ttl, s.Hold)
}

// persistenceClasses group persistence modes across services by whether
// every write is fsynced before it is acknowledged: Redis' aof-always with
// etcd's default; Redis' none, aof-no and aof-everysec with etcd's
// no-fsync and PostgreSQL's advisory locks (in memory, no WAL). "" (the
// server's own) is its own class. ofReference: a mode the reference
// (topology single) takes, so a cell at it has its own mode's twin and is
// never compared across modes of one class.
var persistenceClasses = map[string]struct {
	class       string
	ofReference bool
}{
	"aof-always": {"fsync per write", true}, "fsync": {"fsync per write", false},
	"none": {"no fsync per write", true}, "aof-no": {"no fsync per write", true}, "aof-everysec": {"no fsync per write", true},
	"no-fsync": {"no fsync per write", false}, "not applicable": {"no fsync per write", false}, // an advisory lock writes no WAL
}

// FsyncClass is persistence mode p's class (persistenceClasses; an
// unknown mode is its own).
func FsyncClass(p string) string {
	if c, ok := persistenceClasses[p]; ok {
		return c.class
	}
	return p
}

// priceRows are the price and safety table: none unless the cells differ
// in topology.
func priceRows(cells []*cell, sums []CellSummary) []PriceRow {
	topologies := map[string]bool{}
	for _, c := range cells {
		topologies[topologyOf(c.Set)] = true
	}
	if len(topologies) < 2 {
		return nil
	}
	single := map[string]int{} // price key (and class key) → index into cells of its single cell
	for i, c := range cells {
		if !labelsOf(c).Reference || sums[i].Acquire.Count == 0 {
			continue
		}
		for _, k := range []string{priceKey(c.Set), classKey(c.Set)} {
			if _, seen := single[k]; !seen {
				single[k] = i
			}
		}
	}
	rows := make([]PriceRow, len(cells))
	for i, c := range cells {
		rows[i] = priceRow(c, sums[i])
		j, ok := single[priceKey(c.Set)]
		if !ok && !persistenceClasses[c.Set.Persistence].ofReference { // the reference's modes keep their own mode's twin
			j, ok = single[classKey(c.Set)]
		}
		if ok {
			idx := sums[j].Index
			rows[i].Single = &idx
			rows[i].Ratios = priceRatio(rows[i], priceRow(cells[j], sums[j]))
		}
	}
	return rows
}

// priceRow is one cell's prices and safety figures.
func priceRow(c *cell, cs CellSummary) PriceRow {
	s := c.Set
	r := PriceRow{Index: cs.Index, Label: cs.Label, Topology: topologyOf(s), Masters: s.N, Replicas: s.Replicas,
		Sentinels: s.Sentinels, WaitReplicas: s.WaitReplicas, Persistence: orServers(s.Persistence), Load: cellLoadText(cs),
		AcquireP50: cs.Acquire.P50, AcquireP99: cs.Acquire.P99, CyclesPerSec: cs.CyclesPerSec,
		Violations: cs.Violations, NotJudged: cs.Safety.NotJudged, Unconfirmed: cs.Unconfirmed, Verdict: cs.Safety.Verdict, labels: labelsOf(c)}
	r.Mode = r.labels.Mode
	if cfg := c.Run.Config; cfg != nil && cfg.Service != nil {
		r.Server = "server"
		if w := strings.Fields(cfg.Service.Server); len(w) > 0 {
			r.Server = w[0] // "member", "server (postmaster and backends)": the noun
		}
	}
	if sv := c.Run.Servers; sv != nil {
		r.ServerCPUPerCycle = results.FiniteOr0(sv.TopologyMicrosCycle())
	}
	if cs.Safety.ResourceChecked {
		lost := cs.Safety.DataLost()
		r.LostUpdates = &lost
	}
	return r
}

func orServers(p string) string {
	if p == "" {
		return "server's"
	}
	return p
}

// priceRatio is r's prices over ref's; a price ref lacks has ratio 0.
func priceRatio(r, ref PriceRow) *PriceRatio {
	div := func(a, b float64) float64 {
		if a <= 0 || b <= 0 {
			return 0
		}
		return a / b
	}
	return &PriceRatio{AcquireP50: div(r.AcquireP50, ref.AcquireP50), AcquireP99: div(r.AcquireP99, ref.AcquireP99),
		CyclesPerSec: div(r.CyclesPerSec, ref.CyclesPerSec), ServerCPUPerCycle: div(r.ServerCPUPerCycle, ref.ServerCPUPerCycle)}
}

// ServersText is what the cell ran on: "5 masters", "3 members", or its
// topology's own words ("1 master + 2 replicas, 3 Sentinels").
func (r PriceRow) ServersText() string {
	switch {
	case r.labels.Servers != "":
		return r.labels.Servers
	case r.Server != "" && r.Masters == 1:
		return "1 " + r.Server
	case r.Server != "":
		return fmt.Sprintf("%d %ss", r.Masters, r.Server)
	case r.Masters == 1:
		return "1 master"
	}
	return fmt.Sprintf("%d masters", r.Masters)
}

// TopologyText names the topology with what sets it apart, in its own
// words ("redlock (multiplexed)", "replicated, WAIT 1"), else by name.
func (r PriceRow) TopologyText() string {
	if r.labels.Topology != "" {
		return r.labels.Topology
	}
	return r.Topology
}

// shortText names the topology in two short lines, for a plot's axis.
func (r PriceRow) shortText() string {
	switch {
	case r.labels.Short != "":
		return r.labels.Short
	case r.Server != "":
		return fmt.Sprintf("%s N=%d\n%s", r.Topology, r.Masters, r.Persistence)
	}
	return r.Topology
}

// priceView is a price row as the pages show it.
type priceView struct {
	PriceRow
	TopologyT, ServersT, P50, P99, Cycles, CPU string
	P50R, P99R, CyclesR, CPUR                  string
	ViolationsT, LostT, VerdictT               string
	Bad                                        bool
}

func makePriceView(r PriceRow) priceView {
	v := priceView{PriceRow: r, TopologyT: r.TopologyText(), ServersT: r.ServersText(),
		P50: ms(r.AcquireP50), P99: ms(r.AcquireP99), Cycles: results.Rate(r.CyclesPerSec), CPU: "—",
		P50R: "—", P99R: "—", CyclesR: "—", CPUR: "—", ViolationsT: results.Count(r.Violations), LostT: "—", VerdictT: "—",
		Bad: r.Violations > 0}
	if r.ServerCPUPerCycle > 0 {
		v.CPU = results.Sig3(r.ServerCPUPerCycle)
	}
	if q := r.Ratios; q != nil {
		v.P50R, v.P99R, v.CyclesR, v.CPUR = ratioText(q.AcquireP50), ratioText(q.AcquireP99), ratioText(q.CyclesPerSec), ratioText(q.ServerCPUPerCycle)
	}
	if r.NotJudged != "" {
		v.ViolationsT = "not judged (" + r.NotJudged + ")"
	}
	if r.LostUpdates != nil {
		v.LostT = results.Count(*r.LostUpdates)
		v.Bad = v.Bad || *r.LostUpdates > 0
	}
	if r.Verdict != "" {
		v.VerdictT = r.Verdict
	}
	return v
}

// ratioText is "1.85×"; "—" for none.
func ratioText(x float64) string {
	if x <= 0 {
		return "—"
	}
	return results.Sig3(x) + "×"
}

// priceNote says what the price table's ratios are to, for both pages.
const priceNote = "Each topology's price: acquire latency, lock cycles per second and every server's CPU per cycle (a replicated set's replicas and Sentinels included), and each as a ratio to the single-master cell with the same persistence and load, measured in the same run (a lock service's cell: to the single master of the same load whose persistence fsyncs every write or not as it does — aof-always with a service's fsync, none/aof-no/aof-everysec with its no-fsync; — : no such cell). Safety: the probe's violations (two holders of one key within their validity windows), acquires that failed because fewer replicas acknowledged the grant than the client asked for (few acks), and a fault cell's lost updates and verdict."

// priceFigure draws acquire p50 and p99 per topology: one group of bars
// per topology, one pair of bars per other setting (persistence, load).
func priceFigure(rows []PriceRow) *figure {
	if len(rows) == 0 {
		return nil
	}
	loads := map[string]bool{}
	for _, r := range rows {
		loads[r.Load] = true
	}
	var groups, keys []string
	at := map[[2]string]PriceRow{}
	for _, r := range rows {
		g, k := r.shortText(), r.Persistence
		if len(loads) > 1 {
			k += " · " + r.Load
		}
		if r.AcquireP50 <= 0 {
			continue
		}
		if !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
		at[[2]string{g, k}] = r
	}
	if len(groups) < 2 {
		return nil
	}
	bars := &plots.Bars{Groups: groups}
	var all []float64
	for ki, k := range keys {
		p50 := plots.BarSet{Label: legendLabel(k + " p50"), Color: ki, Light: true}
		p99 := plots.BarSet{Label: legendLabel(k + " p99"), Color: ki}
		for _, g := range groups {
			r := at[[2]string{g, k}] // a topology without this setting: a zero bar
			p50.Values, p99.Values = append(p50.Values, r.AcquireP50/1000), append(p99.Values, r.AcquireP99/1000)
		}
		all = append(append(all, p50.Values...), p99.Values...)
		bars.Sets = append(bars.Sets, p50, p99)
	}
	p := &plots.Panel{X: plots.Axis{Label: "topology"}, Y: plots.Axis{Label: "acquire latency (ms)"}, Bars: bars}
	// A topology without a setting's cell has a zero bar, which a log axis
	// cannot draw.
	p.Y.Log = !slices.Contains(all, 0) && plots.SpansDecades(all...)
	w := max(760, 150*float64(len(groups)))
	return &figure{
		Name:    "topology-latency",
		Title:   "Acquire latency per topology",
		Caption: "Acquire latency p50 (light) and p99 (dark) in ms of each topology (Redlock over N masters, one master, a replicated master behind Sentinel with WAIT K), one pair of bars per persistence (and load, when it differs)" + logNote(p.Y.Log) + ". The price and safety table gives the same figures as ratios to the single master.",
		Fig:     &plots.Figure{Title: "Acquire latency per topology", Grid: [][]*plots.Panel{{p}}, Width: w, Height: 540},
		Cell:    -1,
	}
}

func logNote(logY bool) string {
	if logY {
		return " (log scale: they span decades; drawn as dots)"
	}
	return ""
}
