package results

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// FaultKind names a fault.
type FaultKind string

const (
	FaultCrash     FaultKind = "crash"      // kill -9 masters, restart them at once, later or never
	FaultPartition FaultKind = "partition"  // black-hole clients ↔ masters
	FaultLatency   FaultKind = "latency"    // delay replies from masters to clients
	FaultReset     FaultKind = "reset"      // drop connections (once, or for a while)
	FaultPause     FaultKind = "pause"      // stop clients (SIGSTOP, or a pause hook) and resume them
	FaultClockJump FaultKind = "clock_jump" // move a master's wall clock (libfaketime)
	// FaultFailover kills -9 a replicated set's current master: Sentinel
	// promotes a replica.
	FaultFailover FaultKind = "failover"
	// FaultReplicationLag stops replicas receiving the master's writes
	// (SIGSTOP, their links cut) until For ends or the master is killed.
	FaultReplicationLag FaultKind = "replication_lag"
	// FaultKillBackend ends a database's lock-holding sessions on the
	// server (PostgreSQL's pg_terminate_backend): their locks are freed
	// while their clients go on.
	FaultKillBackend FaultKind = "kill_backend"
)

// FaultKinds lists every fault kind.
var FaultKinds = []FaultKind{FaultCrash, FaultPartition, FaultLatency, FaultReset, FaultPause, FaultClockJump, FaultFailover, FaultReplicationLag, FaultKillBackend}

// Restart policies of a crash.
const (
	RestartImmediate = "immediate"
	RestartNever     = "never"
)

// Fault is one scheduled fault of a scenario. Empty Masters or Clients mean
// all of them. Replicas and Sentinels are a replicated set's processes by
// role (crash, replication_lag: empty means all replicas); a crash of
// only those leaves the master be.
type Fault struct {
	At time.Duration // after the load starts
	// AtUntil, when set: the fault's moment is drawn per run, uniformly in
	// At..AtUntil (DrawMoments), so that repeats meet the design at
	// different phases of its work; Drawn says At is the drawn moment then,
	// DrawnFrom the span's start.
	AtUntil   time.Duration `json:",omitempty"`
	Drawn     bool          `json:",omitempty"`
	DrawnFrom time.Duration `json:",omitempty"`
	Kind      FaultKind
	Masters   []int
	Clients   []int
	Replicas  []int
	Sentinels []int
	For       time.Duration // partition, latency, reset, pause: 0 = until the end
	Restart   string        // crash: immediate, never or a delay such as 2.5s
	Latency   time.Duration // latency
	Jitter    time.Duration // latency
	By        time.Duration // clock_jump
	// Role: crash, a consensus cluster's member by its role when the fault
	// fires (leader or follower) instead of by index.
	Role string
	// Link: partition and latency, which links: "" (or LinkClient)
	// between clients and servers, LinkMembers between a consensus
	// cluster's members (partition: the named member from every other,
	// both ways; latency: every link).
	Link string
}

// Links a partition cuts.
const (
	LinkClient  = "client"
	LinkMembers = "members"
)

func isNetworkKind(k FaultKind) bool {
	return k == FaultPartition || k == FaultLatency || k == FaultReset
}

// MemberLinks says the fault acts on a consensus cluster's links between
// members (a member cut off, or every link delayed).
func (s Fault) MemberLinks() bool { return s.Link == LinkMembers }

// RestartDelay parses Restart: 0 for immediate, -1 for never.
func (s Fault) RestartDelay() (time.Duration, error) {
	switch s.Restart {
	case "", RestartImmediate:
		return 0, nil
	case RestartNever:
		return -1, nil
	}
	d, err := time.ParseDuration(s.Restart)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("restart: %q is not accepted; use immediate, never or a delay such as 2.5s", s.Restart)
	}
	return d, nil
}

// String is a short description for plans and events.
func (s Fault) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s at %v", s.Kind, s.At)
	switch {
	case s.AtUntil > 0 && s.Drawn:
		fmt.Fprintf(&b, " (drawn in %v..%v)", s.From(), s.AtUntil)
	case s.AtUntil > 0:
		fmt.Fprintf(&b, "..%v", s.AtUntil)
	}
	switch {
	case s.Kind == FaultReplicationLag:
		fmt.Fprintf(&b, " replicas %s", FaultTargets(s.Replicas))
	case s.MemberLinks() && s.Kind == FaultLatency:
		b.WriteString(" every link between members")
	case s.MemberLinks() && s.Role != "":
		b.WriteString(" the " + s.Role + " from the other members")
	case s.MemberLinks():
		fmt.Fprintf(&b, " members %s from the others", FaultTargets(s.Masters))
	case (s.Kind == FaultCrash || s.Kind == FaultPause) && s.Role != "":
		b.WriteString(" the " + s.Role)
	case s.Kind == FaultPause && len(s.Masters) > 0:
		fmt.Fprintf(&b, " masters %s", FaultTargets(s.Masters))
	case s.Kind == FaultCrash && s.ByRole():
		s.roles(&b)
	case s.Kind != FaultPause && s.Kind != FaultFailover:
		fmt.Fprintf(&b, " masters %s", FaultTargets(s.Masters))
	}
	serverPause := s.Kind == FaultPause && (len(s.Masters) > 0 || s.Role != "")
	if (isNetworkKind(s.Kind) && !s.MemberLinks()) || (s.Kind == FaultPause && !serverPause) {
		fmt.Fprintf(&b, " clients %s", FaultTargets(s.Clients))
	}
	switch s.Kind {
	case FaultCrash:
		r := s.Restart
		if r == "" {
			r = RestartImmediate
		}
		if d, err := s.RestartDelay(); err == nil && d > 0 {
			r = "after " + d.String()
		}
		b.WriteString(" restart " + r)
	case FaultLatency:
		fmt.Fprintf(&b, " %v±%v", s.Latency, s.Jitter)
	case FaultClockJump:
		fmt.Fprintf(&b, " by %+v", s.By)
	}
	if s.For > 0 {
		fmt.Fprintf(&b, " for %v", s.For)
	}
	return b.String()
}

// ByRole says a crash names a replicated set's replicas or Sentinels.
func (s Fault) ByRole() bool { return len(s.Replicas) > 0 || len(s.Sentinels) > 0 }

func (s Fault) roles(b *strings.Builder) {
	for _, r := range []struct {
		name string
		v    []int
	}{{"masters", s.Masters}, {"replicas", s.Replicas}, {"sentinels", s.Sentinels}} {
		if len(r.v) > 0 {
			fmt.Fprintf(b, " %s %s", r.name, FaultTargets(r.v))
		}
	}
}

// FaultTargets writes indices as "0,2", or "all" for none.
func FaultTargets(v []int) string {
	if len(v) == 0 {
		return "all"
	}
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// From is the start of the span the fault's moment is drawn in (its At
// before the draw).
func (s Fault) From() time.Duration {
	if s.Drawn {
		return s.DrawnFrom
	}
	return s.At
}

// DrawMoments draws the moment of each fault with an AtUntil, uniformly in
// its span, from the run's seed and its repeat (1 for a single run): the
// same seed and repeat draw the same moments, another repeat others.
func DrawMoments(fs []Fault, seed uint64, repeat int) []Fault {
	rng := rand.New(rand.NewPCG(seed, uint64(repeat)))
	out := slices.Clone(fs)
	for i, f := range out {
		if f.AtUntil <= f.At || f.Drawn {
			continue
		}
		out[i].DrawnFrom, out[i].Drawn = f.At, true
		out[i].At = f.At + time.Duration(rng.Int64N(int64(f.AtUntil-f.At)+1)).Round(time.Millisecond)
	}
	return out
}
