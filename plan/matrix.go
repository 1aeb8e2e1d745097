package plan

import (
	"slices"
	"strings"
	"time"
)

// MatrixFault is one fault of the which-lock matrix that every design is
// put under: its settings over the design's, the fault forms a design may
// take it as (tried in order: a leader kill is a member's crash by role,
// or a replicated set's failover), and its one-line definition for the
// page.
type MatrixFault struct {
	Name, Settings string
	Forms          []MatrixForm
	// LongHold: its holds outlast the TTL (the partition must fall in
	// one), which a lock of fixed TTL never survives, fault or not.
	LongHold bool
	Defined  string
}

// MatrixForm is one way to make a matrix fault: an event (a fault with
// its recovery: a restart, a resume, a healed link) at a moment drawn in
// At..Until, repeated Every later in the same history as Jepsen's nemesis
// does (0: one event a history, as for a failover, which leaves no standby
// to promote again, or a clock that cannot jump back; those repeat as
// runs). Raw is a whole schedule that is one event (a lag, then the
// failover it lags into).
type MatrixForm struct {
	Event            string
	At, Until, Every time.Duration
	Raw              string
	// HoldAcross, where set, is the long hold of a lock that renews itself
	// under this form: a failover's promotion (Sentinel's, ~4.5 s from the
	// kill) outlasts most of MatrixLongHold's 6 s holds, which then meet
	// nothing the promoted node could hand on.
	HoldAcross time.Duration
}

// failoverHold is a failover form's HoldAcross.
const failoverHold = 10 * time.Second

// Faults is the form's schedule with events events (one where it does
// not repeat), as a cell's YAML flow list.
func (f MatrixForm) Faults(events int) string {
	if f.Raw != "" {
		return f.Raw
	}
	var out []string
	for i := range f.Events(events) {
		shift := time.Duration(i) * f.Every
		moment := "at: " + yamlDuration(f.At+shift)
		if f.Until > 0 {
			moment += ", at_until: " + yamlDuration(f.Until+shift)
		}
		out = append(out, "{"+moment+", "+f.Event+"}")
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// Events is how many events a history of this form holds when events are
// asked for: 1 where it does not repeat.
func (f MatrixForm) Events(events int) int {
	if f.Every == 0 || f.Raw != "" || events < 1 {
		return 1
	}
	return events
}

// Span is how much longer than one event's cell a history of events
// events runs: the later events' room.
func (f MatrixForm) Span(events int) time.Duration {
	return time.Duration(f.Events(events)-1) * f.Every
}

// yamlDuration is d as the scenario's YAML writes it ("1.5s", "3s").
func yamlDuration(d time.Duration) string { return d.String() }

// MatrixEvents is how many fault events a matrix cell's history holds
// where its fault can repeat in one (choose --events).
const MatrixEvents = 5

// eventEvery is the time from one event of a history to the next: a 4 s
// pause or partition, or a crash and the recovery after it, and a
// holder's next 6 s hold to meet (MatrixLongHold).
const eventEvery = 6 * time.Second

// MatrixFaults are the matrix's faults, the quiet cell first.
var MatrixFaults = []MatrixFault{
	{"none", "", []MatrixForm{{Raw: "[]"}}, false,
		"no fault: the same work, undisturbed"},
	{"crash", "", []MatrixForm{{Event: "kind: crash, master_index: [0], restart: immediate", At: 1500 * time.Millisecond, Until: 3 * time.Second, Every: eventEvery}}, false,
		"kill -9 of the first server (master, member or database server) at a moment drawn in 1.5–3 s, restarted at once; repeated every 6 s in one history"},
	{"leader-kill", "", []MatrixForm{
		{Event: "kind: crash, role: leader, restart: immediate", At: 1500 * time.Millisecond, Until: 3 * time.Second, Every: eventEvery},
		{Event: "kind: failover", At: 1500 * time.Millisecond, Until: 3 * time.Second, HoldAcross: failoverHold}}, false,
		"kill -9 of the leader or primary at a moment drawn in 1.5–3 s: a consensus cluster elects another (repeated every 6 s in one history), Sentinel or the service promotes a replica (once a history: no standby is left to promote)"},
	{"pause-holder", "", []MatrixForm{{Event: "kind: pause, client_index: [0], for: 4s", At: time.Second, Until: 2 * time.Second, Every: eventEvery}}, false,
		"SIGSTOP of one client process for 4 s at a moment drawn in 1–2 s, past its TTL or lease, then SIGCONT: it writes what it read before (Kleppmann's GC pause); repeated every 6 s in one history"},
	{"partition-holder", "hold: 3s", []MatrixForm{{Event: "kind: partition, client_index: [0], for: 4s", At: time.Second, Every: eventEvery}}, true,
		"one client process cut from every server for 4 s at 1 s, inside 3 s holds; its process lives on (so a lease watchdog would, but cannot reach the servers); repeated every 6 s in one history"},
	{"lag-failover", "", []MatrixForm{{Raw: "[{at: 1s, kind: replication_lag}, {at: 3s, at_until: 4.5s, kind: failover}]", HoldAcross: failoverHold}}, false,
		"the replicas stop receiving the master's writes at 1 s, then the master is killed at a moment drawn in 3–4.5 s and a lagging replica promoted (once a history)"},
	{"clock-jump", "", []MatrixForm{{Event: "kind: clock_jump, master_index: [0], by: 5s", At: 1500 * time.Millisecond, Until: 3 * time.Second}}, false,
		"the first server's wall clock jumps 5 s ahead at a moment drawn in 1.5–3 s (libfaketime), so its TTLs end early (once a history: a clock cannot jump back)"},
}

// MatrixFaultNames are MatrixFaults' names, in order.
func MatrixFaultNames() []string {
	var out []string
	for _, f := range MatrixFaults {
		out = append(out, f.Name)
	}
	return out
}

// The two ways a matrix cell is not measured by design, in words.
const (
	NotApplicable = "not applicable"
	NotSupported  = "not supported yet"
)

// Absence says, for a topology under a matrix fault, why no cell runs:
// the design has no such part (State NotApplicable), or lockbench cannot
// make the fault there yet (NotSupported, and why). The page shows these
// words, never the settings check's. A not-applicable pair is judged
// (JudgedOn): "immune" where the hazard cannot happen at all, else the
// fault that stands for it on this design (a single server's crash is
// what a leader kill or a failover would be there).
type Absence struct{ State, Why, JudgedOn string }

// Absent is a topology that says itself which matrix faults (by name)
// take no cell of its designs, and why (Redis' topologies do).
type Absent interface {
	Absences() map[string]Absence
}

// absences are those of the topologies that do not say them themselves.
var absences = map[string]map[string]Absence{
	"leader-kill": {
		"postgres": {NotApplicable, "one server, no standby: no primary to fail over (crash is its server fault)", "crash"},
	},
	"lag-failover": {
		"postgres":  {NotApplicable, "one server, no standby: no replication to lag (the replica designs take it; crash is its server fault)", "crash"},
		"etcd":      {NotSupported, "a lagging member needs delayed peer links, which lockbench cannot add without netem (it cuts them); Raft elects only a member holding every committed entry", ""},
		"zookeeper": {NotSupported, "a lagging server needs delayed peer links, which lockbench cannot add without netem (it cuts them); ZAB elects only a server holding every committed proposal", ""},
	},
	"clock-jump": {
		"etcd":      {NotSupported, "libfaketime does not move a Go program's clock (etcd's or lockbench's)", ""},
		"zookeeper": {NotSupported, "libfaketime is not shown to move a JVM's clock", ""},
		"postgres":  {NotApplicable, "an advisory lock has no expiry: it lives as long as its holder's session, whatever the server's clock", Immune},
	},
}

// Immune is MatrixJudgedOn's word for a pair whose hazard cannot happen.
const Immune = "immune"

// fixedTTLAbsence is a fixed-TTL design under a fault whose holds outlast
// its TTL.
const fixedTTLAbsence = "a lock of fixed TTL expires under the cell's 3 s holds, partition or not (the watchdog rows renew theirs)"

// MatrixAbsence is why design d takes no cell under fault f (state
// NotApplicable or NotSupported), ok false when it should run one.
func MatrixAbsence(d Design, f MatrixFault) (state, why string, ok bool) {
	if f.LongHold && d.FixedTTL {
		return NotApplicable, fixedTTLAbsence, true
	}
	a, ok := absenceOf(d.Topology(), f.Name)
	return a.State, a.Why, ok
}

// absenceOf is why topology t takes no cell under the fault named fault:
// its own word when it says them (Absent), else absences'.
func absenceOf(t, fault string) (Absence, bool) {
	if a, ok := topologyNamed(t).(Absent); ok && t != "" {
		got, ok := a.Absences()[fault]
		return got, ok
	}
	got, ok := absences[fault][t]
	return got, ok
}

// MatrixJudgedOnNamed is MatrixJudgedOn by the design's and the fault's
// names ("" for a name it does not know).
func MatrixJudgedOnNamed(design, fault string) string {
	d, ok1 := DesignNamed(design)
	f, ok2 := MatrixFaultNamed(fault)
	if !ok1 || !ok2 {
		return ""
	}
	return MatrixJudgedOn(d, f)
}

// MatrixJudgedOn is how a need under fault f is judged on design d where
// no cell runs: Immune (met: the hazard cannot happen), another fault's
// name (judged on that fault's cell, which stands for it there), or ""
// (not met: not supported yet, or a lock of fixed TTL under holds past
// it).
func MatrixJudgedOn(d Design, f MatrixFault) string {
	if f.LongHold && d.FixedTTL {
		return ""
	}
	a, _ := absenceOf(d.Topology(), f.Name)
	return a.JudgedOn
}

// Topology is the design's topology, as its settings name it.
func (d Design) Topology() string {
	for _, kv := range strings.Split(d.Settings, ", ") {
		if k, v, ok := strings.Cut(kv, ": "); ok && k == "topology" {
			return v
		}
	}
	return ""
}

// MatrixFaultNamed finds a matrix fault by name.
func MatrixFaultNamed(name string) (MatrixFault, bool) {
	i := slices.IndexFunc(MatrixFaults, func(f MatrixFault) bool { return f.Name == name })
	if i < 0 {
		return MatrixFault{}, false
	}
	return MatrixFaults[i], true
}

// MatrixWork is what every matrix cell does: the same lease, holds,
// clients, workers and keys.
const MatrixWork = "clients: 2, client_mode: processes, workers: 4, keys: 8, ttl: 2s, hold: 200ms, wait_time: 3s, min_acquisitions: 10"

// MatrixLongHold is a fault cell's long hold (each client's first worker,
// 0: none), so that its fault (drawn in 1–3 s, a failover in 3–4.5 s) meets a holder inside its section
// across the recovery: 6 s where the lock renews itself (a crash's restart,
// an election, a promotion take 0.1–4 s here; a Sentinel failover's ~4.5 s
// may outlast it, and the cell then says "not exercised"), below the TTL
// where it cannot renew (it would break by construction). None for the
// quiet cell and where the fault's own holds are long.
func MatrixLongHold(d Design, f MatrixFault) time.Duration {
	switch {
	case f.Name == "none" || f.LongHold:
		return 0
	case d.FixedTTL:
		return 1500 * time.Millisecond
	}
	return 6 * time.Second
}

// MatrixLongHoldRoom is how long a cell runs past its long hold, so that
// the held key can be granted again before it ends (a hold whose key was
// never granted again exercised nothing).
const MatrixLongHoldRoom = 3 * time.Second

// A design's price comes from benchmark cells of the lock alone (no
// resource, no fault), which the fault cells' holds and 8 keys would hide
// (their cycles/s is the holds' pace, their servers mostly idle):
//   - capacity: a short closed-loop sweep on many keys (LadderSteps
//     workers), whose highest cycles/s within the SLO is the capacity;
//   - CommonWork: one open-loop rate every design serves, for latency and
//     server CPU per lock at the same load (26 s: two repeats pool 10,400
//     acquires, over the 10,000 a p99 need is judged on, so that a
//     budgeted run's second round of them decides it);
//   - HotWork: one hot key, for time to lock beside the FIFO ideal.
//
// A fencing token, a guarded write and a watchdog (which renews nothing
// without holds) are the fault cells' (PriceUnset): designs that differ
// by one alone share the price cells of the design before them.
const (
	PriceWork  = "keys: 10000, hold: 0, ttl: 2s, duration: 2s, warmup: 1s"
	CommonWork = "load: open, rate: 200, workers: 16, keys: 10000, hold: 0, ttl: 2s, duration: 26s, warmup: 1s"
	HotWork    = "workers: 8, keys: 1, hold: 2ms, ttl: 2s, wait_time: 3s, duration: 2s, warmup: 1s"
	PriceUnset = "fencing: unset, guarded_write: unset, watchdog: unset"
)

// LadderSteps are the capacity sweep's workers.
var LadderSteps = []int{1, 4, 16, 64}

// Layered lays "key: value, ..." lists over each other, later ones
// winning, into one YAML flow map; a value "unset" takes the key out.
func Layered(lists ...string) string {
	var keys []string
	values := map[string]string{}
	for _, l := range lists {
		for _, kv := range strings.Split(l, ", ") {
			k, v, ok := strings.Cut(kv, ": ")
			if !ok {
				continue
			}
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
			values[k] = v
		}
	}
	var out []string
	for _, k := range keys {
		if values[k] != "unset" {
			out = append(out, k+": "+values[k])
		}
	}
	return "{" + strings.Join(out, ", ") + "}"
}
