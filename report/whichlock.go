package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"lockbench/internal/fsyncprobe"
	"lockbench/results"
)

// WhichLockFile is what lockbench choose writes beside its results: the
// designs and faults it crossed, the pairs no cell runs (with why, in
// words) and the needs the user stated. A results directory with one gets
// the which-lock matrix.
const WhichLockFile = "which-lock.json"

// WhichLockPlan is the content of WhichLockFile.
type WhichLockPlan struct {
	Designs []string `json:"designs"`
	Faults  []string `json:"faults"`
	// Defined: fault → its one-line definition.
	Defined map[string]string `json:"defined,omitempty"`
	// NotApplicable: design → fault → the part the design lacks, in
	// words; Unsupported: design → fault → why lockbench cannot make the
	// fault there yet.
	NotApplicable map[string]map[string]string `json:"not_applicable,omitempty"`
	Unsupported   map[string]map[string]string `json:"unsupported"`
	// JudgedOn: design → fault → how a need under a not-applicable pair
	// is judged: "immune" (met), or the fault whose cell stands for it.
	// Plans written before it get today's words (JudgedOnOf).
	JudgedOn map[string]map[string]string `json:"judged_on,omitempty"`
	// NotMeasured: design → fault → the program this machine lacked.
	NotMeasured map[string]map[string]string `json:"not_measured,omitempty"`
	// PriceCells: which benchmark cells price each design (capacity, one
	// common rate, a hot key); nil in older runs, whose Price names one
	// price cell per design (none: the quiet cell's figures stand in).
	PriceCells *PriceCells       `json:"price_cells,omitempty"`
	Price      map[string]string `json:"price,omitempty"`
	// Work is every fault cell's, PriceWork every price cell's (settings
	// as choose lays them over a design's).
	Work      string `json:"work,omitempty"`
	PriceWork string `json:"price_work,omitempty"`
	// Quick says what choose --quick gave up for speed ("": a full run).
	Quick string `json:"quick,omitempty"`
	Needs Needs  `json:"needs"`
	// MaxRate is the rate of broken runs a clean verdict must bound
	// (0: DefaultMaxRate): 0 of n is settled clean only when its 95%
	// upper bound is at or below it.
	MaxRate float64 `json:"max_rate,omitempty"`
	// Fsync is the disk's write+fsync latency, probed where the servers
	// keep their data as the run began (nil: not probed).
	Fsync *fsyncprobe.Result `json:"fsync_probe,omitempty"`
}

// PriceCell is the name of a design's price cell after its own
// (design.price).
const PriceCell = "price"

// States of a matrix cell.
const (
	stateMeasured      = "measured"
	stateNotJudged     = "not judged"
	stateNotExercised  = "not exercised"
	stateNotApplicable = "not applicable"
	stateUnsupported   = "not supported yet"
	stateNotMeasured   = "not measured"
)

// Outcome is one outcome of a cell over its judged runs: the median count
// and its range, and in how many of the runs it was broken (k of n).
type Outcome struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Broken int     `json:"broken_runs"`
	Runs   int     `json:"runs"`
	// Unit is what Broken and Runs count: "events" (the judged fault
	// events of every run, each judged apart) or "" (runs: results before
	// events were judged apart, and figures that are not per event).
	Unit string `json:"unit,omitempty"`
	// Lower and Upper bound the rate of broken runs (95%, exact); Settled
	// is "broken" (it happened), "clean" (none, Upper within the run's
	// max rate) or "" (not settled: more runs would tell).
	Lower    float64 `json:"rate_lower"`
	Upper    float64 `json:"rate_upper"`
	Settled  string  `json:"settled,omitempty"`
	measured bool
	maxRate  float64 // what Settled was judged at
}

// MaxRateAccepted is what --max-rate accepts.
const MaxRateAccepted = "a rate in (0, 1) such as 0.2: the 95% upper bound on how often a clean outcome would break, at or below which 0 of n is settled"

// p99SamplesShort ends the reason of a p99 on too few acquires (the
// page's unsettled answer looks for it).
const p99SamplesShort = "a p99 need is judged on"

// MinP99Samples is the fewest acquires a p99 need is judged on: 100
// beyond the 99th percentile, so that a few slow ones do not decide it.
const MinP99Samples = 10000

// notSettled begins the reason of a need no run broke but too few runs
// judged.
const notSettled = "not settled"

// DefaultMaxRate is --max-rate's default: a clean verdict bounds the rate
// of broken runs at 20% (0 of 14).
const DefaultMaxRate = 0.2

// settle bounds o's rate and says whether it is settled at maxRate.
func (o *Outcome) settle(maxRate float64) {
	if o == nil {
		return
	}
	o.Lower, o.Upper = RateInterval(o.Broken, o.Runs)
	o.Settled, o.maxRate = Settled(o.Broken, o.Runs, maxRate), maxRate
}

// rate is the plan's max rate, or the default.
func (p *WhichLockPlan) rate() float64 {
	if p.MaxRate > 0 {
		return p.MaxRate
	}
	return DefaultMaxRate
}

// Outage is a cell's unavailability over the runs that measured one (s).
type Outage struct {
	Median float64 `json:"median_s"`
	Min    float64 `json:"min_s"`
	Max    float64 `json:"max_s"`
	// ToEnd of Runs granted nothing from the fault to the cell's end.
	ToEnd int `json:"to_end_runs"`
	Runs  int `json:"runs"`
}

// MatrixCell is one design under one fault, over its repeats.
type MatrixCell struct {
	State string `json:"state"`
	Why   string `json:"why,omitempty"`
	// Overlap: exclusion broken; Lost: data lost; InPromise: exclusion
	// broken within what the lock promised (the second figure); nil: not
	// judged in any run.
	Overlap   *Outcome `json:"exclusion_broken,omitempty"`
	Lost      *Outcome `json:"data_lost,omitempty"`
	InPromise *Outcome `json:"exclusion_broken_in_promise,omitempty"`
	Down      *Outage  `json:"unavailable,omitempty"`
	// JudgedOn: a not-applicable cell's "immune" (it meets a need under
	// its fault) or the fault whose cell stands for it.
	JudgedOn string `json:"judged_on,omitempty"`
	// Unsettled: nothing broke, but too few runs to bound how often it
	// would (never coloured as safe).
	Unsettled bool `json:"unsettled,omitempty"`
	// Exercised: the holds the cell's faults exercised, over the runs
	// that counted them (nil: none did, as in runs before the count).
	Exercised *Outcome `json:"exercised_holds,omitempty"`
	// Past: guarded writes acknowledged after the last commit the promoted
	// node had, in the runs that counted them (nil: none did).
	Past    *Outcome `json:"writes_past_promoted,omitempty"`
	Repeats int      `json:"repeats,omitempty"`
	// Result is the cell's result file, relative to the results directory.
	Result string `json:"result,omitempty"`
	Cell   int    `json:"-"`
}

// MatrixRow is one design: its price and one cell per fault.
type MatrixRow struct {
	Design string `json:"design"`
	Fenced bool   `json:"fenced"`
	// Library is an external client's (choose --client), as its adapter
	// named it in hello (nil: lockbench's own client).
	Library *Library `json:"library,omitempty"`
	// The price, from its price cell (or, without one, its quiet cell);
	// Priced false: neither was measured, and every figure is unknown.
	Priced                 bool    `json:"priced"`
	PriceCell              bool    `json:"price_from_price_cell,omitempty"`
	CyclesPerSec           float64 `json:"cycles_per_sec,omitempty"`
	AcquireP50, AcquireP99 float64 `json:"-"`
	TimeToLockP99          float64 `json:"-"`
	ServerCPUPerLock       float64 `json:"server_cpu_us_per_lock,omitempty"`
	PriceResult            string  `json:"price_result,omitempty"`
	// P50/P99/TimeToLock are the figures in µs, for the JSON.
	P50        float64         `json:"acquire_p50_us,omitempty"`
	P99        float64         `json:"acquire_p99_us,omitempty"`
	TimeToLock float64         `json:"time_to_lock_p99_us,omitempty"`
	Capacity   *DesignCapacity `json:"capacity,omitempty"`
	// CommonServed is the cycles/s the common-rate cell served when it
	// fell short of the rate offered (0: it served it).
	CommonServed float64      `json:"common_rate_served,omitempty"`
	Hot          *HotKey      `json:"hot_key,omitempty"`
	Faults       []MatrixCell `json:"cells"`
	Meets        bool         `json:"meets"`
	// Reasons are every reason the row does not meet the needs.
	Reasons []string `json:"reasons,omitempty"`
	// MetBy: how a row that meets the needs met those no cell of its own
	// judged (immune, or on the fault standing in).
	MetBy []string `json:"met_by,omitempty"`
	// Persistence is the design's, as its cells ran it ("none",
	// "aof-always", "fsync", "not applicable" ...).
	Persistence string `json:"persistence,omitempty"`
	// Survived counts the faults under which the outcomes that count held
	// in every judged run (those the needs ask under the fault, else no
	// lost update: survival), of Judged faults measured (the quiet cell
	// not counted).
	Survived int `json:"faults_survived"`
	Judged   int `json:"faults_judged"`
	// LatencySamples are the acquires the p50 and p99 come from (the
	// common-rate cell's, its repeats pooled); P50Range and P99Range the
	// repeats' own figures' range (zero: one run).
	LatencySamples     int64      `json:"latency_samples,omitempty"`
	P50Range, P99Range [2]float64 `json:"-"`
	// P99CI is the p99 of the common-rate cell's repeats' acquires pooled
	// (their interval logs added) with its 95% order-statistic interval,
	// which a --p99 need is judged on (nil: no logs, or too few samples).
	P99CI *P99CI `json:"acquire_p99_ci,omitempty"`
	// commonRate: the latency figures are the common-rate cell's (a run
	// with PriceCells), not a price or quiet cell's.
	commonRate bool
}

// WhichLock is the matrix: designs by faults, price beside safety.
type WhichLock struct {
	Faults          []string          `json:"faults"`
	Defined         map[string]string `json:"defined,omitempty"`
	Rows            []MatrixRow       `json:"designs"`
	Needs           Needs             `json:"needs"`
	Work            string            `json:"work,omitempty"`
	PriceWork       string            `json:"price_work,omitempty"`
	Quick           string            `json:"quick,omitempty"`
	PriceCells      *PriceCells       `json:"price_cells,omitempty"`
	Run             RunInfo           `json:"run"`
	Recommend       []string          `json:"recommended"`
	MaxRate         float64           `json:"max_rate"`
	Outcomes        []OutcomeWords    `json:"outcome_definitions"`
	resultsRelative string
}

// RunInfo is where and when the matrix was measured, from the run's own
// manifest and cells (never the binary that renders it, which Rendered
// names apart).
type RunInfo struct {
	Started, Finished string
	Machine           string
	Lockbench, Go     string
	// Servers are every server version the cells ran on, each once
	// ("redis-server 7.0.15", "etcd 3.4.23", "zookeeper 3.8.0 on openjdk
	// 17.0.15", "PostgreSQL 15.18").
	Servers []string `json:"servers,omitempty"`
	// Fsync is the disk's write+fsync latency probed as the run began
	// ("": not probed, an older run).
	Fsync string `json:"fsync_probe,omitempty"`
	// Rendered is the lockbench that made the page, when it is not the
	// one that measured.
	Rendered string `json:"rendered_by,omitempty"`
}

// Version is the lockbench that renders (set by main; "": not known).
var Version = "dev"

// readWhichLockPlan reads dir's plan; nil without one.
func readWhichLockPlan(dir string) (*WhichLockPlan, error) {
	b, err := os.ReadFile(filepath.Join(dir, WhichLockFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var p WhichLockPlan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", WhichLockFile, err)
	}
	if p.JudgedOn == nil && JudgedOnOf != nil {
		p.JudgedOn = map[string]map[string]string{}
		for d, fs := range p.NotApplicable {
			for f := range fs {
				if on := JudgedOnOf(d, f); on != "" {
					noteJudged(p.JudgedOn, d, f, on)
				}
			}
		}
	}
	return &p, nil
}

// JudgedOnOf is how today's matrix judges a not-applicable pair (set by
// the package that plans the matrix; nil: such pairs fail a need).
var JudgedOnOf func(design, fault string) string

func noteJudged(m map[string]map[string]string, d, f, on string) {
	if m[d] == nil {
		m[d] = map[string]string{}
	}
	m[d][f] = on
}

// NeedsFor reads needs for the which-lock run in dir, against the faults
// it ran.
func NeedsFor(dir string, items []string, p99 time.Duration) (Needs, error) {
	p, err := readWhichLockPlan(dir)
	if err == nil && p == nil {
		err = fmt.Errorf("need: %s holds no which-lock run (%s, written by lockbench choose)", dir, WhichLockFile)
	}
	if err != nil {
		return Needs{}, err
	}
	return ParseNeeds(items, p99, p.Faults)
}

// IsWhichLockRun says dir holds a which-lock run (lockbench choose's plan
// beside its results).
func IsWhichLockRun(dir string) bool {
	p, err := readWhichLockPlan(dir)
	return err == nil && p != nil
}

// CellName is the name lockbench choose gives design d under fault f.
func CellName(d, f string) string { return d + "." + f }

// SplitCellName is CellName's design and fault (ok false: no fault named).
func SplitCellName(name string) (design, fault string, ok bool) {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return "", "", false
	}
	return name[:i], name[i+1:], true
}

// buildWhichLock fills the matrix from the cells named design.fault.
func buildWhichLock(p *WhichLockPlan, m results.Manifest, loaded []*cell, cells []CellSummary) *WhichLock {
	byName := map[string]int{}
	for i, c := range cells {
		byName[c.Label] = i
	}
	w := &WhichLock{Faults: p.Faults, Defined: p.Defined, Needs: p.Needs, Work: p.Work, PriceWork: p.PriceWork, Quick: p.Quick,
		PriceCells: p.PriceCells, Run: runInfo(m), Outcomes: outcomeWords, MaxRate: p.rate()}
	if v := serverVersions(loaded); len(v) > 0 {
		w.Run.Servers = v // the cells' own, else the manifest's
	}
	if p.Fsync != nil {
		w.Run.Fsync = p.Fsync.String()
	}
	find := func(name string) (CellSummary, *cell, bool) {
		i, ok := byName[name]
		if !ok {
			return CellSummary{}, nil, false
		}
		return cells[i], loaded[i], true
	}
	for _, d := range p.Designs {
		row := MatrixRow{Design: d, Fenced: Fenced(d), Persistence: persistenceOf(d, byName, p.Faults, loaded), Library: libraryOf(p, d, find)}
		if p.PriceCells != nil { // the price cells' alone: a figure they lack stays unknown
			row.PriceCell = true
			row.priceFromCells(p.PriceCells, find)
		} else {
			if i, ok := byName[CellName(d, "none")]; ok {
				row.price(cells[i], loaded[i])
			}
			if i, ok := byName[p.Price[d]]; ok {
				row.priceCell(cells[i], loaded[i])
			}
		}
		for _, f := range p.Faults {
			c := matrixCell(p, d, f, byName, cells, loaded)
			row.Faults = append(row.Faults, c)
		}
		row.Survived, row.Judged = survival(row, p.Faults, p.Needs)
		row.Reasons = p.Needs.judge(row, p.Faults)
		row.Meets = p.Needs.Any() && len(row.Reasons) == 0
		if row.Meets {
			row.MetBy = p.Needs.metBy(row, p.Faults)
		}
		if row.Meets {
			w.Recommend = append(w.Recommend, d)
		}
		w.Rows = append(w.Rows, row)
	}
	markOverlaps(w.Rows)
	return w
}

// serverVersions are the cells' server versions, each once, in order.
func serverVersions(loaded []*cell) []string {
	var out []string
	for _, l := range loaded {
		c := l.Run.Config
		if c == nil {
			continue
		}
		if v := c.ServerVersion; v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// persistenceOf is design d's persistence as its fault cells ran it.
func persistenceOf(d string, byName map[string]int, faults []string, loaded []*cell) string {
	for _, f := range faults {
		if i, ok := byName[CellName(d, f)]; ok && loaded[i].Run.Config != nil {
			return loaded[i].Run.Config.Persistence
		}
	}
	return ""
}

// Library is the library an external client's row ran.
type Library struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	Language string `json:"language,omitempty"`
}

// String is "node-redlock 4.2.0 (javascript)".
func (l Library) String() string {
	s := l.Name + " " + l.Version
	if l.Language != "" {
		s += " (" + l.Language + ")"
	}
	return s
}

// libraryOf is design d's external library as its cells recorded it: the
// first of its fault cells, then its price cells, that ran one (nil:
// none did, lockbench's own client).
func libraryOf(p *WhichLockPlan, d string, find func(string) (CellSummary, *cell, bool)) *Library {
	names := []string{p.Price[d]}
	for _, f := range p.Faults {
		names = append(names, CellName(d, f))
	}
	if pc := p.PriceCells; pc != nil {
		names = append(append(names, pc.Common[d], pc.Hot[d]), pc.Ladder[d]...)
	}
	for _, n := range names {
		if _, l, ok := find(n); n != "" && ok && l.Run.Config != nil && l.Run.Config.Adapter != nil {
			a := l.Run.Config.Adapter
			return &Library{Name: a.Library, Version: a.Version, Language: a.Language}
		}
	}
	return nil
}

func runInfo(m results.Manifest) RunInfo {
	r := RunInfo{Lockbench: m.LockbenchVersion, Go: m.GoVersion, Servers: m.ServerVersions,
		Machine: fmt.Sprintf("%d cores, %s/%s, %.0f GiB", m.Machine.Cores, m.Machine.OS, m.Machine.Arch, float64(m.Machine.MemoryBytes)/(1<<30))}
	if m.Machine.CPUModel != "" {
		r.Machine = m.Machine.CPUModel + ", " + r.Machine
	}
	if !m.StartedAt.IsZero() {
		r.Started = m.StartedAt.UTC().Format("2006-01-02 15:04 UTC")
	}
	if !m.FinishedAt.IsZero() {
		r.Finished = m.FinishedAt.UTC().Format("2006-01-02 15:04 UTC")
	}
	if Version != "" && Version != m.LockbenchVersion {
		r.Rendered = Version
	}
	return r
}

// price takes the row's price from its quiet cell.
func (r *MatrixRow) price(c CellSummary, l *cell) {
	r.Priced = c.Acquired > 0
	r.CyclesPerSec, r.AcquireP50, r.AcquireP99 = c.CyclesPerSec, c.Acquire.P50, c.Acquire.P99
	r.P50, r.P99, r.PriceResult = c.Acquire.P50, c.Acquire.P99, l.Info.File
	if c.Contention != nil {
		r.TimeToLockP99, r.TimeToLock = c.Contention.TimeToLock.P99, c.Contention.TimeToLock.P99
	}
	if sv := l.Run.Servers; sv != nil {
		r.ServerCPUPerLock = results.FiniteOr0(sv.TopologyMicrosCycle())
	}
}

// priceCell takes the row's price, but its time to lock, from its price
// cell: the lock alone, where the quiet cell's cycles/s is its holds'
// pace. Its time to lock stays the quiet cell's: 8 workers on 8 keys
// wait for each other there.
func (r *MatrixRow) priceCell(c CellSummary, l *cell) {
	ttl := r.TimeToLockP99
	r.price(c, l)
	r.TimeToLockP99, r.TimeToLock, r.PriceCell = ttl, ttl, true
}

// priceSource names the cell the row's price came from.
func (r MatrixRow) priceSource() string {
	if r.commonRate {
		return "common-rate cell"
	}
	if r.PriceCell {
		return "price cell"
	}
	return "quiet cell"
}

// matrixCell is design d under fault f: measured, judged nothing, not
// applicable or not supported (with why) or not measured.
func matrixCell(p *WhichLockPlan, d, f string, byName map[string]int, cells []CellSummary, loaded []*cell) MatrixCell {
	if why, ok := p.NotApplicable[d][f]; ok {
		return MatrixCell{State: stateNotApplicable, Why: why, JudgedOn: p.JudgedOn[d][f], Cell: -1}
	}
	if why, ok := p.Unsupported[d][f]; ok {
		return MatrixCell{State: stateUnsupported, Why: why, Cell: -1}
	}
	if why, ok := p.NotMeasured[d][f]; ok {
		return MatrixCell{State: stateNotMeasured, Why: why, Cell: -1}
	}
	i, ok := byName[CellName(d, f)]
	if !ok {
		return MatrixCell{State: stateNotMeasured, Why: "no result for this cell (interrupted, or left out with --design/--fault)", Cell: -1}
	}
	c := cells[i]
	m := MatrixCell{State: stateMeasured, Cell: c.Index, Result: loaded[i].Info.File}
	runs := loaded[i].Run.RepeatRuns()
	m.Repeats = len(runs)
	m.Overlap, m.Lost, m.InPromise, m.Down = outcomes(runs)
	m.Past = pastOutcome(runs)
	m.Exercised = exercisedOutcome(runs)
	for _, o := range []*Outcome{m.Overlap, m.Lost, m.InPromise} {
		o.settle(p.rate())
	}
	m.Unsettled = m.Overlap != nil && m.Lost != nil && m.Overlap.Broken+m.Lost.Broken == 0 && (m.Overlap.Settled == "" || m.Lost.Settled == "")
	switch {
	case c.Interrupted || c.Safety.Verdict == "interrupted":
		m.State, m.Why = stateNotJudged, "interrupted: its history is partial"
	case m.Overlap == nil && m.Down != nil && m.Down.ToEnd > 0:
		m.Why = c.Safety.NotJudged // measured: an outage to the end, nothing to judge safety on
	case m.Overlap == nil && c.Safety.Verdict == results.NotExercised:
		m.State, m.Why = stateNotExercised, c.Safety.NotJudged
	case m.Overlap == nil:
		m.State, m.Why = stateNotJudged, c.Safety.NotJudged
	}
	return m
}

// outcomes fold a cell's runs into its outcomes: exclusion broken, data
// lost, exclusion broken within the lock's promise, unavailability. Where
// the runs judged their fault events apart, each judged event is one
// trial (k of n events); else each judged run is.
func outcomes(runs []results.RepeatRun) (overlap, lost, inPromise *Outcome, down *Outage) {
	var ov, lo, ip, dn []float64
	var toEnd int
	byEvent := slices.ContainsFunc(runs, func(r results.RepeatRun) bool { return len(r.FaultEvents) > 0 })
	for _, r := range runs {
		if r.Interrupted {
			continue
		}
		if r.UnavailableSeconds > 0 {
			dn = append(dn, r.UnavailableSeconds)
			if r.UnavailableToEnd {
				toEnd++
			}
		}
		broke := r.Violations > 0 || r.LostUpdates > 0
		switch {
		case (r.Verdict == results.NotJudged || r.Verdict == results.NotExercised) && !broke:
			// judged nothing, and nothing broke (what broke is never hidden)
		case byEvent:
			for _, e := range r.FaultEvents {
				if e.Judged {
					ov, lo = append(ov, float64(e.Violations)), append(lo, float64(e.DataLost))
					if r.ViolationsInPromise != nil {
						ip = append(ip, float64(e.InPromise))
					}
				}
			}
		default:
			ov, lo = append(ov, float64(r.Violations)), append(lo, float64(r.LostUpdates))
			if r.ViolationsInPromise != nil {
				ip = append(ip, float64(*r.ViolationsInPromise))
			}
		}
	}
	if len(dn) > 0 {
		lo, hi := spanOf(dn)
		down = &Outage{Median: results.Median(dn), Min: lo, Max: hi, ToEnd: toEnd, Runs: len(dn)}
	}
	unit := map[bool]string{true: "events"}[byEvent]
	return outcomeIn(ov, unit), outcomeIn(lo, unit), outcomeIn(ip, unit), down
}

// Settles says whether a fault cell's runs settle both its safety
// outcomes (exclusion and data) at maxRate, and whether any run judged
// them at all (a cell that never met a holder is not settled, and more
// runs of it may not help).
func Settles(runs []results.RepeatRun, maxRate float64) (settled, judged bool) {
	ov, lo, _, _ := outcomes(runs)
	if ov == nil || lo == nil {
		return false, false
	}
	return Settled(ov.Broken, ov.Runs, maxRate) != "" && Settled(lo.Broken, lo.Runs, maxRate) != "", true
}

// exercisedOutcome folds the runs' exercised holds.
func exercisedOutcome(runs []results.RepeatRun) *Outcome {
	var xs []float64
	for _, r := range runs {
		if r.ExercisedHolds != nil && !r.Interrupted {
			xs = append(xs, float64(*r.ExercisedHolds))
		}
	}
	return outcomeOf(xs)
}

// pastOutcome folds the runs' writes past a promoted node.
func pastOutcome(runs []results.RepeatRun) *Outcome {
	var xs []float64
	for _, r := range runs {
		if r.WritesPast != nil && !r.Interrupted {
			xs = append(xs, float64(*r.WritesPast))
		}
	}
	return outcomeOf(xs)
}

// outcomeIn is outcomeOf counted in unit.
func outcomeIn(xs []float64, unit string) *Outcome {
	o := outcomeOf(xs)
	if o != nil {
		o.Unit = unit
	}
	return o
}

func outcomeOf(xs []float64) *Outcome {
	if len(xs) == 0 {
		return nil
	}
	lo, hi := spanOf(xs)
	o := &Outcome{Median: results.Median(xs), Min: lo, Max: hi, Runs: len(xs), measured: true}
	for _, x := range xs {
		if x > 0 {
			o.Broken++
		}
	}
	return o
}

func spanOf(xs []float64) (lo, hi float64) { return slices.Min(xs), slices.Max(xs) }

// judged says the cell judged exclusion and data (in some run).
func (c MatrixCell) judged() bool {
	return c.State == stateMeasured && c.Overlap != nil && c.Lost != nil
}

// judge gives every reason a design does not meet the needs (none: it
// meets them). Each outcome is read as the page shows it: broken in any
// run is broken.
func (n Needs) judge(r MatrixRow, faults []string) []string {
	var why []string
	if n.Fencing && !r.Fenced {
		why = append(why, "no fencing token or guarded write in this design")
	}
	if n.P99 > 0 {
		if w := p99Unmet(r, n.P99); w != "" {
			why = append(why, w)
		}
	}
	for _, need := range n.all() {
		i := slices.Index(faults, need.Fault)
		if i < 0 {
			why = append(why, fmt.Sprintf("%s: fault %s was not run", need.Words(), need.Fault))
			continue
		}
		if w := need.unmetOn(r, faults, i); w != "" {
			why = append(why, need.Words()+": "+w)
		}
	}
	return why
}

// p99Unmet says how row r falls short of an acquire p99 bound ("": it
// meets it). At the common rate it is judged on the pooled p99's 95%
// interval: met when its upper end is within the bound, failed when its
// lower end is over it, else not settled; never on fewer than
// MinP99Samples acquires.
func p99Unmet(r MatrixRow, bound time.Duration) string {
	us := float64(bound.Microseconds())
	ci := r.P99CI
	switch {
	case !r.Priced:
		return fmt.Sprintf("no acquire p99 to weigh: its %s was not measured", r.priceSource())
	case !r.commonRate:
		if r.AcquireP99 > us {
			return fmt.Sprintf("acquire p99 %s on its %s, over %s", results.FormatMicros(r.AcquireP99), r.priceSource(), bound)
		}
		return ""
	case r.LatencySamples < MinP99Samples:
		return fmt.Sprintf("acquire p99 %s: %s on %d acquires at the common rate, fewer than the %d "+p99SamplesShort+" (run longer cells or more repeats)",
			notSettled, results.FormatMicros(r.AcquireP99), r.LatencySamples, MinP99Samples)
	case ci == nil:
		return fmt.Sprintf("acquire p99 %s: the common-rate cell's interval logs were not found, so its p99 has no interval to judge %s on", notSettled, bound)
	case ci.Low > us:
		return fmt.Sprintf("acquire p99 %s on %d acquires at the common rate, over %s", ci.Text(), ci.N, bound)
	case ci.High > us:
		return fmt.Sprintf("acquire p99 %s: p99 %s on %d acquires straddles %s", notSettled, ci.Text(), ci.N, bound)
	}
	return ""
}

// unmetOn is need.unmet on row r's cell under faults[i], or, where that
// pair is not applicable, on what it is judged on: immune meets it, a
// standing-in fault's cell judges it (and the reason says so).
func (need Need) unmetOn(r MatrixRow, faults []string, i int) string {
	c := r.Faults[i]
	if c.State != stateNotApplicable || c.JudgedOn == "" {
		return need.unmet(c)
	}
	if c.JudgedOn == immune {
		return ""
	}
	j := slices.Index(faults, c.JudgedOn)
	if j < 0 {
		return fmt.Sprintf("%s, judged on %s, which was not run", c.State, c.JudgedOn)
	}
	if w := need.unmet(r.Faults[j]); w != "" {
		return fmt.Sprintf("%s here (%s), judged on %s: %s", c.State, c.Why, c.JudgedOn, w)
	}
	return ""
}

// immune is a not-applicable pair whose hazard cannot happen (plan.Immune).
const immune = "immune"

// metBy says how row r meets its needs where a cell did not judge them
// itself: immune, or judged on the fault standing in (none: "").
func (n Needs) metBy(r MatrixRow, faults []string) []string {
	var out []string
	for _, need := range n.all() {
		i := slices.Index(faults, need.Fault)
		if i < 0 || r.Faults[i].State != stateNotApplicable || r.Faults[i].JudgedOn == "" {
			continue
		}
		c := r.Faults[i]
		if c.JudgedOn == immune {
			out = append(out, fmt.Sprintf("%s: immune (%s)", need.Words(), c.Why))
		} else {
			out = append(out, fmt.Sprintf("%s: judged on %s (%s)", need.Words(), c.JudgedOn, c.Why))
		}
	}
	return out
}

// unmet says how cell c falls short of the need ("": it meets it).
func (need Need) unmet(c MatrixCell) string {
	if c.State != stateMeasured {
		if c.Why != "" {
			return fmt.Sprintf("%s (%s)", c.State, shortOr(c.Why, c.Repeats))
		}
		return c.State
	}
	switch need.Outcome {
	case NoOverlap, NoLostUpdate:
		o, what := c.Overlap, "exclusion broken"
		if need.Outcome == NoLostUpdate {
			o, what = c.Lost, "updates lost"
		}
		switch {
		case o == nil:
			return "not judged: " + c.DownText() + ", so nothing to judge safety on"
		case o.Broken > 0:
			return fmt.Sprintf("%s in %d of %d %s (up to %.0f)", what, o.Broken, o.Runs, plural(o.unit(), o.Runs), o.Max)
		case o.Settled == "":
			_, hi := RateInterval(0, o.Runs)
			return fmt.Sprintf("%s: %s in 0 of %d %s, which bounds its rate only at %.0f%%, above the max rate %s (0 of %d would settle it)",
				notSettled, what, o.Runs, plural(o.unit(), o.Runs), hi*100, pctText(maxRateOf(o)), RunsToSettle(maxRateOf(o)))
		}
		return ""
	}
	d := c.Down
	switch {
	case d == nil:
		return "no outage measured: the fault takes no server away"
	case d.ToEnd > 0:
		return d.neverText()
	case d.Max > need.Within.Seconds():
		return fmt.Sprintf("unavailable up to %.2f s, over %s", d.Max, need.Within)
	}
	return ""
}

// shortOr is the short form of a cell's reasons, or the reasons.
func shortOr(why string, repeats int) string {
	if s := shortWhy(why, repeats); s != "" {
		return s
	}
	return why
}

// unit is what o counts, in words: "events" or "runs".
func (o *Outcome) unit() string {
	if o.Unit != "" {
		return o.Unit
	}
	return "runs"
}

// maxRateOf is the max rate o was settled at.
func maxRateOf(o *Outcome) float64 { return o.maxRate }

func pctText(x float64) string { return fmt.Sprintf("%.0f%%", x*100) }
