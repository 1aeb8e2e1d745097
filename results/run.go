// Package results holds what a benchmark cell produced: the typed result,
// the manifest of a results directory, the run-time recorder, .hlog files
// and atomic writes. It draws nothing: report reads results and draws.
package results

import (
	"fmt"
	"time"
)

// Latency is the summary of one histogram, in microseconds.
type Latency struct {
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	Max   float64 `json:"max"`
	Mean  float64 `json:"mean"`
	Count int64   `json:"count"`
}

// Throughput is per second of the measured window.
type Throughput struct {
	CyclesPerSec   float64 `json:"cycles_per_sec"`
	AcquiresPerSec float64 `json:"acquires_per_sec"`
}

// MasterOutcomes counts what one master answered to the SETs of measured
// acquires (the last attempt of each). ok + taken + timeout + error +
// pending = the SETs sent to this master; not_sent are sequential acquires
// decided (wait=quorum) before this master's turn.
type MasterOutcomes struct {
	OK      int64 `json:"ok"`
	Taken   int64 `json:"taken"`
	Timeout int64 `json:"timeout"`
	Error   int64 `json:"error"`
	// Pending SETs were sent but not waited for (wait=quorum decided first).
	Pending int64 `json:"pending"`
	NotSent int64 `json:"not_sent"`
	// Late replies to measured acquires' SETs arrived after the caller
	// stopped waiting (pending or timed out); releases' late replies are
	// not in it.
	Late int64 `json:"late"`
	// LateReleased are late OKs of failed acquires, released on the master.
	LateReleased int64 `json:"late_released"`
	// Unconfirmed SETs won, but fewer replicas acknowledged them than the
	// client asked for (lock.Unconfirmed): the acquire failed and was
	// released.
	Unconfirmed int64 `json:"few_acks,omitempty"`
}

// Add adds o's counts to m's.
func (m *MasterOutcomes) Add(o MasterOutcomes) {
	m.OK += o.OK
	m.Taken += o.Taken
	m.Timeout += o.Timeout
	m.Error += o.Error
	m.Pending += o.Pending
	m.NotSent += o.NotSent
	m.Late += o.Late
	m.LateReleased += o.LateReleased
	m.Unconfirmed += o.Unconfirmed
}

// Add adds o's outcomes to out's, master by master (by address).
func (out *Outcomes) Add(o Outcomes) {
	out.Tally.Add(o.Tally)
	if out.PerMaster == nil {
		out.PerMaster = map[string]MasterOutcomes{}
	}
	for addr, m := range o.PerMaster {
		t := out.PerMaster[addr]
		t.Add(m)
		out.PerMaster[addr] = t
	}
}

// AcquireFailure is why an acquire failed, as the outcomes count it.
type AcquireFailure uint8

const (
	// LostToError: masters timed out or failed (Outcomes.Errors).
	LostToError AcquireFailure = iota
	// LostToContention: the key was taken, or a quorum answered too
	// slowly for any validity (Outcomes.NotAcquired).
	LostToContention
	// LostUnconfirmed: the server granted it but fewer replicas
	// acknowledged it than the client asked for (Outcomes.Unconfirmed).
	LostUnconfirmed
)

// Sent is how many SETs of measured acquires went to the master.
func (m MasterOutcomes) Sent() int64 {
	return m.OK + m.Taken + m.Timeout + m.Error + m.Pending + m.Unconfirmed
}

// Tally is acquire attempts by what they came to: the one outcome count.
// Workers keep it (workloads.Counts), a result carries it (Outcomes), and
// repeats, clients and the report show it, each by embedding it, so that
// they count, add and write it alike.
type Tally struct {
	Acquired    int64 `json:"acquired"`
	NotAcquired int64 `json:"not_acquired"` // lost to contention or validity
	Errors      int64 `json:"errors"`       // servers timed out or failed
	// Unconfirmed failed because too few replicas acknowledged the grant
	// (lock.Unconfirmed): neither contention nor error.
	Unconfirmed int64 `json:"few_acks,omitempty"`
}

// Attempts is every acquire that ended in an outcome.
func (t Tally) Attempts() int64 { return t.Acquired + t.NotAcquired + t.Errors + t.Unconfirmed }

// Add adds o's counts to t's.
func (t *Tally) Add(o Tally) {
	t.Acquired += o.Acquired
	t.NotAcquired += o.NotAcquired
	t.Errors += o.Errors
	t.Unconfirmed += o.Unconfirmed
}

// Failed counts a failed acquire by why it failed.
func (t *Tally) Failed(why AcquireFailure) {
	switch why {
	case LostToContention:
		t.NotAcquired++
	case LostUnconfirmed:
		t.Unconfirmed++
	default:
		t.Errors++
	}
}

// Outcomes counts acquire attempts by result, and each master's replies.
type Outcomes struct {
	Tally
	PerMaster map[string]MasterOutcomes `json:"per_master"`
}

// Safety is what the in-run probe saw and, in chaos scenarios, what the
// protected-resource checker found.
type Safety struct {
	Violations          int64 `json:"violations"`
	MaxConcurrentHolder int64 `json:"max_concurrent_holders"`
	// The run's probe judges each hold on its validity window (from the
	// start of its use to its end or the validity's, whichever is first).
	// JudgedHolds had a window; HoldsNotJudged had no validity left when
	// their use began. NotJudged says why nothing was judged (e.g. "hold 0"):
	// then 0 violations proves nothing.
	JudgedHolds    int64  `json:"judged_holds"`
	HoldsNotJudged int64  `json:"holds_not_judged"`
	NotJudged      string `json:"not_judged,omitempty"`
	// The protected resource (chaos scenarios): read-modify-writes under the
	// lock on a history per key (each write appends its id to what it
	// read); lost = acknowledged writes missing from the final histories,
	// stale accepted = writes found there after a history other than the
	// one they read. History says the figures come from that check (false:
	// a result written before it, from a counter).
	ResourceChecked     bool  `json:"resource_checked,omitempty"`
	History             bool  `json:"history_checked,omitempty"`
	AcknowledgedWrites  int64 `json:"acknowledged_writes,omitempty"`
	LostUpdates         int64 `json:"lost_updates,omitempty"`
	StaleWritesAccepted int64 `json:"stale_writes_accepted,omitempty"`
	// WritesInDoubt got no answer (they may have landed or not: neither
	// safe nor lost); InDoubtLanded of them are in the final histories.
	WritesInDoubt int64 `json:"writes_in_doubt,omitempty"`
	InDoubtLanded int64 `json:"in_doubt_landed,omitempty"`
	// LostWrites and StaleWrites are the first ids of each, the evidence.
	LostWrites  []string `json:"lost_write_ids,omitempty"`
	StaleWrites []string `json:"stale_write_ids,omitempty"`
	// StockLeft: with a stock, what the counters say is left of it (the
	// stock less every update that landed).
	StockLeft           *int64 `json:"stock_left,omitempty"`
	Fencing             bool   `json:"fencing,omitempty"`
	StaleWritesRejected int64  `json:"stale_writes_rejected,omitempty"`
	// GuardedWrite: the counter was kept in the lock service and written
	// only under the lock; StaleWritesRejected then counts the guarded
	// writes it refused.
	GuardedWrite bool `json:"guarded_write,omitempty"`
	// GuardedInDoubt: results written before the history check (their
	// guarded writes in doubt; WritesInDoubt now, for every store).
	GuardedInDoubt int64 `json:"guarded_in_doubt,omitempty"`
	// LockLoss is the lock-loss lag of the sessions the service ended
	// under their clients (nil: none lost, or a service without sessions).
	LockLoss         *LockLoss `json:"lock_loss,omitempty"`
	AvailabilityOps  float64   `json:"availability_attempts,omitempty"` // share of acquire attempts that succeeded
	AvailabilityTime float64   `json:"availability_time,omitempty"`     // share of seconds in which some acquire succeeded (kept for old readers; Unavailable is the measure)
	// ViolationsInPromise (a fault cell's; nil in older results) judges
	// each hold only within what its lock promised (Redis: its validity
	// window); Violations is the headline, exclusion broken as the holders
	// used their locks (acquire's return to release call).
	ViolationsInPromise *int64 `json:"violations_in_promise,omitempty"`
	// ExercisedHolds are the holds the cell's faults met (a fault cell's
	// whose faults can take a lock; nil otherwise, and in older results):
	// held at a fault and still held when the lock could be handed on.
	// ExercisedByFault splits them by the cell's faults (-1: a fault that
	// takes no lock). 0: the cell judged nothing about exclusion.
	ExercisedHolds   *int64 `json:"exercised_holds,omitempty"`
	ExercisedByFault []int  `json:"exercised_by_fault,omitempty"`
	// FaultEvents judge each fault event of the cell apart (a history may
	// hold several: fault, recovery, the next): what it met, and what
	// broke in its window, from its moment to the next event's (what broke
	// before the first is the first's). nil: a cell whose faults take no
	// lock, and results before events were judged apart.
	FaultEvents []FaultEvent `json:"fault_events,omitempty"`
	// HeldAtFaults are the holds inside their section at the faults that
	// could take a lock (the faulted clients' for a client-side fault),
	// handed on or not: a lock that no fault could hand on (a session
	// lock under a paused holder) shows here, not among the exercised.
	HeldAtFaults *int64 `json:"held_at_faults,omitempty"`
	// Unavailable is the longest outage after a fault that took a server,
	// member or leader away (nil: no such fault).
	Unavailable *Unavailability `json:"unavailable,omitempty"`
	// Verdict of a chaos cell: met, not met, not judged (NotJudged says
	// why, reasons joined by "; "), unchecked (no expectations) or
	// interrupted.
	Verdict string `json:"verdict,omitempty"`
	// Timeline says when (chaos): the seconds of the cell, from its start,
	// in which violations began, updates were lost or stale writes refused.
	Timeline []SafetySecond `json:"timeline,omitempty"`
	// Linearizability is the outside judge's verdict on the protected
	// resource's history (a fault cell; nil elsewhere).
	Linearizability *Linearizability `json:"linearizability,omitempty"`
	// Disagreement says, in one line, how the resource's counters and the
	// history's judge disagree ("" : they agree).
	Disagreement string `json:"checkers_disagree,omitempty"`
}

// FaultEvent is one fault event of a cell: the cell's fault it was
// (Fault, its index), when (seconds from the cell's start), the holds it
// exercised and met, whether it is judged (it exercised a hold, or met
// one in a cell expecting none handed on), and what broke in its window.
type FaultEvent struct {
	Fault      int     `json:"fault"`
	AtS        float64 `json:"at_s"`
	Exercised  int     `json:"exercised_holds"`
	Held       int     `json:"held_at_fault"`
	Judged     bool    `json:"judged"`
	Violations int64   `json:"violations"`
	InPromise  int64   `json:"violations_in_promise"`
	DataLost   int64   `json:"data_lost"`
}

// Unavailability is the longest span, after a fault that took a server,
// member or leader away, in which no acquire on any key returned holding a
// lock, measured on the acquires' own timestamps (from the fault to the
// first grant, between grants, or from the last grant to the cell's end).
// ToEnd: nothing was granted from the fault to the end, so the outage
// lasted at least Seconds.
type Unavailability struct {
	Seconds float64 `json:"seconds"`
	ToEnd   bool    `json:"to_end,omitempty"`
	// After names the fault (its event: kind and target) and when it
	// began, in seconds from the cell's start.
	After string  `json:"after"`
	AtS   float64 `json:"at_s"`
}

// Text is "2.41 s" or "≥ 5.20 s (nothing granted to the end)".
func (u *Unavailability) Text() string {
	if u.ToEnd {
		return fmt.Sprintf("≥ %.2f s (nothing granted to the end)", u.Seconds)
	}
	return fmt.Sprintf("%.2f s", u.Seconds)
}

// Linearizability is porcupine's verdict on a fault cell's history: one
// operation per critical section on the protected resource.
type Linearizability struct {
	// Verdict: "linearizable", "not linearizable" or "unknown" (the
	// budget was spent first: never a pass).
	Verdict string `json:"verdict"`
	// Key is the first key whose history is not linearizable, or that the
	// budget ran out on; Operations and Keys are the history's size.
	Key        *uint64 `json:"key,omitempty"`
	Operations int     `json:"operations"`
	Keys       int     `json:"keys"`
	Seconds    float64 `json:"seconds"`
	Budget     float64 `json:"budget_seconds"`
	// Reason says why the verdict is unknown.
	Reason string `json:"reason,omitempty"`
	// Visualization is porcupine's page of the failing key's history,
	// relative to the results directory ("" : none written).
	Visualization string `json:"visualization,omitempty"`
	// Unanswered counts the sections whose write got no answer: the judge
	// lets each take effect or not, but a write the server ran late (after
	// another holder's) is a lost update it cannot see.
	Unanswered int `json:"unanswered_writes,omitempty"`
}

// The judge's verdicts.
const (
	Linearizable    = "linearizable"
	NotLinearizable = "not linearizable"
	UnknownVerdict  = "unknown"
)

// Summary is the verdict in words, and whether it is anything but a pass.
func (l *Linearizability) Summary() (string, bool) {
	switch {
	case l == nil:
		return "-", false
	case l.Verdict == Linearizable:
		return fmt.Sprintf("linearizable (%d operations)", l.Operations), false
	case l.Verdict == NotLinearizable:
		return fmt.Sprintf("NOT LINEARIZABLE: key %d", *l.Key), true
	}
	return "UNKNOWN: " + l.Reason, true
}

// DataLost is the outcome "data lost": acknowledged writes lost and stale
// writes accepted.
func (s Safety) DataLost() int64 { return s.LostUpdates + s.StaleWritesAccepted }

// SafetySecond is one second of a chaos cell (counted from its start) in
// which something unsafe happened or a stale write was refused.
type SafetySecond struct {
	Second              int64 `json:"second"`
	Violations          int64 `json:"violations,omitempty"`
	LostUpdates         int64 `json:"lost_updates,omitempty"`
	StaleWritesRejected int64 `json:"stale_writes_rejected,omitempty"`
}

// Failover is one kill -9 of a replicated set's master and what followed:
// Sentinel's +switch-master and the unavailability window, from the kill
// to the first acquire that succeeded after it (on the new master), with
// the acquires that failed in it by why. Times are seconds from the
// cell's start; nil: it did not happen before the cell ended.
type Failover struct {
	// Kind is "" for a replicated set's failover (Sentinel promotes a
	// replica), "election" for a consensus cluster's leader killed, "recovery" for a
	// PostgreSQL server killed and restarted.
	Kind string `json:"kind,omitempty"`
	// Cause is what began it: "" for a kill -9, "partition" for a leader
	// cut from the other members (KilledAt is then when it was cut).
	Cause     string   `json:"cause,omitempty"`
	KilledAt  float64  `json:"killed_at_s"`
	Master    string   `json:"master"` // killed
	HeldKeys  int      `json:"held_keys"`
	SwitchAt  *float64 `json:"switch_master_at_s,omitempty"`
	NewMaster string   `json:"new_master,omitempty"`
	// FirstAcquireAt is when the first acquire started after the kill
	// returned holding the lock; Unavailable is it less KilledAt.
	FirstAcquireAt *float64 `json:"first_acquire_at_s,omitempty"`
	Unavailable    *float64 `json:"unavailable_s,omitempty"`
	// The acquires that failed from the kill to the first success (to the
	// end without one): lost to contention, to errors, to few acks.
	NotAcquired int64 `json:"not_acquired"`
	Errors      int64 `json:"errors"`
	Unconfirmed int64 `json:"few_acks,omitempty"`
	// What the promoted node lacked, where its servers say: LackedBytes of
	// the old primary's log (PostgreSQL's WAL), and the guarded writes
	// acknowledged after the last commit it had from the old primary
	// (HadUntilS), sent before the kill: the lost are among them. A failover
	// with none cannot show that no acknowledged write would be lost.
	LackedBytes int64    `json:"lacked_bytes,omitempty"`
	HadUntilS   *float64 `json:"promoted_had_until_s,omitempty"`
	WritesPast  *int64   `json:"writes_past_promoted,omitempty"`
}

// Text is the failover in one line.
func (f Failover) Text() string {
	what := "failover"
	if f.Kind != "" {
		what = f.Kind
	}
	cause := "kill -9"
	if f.Cause != "" {
		cause = f.Cause
	}
	s := fmt.Sprintf("%s: %s of %s at %.3f s", what, cause, f.Master, f.KilledAt)
	if f.SwitchAt != nil {
		s += fmt.Sprintf(", +switch-master to %s at %.3f s", f.NewMaster, *f.SwitchAt)
	}
	if f.Unavailable != nil {
		s += fmt.Sprintf(", first acquire at %.3f s: unavailable %.3f s", *f.FirstAcquireAt, *f.Unavailable)
	} else {
		s += ", no acquire won after it"
	}
	s += fmt.Sprintf("; in it %d acquires failed on errors, %d not acquired", f.Errors, f.NotAcquired)
	if f.Unconfirmed > 0 {
		s += fmt.Sprintf(", %d on few acks", f.Unconfirmed)
	}
	return s + f.pastText()
}

// pastText says what the promoted node lacked, when known.
func (f Failover) pastText() string {
	s := ""
	if f.LackedBytes > 0 {
		s = fmt.Sprintf("; the promoted node lacked %d bytes of the old primary's log", f.LackedBytes)
	}
	switch {
	case f.WritesPast == nil:
	case *f.WritesPast == 0:
		s += fmt.Sprintf("; no write was acknowledged after the last commit it had from the old primary (at %.3f s): this failover cannot show that none would be lost", *f.HadUntilS)
	default:
		s += fmt.Sprintf("; %d writes acknowledged after the last commit it had from the old primary (at %.3f s)", *f.WritesPast, *f.HadUntilS)
	}
	return s
}

// Client is the load generator's own cost.
type Client struct {
	CPUSeconds     float64 `json:"cpu_seconds"`
	CPUMicrosCycle float64 `json:"cpu_us_per_cycle"`
	// CPUShare is CPU seconds over wall seconds over cores: near 1 means
	// the figure measures the client rather than Redis.
	CPUShare    float64 `json:"cpu_share_of_machine"`
	Cores       int     `json:"cores"`
	ClientBound bool    `json:"client_bound"`
	// Resident memory at the start and end of the measured window: a long
	// run at full speed should keep them close.
	RSSStartMB float64 `json:"rss_start_mb"`
	RSSEndMB   float64 `json:"rss_end_mb"`
	// IncludesAdapter: an external client's (--client) adapter process
	// does the library's work, so the CPU figures above are lockbench's
	// and its adapter's, shown apart below. Without it they are
	// lockbench's alone.
	IncludesAdapter         bool    `json:"includes_adapter,omitempty"`
	LockbenchCPUSeconds     float64 `json:"lockbench_cpu_seconds,omitempty"`
	LockbenchCPUMicrosCycle float64 `json:"lockbench_cpu_us_per_cycle,omitempty"`
	AdapterCPUSeconds       float64 `json:"adapter_cpu_seconds,omitempty"`
	AdapterCPUMicrosCycle   float64 `json:"adapter_cpu_us_per_cycle,omitempty"`
}

// AddAdapter adds an adapter's CPU seconds to the client's, over cycles
// in secs on cores, keeping both parts.
func (c *Client) AddAdapter(adapterSeconds float64, cycles int64, secs float64) {
	c.IncludesAdapter = true
	c.LockbenchCPUSeconds, c.AdapterCPUSeconds = c.CPUSeconds, adapterSeconds
	c.CPUSeconds += adapterSeconds
	c.perCycle(float64(cycles))
	if secs > 0 && c.Cores > 0 {
		c.CPUShare = c.CPUSeconds / secs / float64(c.Cores)
	}
}

// perCycle sets the per-cycle figures from the seconds.
func (c *Client) perCycle(cycles float64) {
	if cycles <= 0 {
		return
	}
	c.CPUMicrosCycle = c.CPUSeconds * 1e6 / cycles
	if c.IncludesAdapter {
		c.LockbenchCPUMicrosCycle = c.LockbenchCPUSeconds * 1e6 / cycles
		c.AdapterCPUMicrosCycle = c.AdapterCPUSeconds * 1e6 / cycles
	}
}

// LockUse counts what happened while locks were held.
type LockUse struct {
	Extends        int64 `json:"extends"`
	ExtendFailures int64 `json:"extend_failures"`
	// HoldOverruns are holds that outlived the lock's validity and were cut
	// short at its end (no auto-extension).
	HoldOverruns int64 `json:"hold_overruns"`
}

// OpenLoop is the offered load of an open-loop cell. Every start intended
// in the measured window is offered, whether or not a worker was free.
type OpenLoop struct {
	OfferedRate float64 `json:"offered_rate"` // acquires per second scheduled
	Offered     int64   `json:"offered"`
	Unserved    int64   `json:"unserved"` // offered − served: never started before the end
	// Served: offered starts that lockbench started (an acquire was sent),
	// and their rate over the measured seconds.
	Served     int64   `json:"served"`
	ServedRate float64 `json:"served_rate"`
	// PacerLag is how late lockbench started an acquire it could have
	// started (a worker was free and the start was due): part of the
	// corrected latency that is lockbench's, not the lock's. Queueing
	// behind busy workers is not in it; it is in the corrected latency.
	PacerLag Latency `json:"pacer_lag_us"`
	// Overloaded: some offered starts were never served; the lock (or
	// max-in-flight) could not keep up and the corrected latency grows.
	Overloaded bool `json:"overloaded"`
}

// Servers is the masters' own CPU in the window (INFO cpu).
type Servers struct {
	CPUSeconds     float64            `json:"cpu_seconds"`
	CPUMicrosCycle float64            `json:"cpu_us_per_cycle"`
	PerMaster      map[string]float64 `json:"per_master_cpu_seconds"`
	// BusiestShare is the busiest master's CPU over wall time: near 1 means
	// that single-threaded server was the bottleneck.
	BusiestShare float64 `json:"busiest_master_cpu_share"`
	// ReplicaCPUSeconds and MonitorCPUSeconds are the deployment's other
	// local servers in the window (/proc: pool.Window's Replicas and
	// Monitors): they do the topology's work too (the replication stream,
	// its fsyncs, watching the master). TopologyCPUMicrosCycle is then
	// every server's CPU per lock cycle: what one lock costs the
	// deployment (without them: CPUMicrosCycle). The monitors' key is the
	// one results always had (Redis' Sentinels were the first monitors).
	ReplicaCPUSeconds      float64 `json:"replica_cpu_seconds,omitempty"`
	MonitorCPUSeconds      float64 `json:"sentinel_cpu_seconds,omitempty"`
	TopologyCPUMicrosCycle float64 `json:"topology_cpu_us_per_cycle,omitempty"`
}

// perCycle sets the CPU per lock cycle from the seconds: the masters', and
// every server's when a replicated set's others were read.
func (s *Servers) perCycle(cycles float64) {
	s.CPUMicrosCycle = s.CPUSeconds * 1e6 / cycles
	s.TopologyCPUMicrosCycle = 0
	if s.ReplicaCPUSeconds+s.MonitorCPUSeconds > 0 {
		s.TopologyCPUMicrosCycle = (s.CPUSeconds + s.ReplicaCPUSeconds + s.MonitorCPUSeconds) * 1e6 / cycles
	}
}

// TopologyMicrosCycle is every server's CPU per lock cycle: the masters',
// and the replicas' and monitors' when they were read.
func (s *Servers) TopologyMicrosCycle() float64 {
	if s.TopologyCPUMicrosCycle > 0 {
		return s.TopologyCPUMicrosCycle
	}
	return s.CPUMicrosCycle
}

// Run is the result of one benchmark cell: the shape `lockbench run --json`
// prints and later tools rely on.
type Run struct {
	Config               *CellConfig `json:"config"`
	Throughput           Throughput  `json:"throughput"`
	AcquireLatency       Latency     `json:"acquire_latency_us"`
	AcquireUncorrected   *Latency    `json:"acquire_uncorrected_latency_us,omitempty"`
	AcquireFailedLatency Latency     `json:"acquire_failed_latency_us"`
	ReleaseLatency       Latency     `json:"release_latency_us"`
	Outcomes             Outcomes    `json:"outcomes"`
	Safety               Safety      `json:"safety"`
	LockUse              LockUse     `json:"lock_use"`
	// Fairness is how evenly the workers got the lock (nil: none acquired);
	// a fault cell's workers are those of all its clients.
	Fairness *Fairness `json:"fairness,omitempty"`
	// Contention is what waiting callers saw (nil: no acquire ended).
	Contention  *Contention        `json:"contention,omitempty"`
	OpenLoop    *OpenLoop          `json:"open_loop,omitempty"`
	Client      Client             `json:"client"`
	Servers     *Servers           `json:"servers,omitempty"`
	BaselineRTT map[string]Latency `json:"baseline_rtt_us,omitempty"`
	// BaselineParallel: plain SETs to all masters at once, waited for together
	// (the floor of a multiplexed acquire on this machine).
	BaselineParallel *Latency `json:"baseline_parallel_set_us,omitempty"`
	MeasuredSeconds  float64  `json:"measured_seconds"`
	Interrupted      bool     `json:"interrupted"`
	// Broken is why a client failed mid-run (an external client's adapter
	// that exited, hung or broke the protocol): the figures are of the
	// window until then, and the run is interrupted.
	Broken    string    `json:"broken,omitempty"`
	Warnings  []string  `json:"warnings,omitempty"`
	StartedAt time.Time `json:"started_at"`
	Cell      *CellInfo `json:"cell,omitempty"`
	Events    []Event   `json:"events,omitempty"`
	// Failovers are a replicated fault cell's kills of its master and
	// what followed them.
	Failovers []Failover `json:"failovers,omitempty"`
	// Repeats: the cell was measured several times (--repeat); the
	// headline figures above are then the medians of these.
	Repeats *Repeats `json:"repeats,omitempty"`

	// Machine is where the machine's CPU went; Limit what limited the
	// cell; CommandCost the masters' own cost per lock cycle.
	Machine     *CPUSplit    `json:"machine,omitempty"`
	Limit       *Limit       `json:"limit,omitempty"`
	CommandCost *CommandCost `json:"redis_cost,omitempty"`
	// Shards, when the servers are shards (each holds part of the keys, a
	// lock lives on one), are the per-server rows by shard; nil when every
	// server sees every lock or there is one.
	Shards []Shard `json:"shards,omitempty"`
}
