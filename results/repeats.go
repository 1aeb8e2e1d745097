package results

import (
	"fmt"
	"time"
)

// Repeats is a cell measured several times: each repeat's figures and the
// spread of each figure across them. The cell's headline figures are the
// medians of these.
type Repeats struct {
	Count int         `json:"count"`
	Runs  []RepeatRun `json:"runs"`
	// Spread of each figure, keyed by figure name (see Figures).
	Spread map[string]Spread `json:"spread"`
	// FreshMasters: each repeat started on freshly started local masters
	// (persistence keeps state, an AOF file, that would otherwise grow
	// from one repeat to the next).
	FreshMasters bool `json:"fresh_masters,omitempty"`
	// A fault cell's repeats, each judged on its own: Judged of them
	// judged something (not interrupted, not "not judged"), and Unsafe of
	// those overlapped two holders or lost an update ("unsafe in Unsafe
	// of Judged runs").
	Judged int `json:"judged,omitempty"`
	Unsafe int `json:"unsafe,omitempty"`
}

// UnsafeText is "unsafe in 2 of 3 runs", "safe in 3 of 3 runs", or ""
// without judged fault repeats.
func (r *Repeats) UnsafeText() string {
	switch {
	case r == nil || r.Judged == 0:
		return ""
	case r.Unsafe == 0:
		return fmt.Sprintf("safe in %d of %d runs", r.Judged, r.Judged)
	}
	return fmt.Sprintf("unsafe in %d of %d runs", r.Unsafe, r.Judged)
}

// RepeatRun is one repeat's own figures.
type RepeatRun struct {
	Repeat          int       `json:"repeat"` // 1-based
	StartedAt       time.Time `json:"started_at"`
	MeasuredSeconds float64   `json:"measured_seconds"`
	CyclesPerSec    float64   `json:"cycles_per_sec"`
	AcquiresPerSec  float64   `json:"acquires_per_sec"`
	AcquireP50      float64   `json:"acquire_p50_us"`
	AcquireP90      float64   `json:"acquire_p90_us"`
	AcquireP99      float64   `json:"acquire_p99_us"`
	AcquireP999     float64   `json:"acquire_p999_us"`
	ReleaseP50      float64   `json:"release_p50_us"`
	ReleaseP99      float64   `json:"release_p99_us"`
	Tally
	Violations  int64 `json:"violations"`
	Interrupted bool  `json:"interrupted,omitempty"`
	// A fault cell's: what its resource's checker found, its longest
	// unavailability after a failover or election (0: none measured),
	// and its own verdict. LostUpdates are the data lost: acknowledged
	// writes lost, and stale writes accepted (Safety.DataLost).
	LostUpdates         int64   `json:"lost_updates,omitempty"`
	StaleWritesRejected int64   `json:"stale_writes_rejected,omitempty"`
	UnavailableSeconds  float64 `json:"unavailable_s,omitempty"`
	// UnavailableToEnd: nothing was granted after the fault to the end.
	UnavailableToEnd    bool   `json:"unavailable_to_end,omitempty"`
	ViolationsInPromise *int64 `json:"violations_in_promise,omitempty"`
	Verdict             string `json:"verdict,omitempty"`
	// WritesPast: the guarded writes acknowledged after the last commit
	// a promoted node had (Failover.WritesPast, its failovers' sum); nil
	// when no failover of the repeat counted them.
	WritesPast *int64 `json:"writes_past_promoted,omitempty"`
	// ExercisedHolds: the holds the repeat's faults exercised (nil: a
	// result before the count, or faults that take no lock).
	ExercisedHolds *int64 `json:"exercised_holds,omitempty"`
	// FaultEvents: the repeat's fault events, each judged apart.
	FaultEvents []FaultEvent `json:"fault_events,omitempty"`
	// What waiting callers saw (0 when the repeat had no contention figures).
	TimeToLockP50   float64 `json:"time_to_lock_p50_us,omitempty"`
	TimeToLockP99   float64 `json:"time_to_lock_p99_us,omitempty"`
	AttemptsPerLock float64 `json:"attempts_per_lock,omitempty"`
	CommandsPerLock float64 `json:"commands_per_lock,omitempty"`
	JainIndex       float64 `json:"jain_index,omitempty"`
}

// Spread is what the repeats of one figure say: their median (the
// headline), range, and a distribution-free confidence interval of the
// median from order statistics.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// CILow..CIHigh covers the true median with probability CILevel. With
	// fewer than 6 repeats no pair of order statistics reaches 95%, so the
	// interval is the whole range and CILevel says what it does reach
	// (0.9375 with 5 repeats, 0.75 with 3); with one repeat there is none.
	CILow   float64 `json:"ci_low"`
	CIHigh  float64 `json:"ci_high"`
	CILevel float64 `json:"ci_level"`
	// RelSpread is the larger side of the interval over the median: the
	// noise floor of this figure, shown as "median ± RelSpread".
	RelSpread float64 `json:"rel_spread"`
	N         int     `json:"n"`
}

// SpreadFigures sets the spread of every figure across rep's runs.
func (rep *Repeats) SpreadFigures() {
	for _, f := range Figures {
		rep.Spread[f.Name] = NewSpread(Samples(Run{Repeats: rep}, f))
	}
}

// MedianThroughput is the repeats' median throughput.
func (rep *Repeats) MedianThroughput() Throughput {
	return Throughput{CyclesPerSec: rep.Spread["cycles_per_sec"].Median, AcquiresPerSec: rep.Spread["acquires_per_sec"].Median}
}
