package faults

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"lockbench/results"
)

// The fault specs are plain data of the scenario (results.Fault, where a
// result and the scenario's parser find them without this package and its
// servers); these names keep the scheduler's code as it reads.
type (
	Kind = results.FaultKind
	Spec = results.Fault
)

const (
	Crash            = results.FaultCrash
	Partition        = results.FaultPartition
	Latency          = results.FaultLatency
	Reset            = results.FaultReset
	Pause            = results.FaultPause
	ClockJump        = results.FaultClockJump
	Failover         = results.FaultFailover
	ReplicationLag   = results.FaultReplicationLag
	KillBackend      = results.FaultKillBackend
	RestartImmediate = results.RestartImmediate
	RestartNever     = results.RestartNever
)

// Master is what a crash needs of a master (*localmasters.Master).
type Master interface {
	Addr() string
	Pid() int
	Kill() error
	Restart(ctx context.Context) error
}

// Client is a load client that can be stopped and continued.
type Client interface {
	Pause() error
	Resume() error
}

// Links are a local consensus cluster's links between its members
// (etcd's peer links, ZooKeeper's quorum and election links), for a
// partition with link: members.
type Links interface {
	// Isolate cuts each member from every other member, both ways:
	// nothing crosses (ZooKeeper's proxies black-hole the links, as a real
	// partition does; etcd's gates refuse its peers' requests, so that its
	// senders do not wait for ever). Calls nest: a member is rejoined by
	// as many Rejoins.
	Isolate(members []int) error
	// Rejoin ends one Isolate of the members; their links work again.
	Rejoin(members []int) error
	// Proof says, while the member is isolated, whether it could not
	// commit (it is no leader and does not serve, or a write through it
	// failed), in words for the result.
	Proof(ctx context.Context, member int) (detail string, cut bool)
}

// MemberDelay adds latency to every link between a local consensus
// cluster's members (etcd's peer proxies, ZooKeeper's MemberNet).
type MemberDelay interface {
	Delay(latency, jitter time.Duration) error
	ClearDelay() error
}

// NetworkDelay is a Network's every link as a MemberDelay (etcd's peer
// proxies: one in front of each member).
func NetworkDelay(n *Network) MemberDelay { return netDelay{n} }

type netDelay struct{ n *Network }

func (d netDelay) Delay(latency, jitter time.Duration) error {
	return d.n.Latency(nil, nil, latency, jitter)
}
func (d netDelay) ClearDelay() error { return d.n.ClearLatency(nil, nil) }

// Targets are what the faults act on.
type Targets struct {
	Masters []Master
	Net     *Network // needed by partition, latency, reset
	Links   Links    // a consensus cluster's member links (partition with link: members)
	// MemberDelay delays every link between a consensus cluster's members
	// (latency with link: members).
	MemberDelay MemberDelay
	Clocks      map[int]*Clock // masters run under a fake clock, by index
	Clients     []Client       // needed by pause
	// A replicated set's processes by role: its replicas (crash with
	// replica_index; replication_lag stops them) and its monitors, the
	// processes that watch the primary and promote a replica, holding no
	// lock keys (crash with sentinel_index: Redis' Sentinels); and its
	// replication (the links replication_lag cuts).
	Replicas, Monitors []Process
	Replication        Replication
	// Leader, for a consensus cluster (etcd), is the index in Masters of
	// the member that leads now (a crash by role).
	Leader func(ctx context.Context) (int, error)
	// Failover is the servers' own failover: a primary killed and a
	// replica promoted in its place (by Sentinel, or a PostgreSQL
	// standby's promotion).
	Failover Failoverer
}

// FailoverLog is a Failoverer whose servers report its steps (Redis'
// Sentinels): each kill of the primary, sent and reaped, and each
// promotion as they announced it, so that a failover's window is timed
// from the kill and its new primary named.
type FailoverLog interface {
	PrimaryKills() []PrimaryKill
	Promotions() []Promotion
}

// PrimaryKill is one kill of the primary: the signal sent, the process
// reaped.
type PrimaryKill struct{ At, Reaped time.Time }

// Promotion is one switch of the primary, From → To, at At as the servers
// announced it first; Detail is their words for it.
type Promotion struct {
	At               time.Time
	From, To, Detail string
	// WAL, where the servers say it (a PostgreSQL standby's promotion):
	// the position the promoted node had received (its receive position at
	// the promotion) and the old primary's last known write position
	// before its kill, as pg_lsn text ("0/3000148"; "" when not known), and
	// Lacked, the bytes of the primary's WAL the promoted node never had
	// (0 when either is not known): the writes acknowledged past Received
	// are lost.
	ReceivedLSN, PrimaryLSN string
	Lacked                  int64
	// HadUntil is the commit time of the last of the old primary's
	// transactions the promoted node had (zero when not known): a write
	// begun after it and acknowledged before the kill was past what the
	// promoted node had, and lost unless something else kept it.
	HadUntil time.Time
}

// Process is a replicated set's replica or Sentinel: crashed by index,
// paused by replication_lag.
type Process interface {
	Master
	Name() string
	Pause() error
	Resume() error
}

// Replication is a replicated set's replication: CutReplicaLinks closes
// the replicas' links on the current primary (replication_lag, with the
// replicas paused, so that they receive none of its writes).
type Replication interface {
	CutReplicaLinks(ctx context.Context) error
}

// stopped says err is a Restart's once the servers were stopped (the
// cell ended first): not a failure of the fault. A Master's error says so
// with a Stopped method.
func stopped(err error) bool {
	var st interface{ Stopped() bool }
	return errors.As(err, &st) && st.Stopped()
}

// Failoverer kills a service's primary and promotes a replica in its
// place; it says whom it killed, how, and how many locks the primary held
// (-1: not counted).
type Failoverer interface {
	Failover(ctx context.Context) (target, detail string, heldKeys int, err error)
}

// Check reports the first spec the targets cannot serve.
func (t Targets) Check(specs []Spec) error {
	for i, s := range specs {
		for _, m := range s.Masters {
			if m < 0 || m >= len(t.Masters) {
				return fmt.Errorf("faults[%d]: masters: %d does not exist; use 0..%d", i, m, len(t.Masters)-1)
			}
		}
		for _, c := range s.Clients {
			if c < 0 || c >= len(t.Clients) {
				return fmt.Errorf("faults[%d]: clients: %d does not exist; use 0..%d", i, c, len(t.Clients)-1)
			}
		}
		if err := t.checkRoles(i, s); err != nil {
			return err
		}
		if s.Role != "" && t.Leader == nil {
			return fmt.Errorf("faults[%d]: role %s needs a cluster whose members have roles (a consensus service)", i, s.Role)
		}
		k, ok := kinds[s.Kind]
		switch {
		case !ok:
			return fmt.Errorf("faults[%d]: kind %q is not known", i, s.Kind)
		case k.needs != nil:
			if err := k.needs(t, i, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkRoles: a replicated set for its faults, and its replicas and
// monitors named by index.
func (t Targets) checkRoles(i int, s Spec) error {
	if s.ByRole() && len(t.Replicas)+len(t.Monitors) == 0 {
		return fmt.Errorf("faults[%d]: %s needs a replicated set", i, s.Kind)
	}
	for _, r := range s.Replicas {
		if r < 0 || r >= len(t.Replicas) {
			return fmt.Errorf("faults[%d]: replicas: %d does not exist; use 0..%d", i, r, len(t.Replicas)-1)
		}
	}
	for _, r := range s.Sentinels {
		if r < 0 || r >= len(t.Monitors) {
			return fmt.Errorf("faults[%d]: sentinels: %d does not exist; use 0..%d", i, r, len(t.Monitors)-1)
		}
	}
	return nil
}

func orAll(v []int, n int) []int {
	if len(v) == 0 {
		return seq(n)
	}
	return v
}

// EndOfCell is the reason given when Stop undoes a fault.
const EndOfCell = "end of cell"

// Event is one fault action as it happened.
type Event struct {
	At     time.Time
	Kind   string // crash, restart, partition, heal, latency, latency_end, reset, reset_end, pause, resume, clock_jump
	Target string
	Detail string
	// HeldKeys: crash, the keys the master held when it was killed (its
	// lock keys; the masters hold nothing else); -1 when they could not be
	// counted. NoKeys: the process killed holds no lock keys by what it
	// is (a monitor).
	HeldKeys int
	NoKeys   bool
}

// Scheduler applies specs at their times and undoes what is still active
// when stopped.
type Scheduler struct {
	t   Targets
	ctx context.Context

	mu      sync.Mutex
	t0      time.Time
	specs   []Spec
	applied map[int]int // actions that took effect, by spec index
	timers  []*time.Timer
	undo    map[int]func(reason string) // active faults' undo, by spec index
	events  []Event
	errs    []error
	stopped bool
	wg      sync.WaitGroup
}

// NewScheduler checks the specs against the targets. ctx bounds restarts.
func NewScheduler(ctx context.Context, specs []Spec, t Targets) (*Scheduler, error) {
	if err := t.Check(specs); err != nil {
		return nil, err
	}
	return &Scheduler{t: t, ctx: ctx, undo: map[int]func(string){}, applied: map[int]int{}}, nil
}

// Start applies the faults due at 0 now (so they are in place before any
// load; their events are dated t0) and schedules the others at t0 + At.
func (s *Scheduler) Start(t0 time.Time, specs []Spec) {
	if s == nil { // a cell without faults
		return
	}
	s.mu.Lock()
	s.t0 = t0
	s.specs = specs
	s.mu.Unlock()
	for i, sp := range specs {
		if sp.At <= 0 {
			s.apply(i, sp, t0)
			continue
		}
		s.wg.Add(1)
		tm := time.AfterFunc(time.Until(t0.Add(sp.At)), func() {
			defer s.wg.Done()
			s.apply(i, sp, time.Time{})
		})
		s.mu.Lock()
		s.timers = append(s.timers, tm)
		s.mu.Unlock()
	}
}

// Stop cancels pending faults and undoes active ones (heals partitions,
// removes latency, resumes clients). Crashed masters stay as they are.
func (s *Scheduler) Stop() {
	s.mu.Lock()
	s.stopped = true
	for _, tm := range s.timers {
		if tm.Stop() {
			s.wg.Done()
		}
	}
	s.mu.Unlock()
	s.wg.Wait() // faults being applied right now finish first
	s.mu.Lock()
	undo := s.undo
	s.undo = map[int]func(string){}
	s.mu.Unlock()
	for _, u := range undo {
		u(EndOfCell)
	}
}

// Events returns what happened, in order.
func (s *Scheduler) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.events...)
}

// Missed lists the scheduled faults that did not (fully) happen: not due
// before the cell ended, or an action that failed (see Err).
func (s *Scheduler) Missed() []Spec {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Spec
	for i, sp := range s.specs {
		want := 1
		if n := kinds[sp.Kind].actions; n != nil {
			want = n(s, sp)
		}
		if s.applied[i] < want {
			out = append(out, sp)
		}
	}
	return out
}

// took counts one action of spec i that took effect.
func (s *Scheduler) took(i int) {
	s.mu.Lock()
	s.applied[i]++
	s.mu.Unlock()
}

// Err joins the errors of fault actions.
func (s *Scheduler) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.errs...)
}

func (s *Scheduler) event(at time.Time, kind, target, detail string) {
	s.eventKeys(at, kind, target, detail, 0)
}

func (s *Scheduler) eventKeys(at time.Time, kind, target, detail string, heldKeys int) {
	s.record(Event{At: at, Kind: kind, Target: target, Detail: detail, HeldKeys: heldKeys})
}

// record keeps e (at now when it has no time).
func (s *Scheduler) record(e Event) {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	s.mu.Lock()
	s.events = append(s.events, e)
	s.mu.Unlock()
}

func (s *Scheduler) fail(err error) {
	if err == nil {
		return
	}
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
}

// later runs undo after d (never, for d <= 0) and registers it so that
// Stop runs it instead when the cell ends first.
func (s *Scheduler) later(i int, d time.Duration, undo func(reason string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		// Stopped while this fault was being applied: undo it now, in the
		// goroutine Stop is waiting for.
		s.mu.Unlock()
		undo(EndOfCell)
		s.mu.Lock()
		return
	}
	var once sync.Once
	run := func(reason string) { once.Do(func() { undo(reason) }) }
	s.undo[i] = run
	if d <= 0 {
		return // until the end
	}
	s.wg.Add(1)
	s.timers = append(s.timers, time.AfterFunc(d, func() {
		defer s.wg.Done()
		s.mu.Lock()
		delete(s.undo, i)
		s.mu.Unlock()
		run("after " + d.String())
	}))
}

func (s *Scheduler) masterName(m int) string {
	return fmt.Sprintf("master %d (%s)", m, s.t.Masters[m].Addr())
}

func pairName(clients, masters []int) string {
	return "clients " + results.FaultTargets(clients) + " / masters " + results.FaultTargets(masters)
}

func clientsName(clients []int) string { return "clients " + results.FaultTargets(clients) }

// apply puts spec i in place (at is its event time; zero for now) unless
// the scheduler has stopped.
func (s *Scheduler) apply(i int, sp Spec, at time.Time) {
	s.mu.Lock()
	stopped := s.stopped
	s.mu.Unlock()
	if stopped {
		return
	}
	k, ok := kinds[sp.Kind]
	if !ok {
		s.fail(fmt.Errorf("faults: kind %q is not known", sp.Kind))
		return
	}
	k.apply(s, i, sp, at)
}

// partition black-holes the pair and heals it after sp.For.
func (s *Scheduler) partition(i int, sp Spec, at time.Time) {
	if sp.MemberLinks() {
		s.isolate(i, sp, at)
		return
	}
	if err := s.t.Net.Partition(sp.Clients, sp.Masters); err != nil {
		s.fail(err)
		return
	}
	s.took(i)
	s.event(at, "partition", pairName(sp.Clients, sp.Masters), durationDetail(sp.For))
	s.later(i, sp.For, func(reason string) {
		s.fail(s.t.Net.Heal(sp.Clients, sp.Masters))
		s.event(time.Time{}, "heal", pairName(sp.Clients, sp.Masters), reason)
	})
}

// isolate cuts a consensus member (by index or role) off from the other
// members and rejoins it after sp.For. Before it rejoins, the member is
// asked to prove the cut (it could not commit): only then did the fault
// take effect.
func (s *Scheduler) isolate(i int, sp Spec, at time.Time) {
	targets := s.crashTargets(sp)
	idx := make([]int, len(targets))
	for k, tg := range targets {
		idx[k] = tg.index
	}
	if len(idx) == 0 {
		return // memberByRole said why
	}
	if at.IsZero() {
		at = time.Now() // the cut's time, not after Isolate's own look at the members
	}
	if err := s.t.Links.Isolate(idx); err != nil {
		s.fail(errors.Join(err, s.t.Links.Rejoin(idx))) // a cut half made is not left behind
		return
	}
	name := membersName(targets)
	s.event(at, "partition", name+" from the other members", durationDetail(sp.For))
	prove := s.proofBefore(i, sp.For, targets)
	s.later(i, sp.For, func(reason string) {
		prove()
		s.fail(s.t.Links.Rejoin(idx))
		s.event(time.Time{}, "heal", name+" rejoins the other members", reason)
	})
}

// proofTime is what a proof may take (a write through the member that
// times out).
const proofTime = 2500 * time.Millisecond

// proofBefore schedules the proof proofTime before a partition of d heals
// (half way through a shorter one: a member cut a moment ago still
// serves); the heal waits for it, so a proof that overruns delays the
// heal (its event says when). The returned func waits for it, or gives it
// now when the cell ends first (or d is 0: until then).
func (s *Scheduler) proofBefore(i int, d time.Duration, targets []crashTarget) func() {
	var once sync.Once
	run := func() { once.Do(func() { s.proveIsolated(i, targets) }) }
	if d <= 0 {
		return run
	}
	done := make(chan struct{})
	tm := time.AfterFunc(max(d-proofTime, d/2), func() { run(); close(done) })
	return func() {
		if tm.Stop() {
			run()
			return
		}
		<-done
	}
}

// proveIsolated asks each isolated member whether it could commit; the
// fault took effect when none could.
func (s *Scheduler) proveIsolated(i int, targets []crashTarget) {
	cut := 0
	for _, tg := range targets {
		ctx, cancel := context.WithTimeout(s.ctx, proofTime) // Ctrl-C does not wait for it
		detail, ok := s.t.Links.Proof(ctx, tg.index)
		cancel()
		kind := "isolated"
		if !ok {
			kind = "not_isolated"
		} else {
			cut++
		}
		s.event(time.Time{}, kind, tg.name, detail)
	}
	if cut == len(targets) {
		s.took(i)
	}
}

func membersName(targets []crashTarget) string {
	names := make([]string, len(targets))
	for k, tg := range targets {
		names[k] = tg.name
	}
	return strings.Join(names, ", ")
}

// latency delays the masters' replies and clears the delay after sp.For.
func (s *Scheduler) latency(i int, sp Spec, at time.Time) {
	if sp.MemberLinks() {
		s.memberLatency(i, sp, at)
		return
	}
	if err := s.t.Net.Latency(sp.Clients, sp.Masters, sp.Latency, sp.Jitter); err != nil {
		s.fail(err)
		return
	}
	s.took(i)
	s.event(at, "latency", pairName(sp.Clients, sp.Masters), fmt.Sprintf("%v ± %v on replies; %s", sp.Latency, sp.Jitter, durationDetail(sp.For)))
	s.later(i, sp.For, func(reason string) {
		s.fail(s.t.Net.ClearLatency(sp.Clients, sp.Masters))
		s.event(time.Time{}, "latency_end", pairName(sp.Clients, sp.Masters), reason)
	})
}

// memberLatency delays every link between the members and clears the
// delay after sp.For.
func (s *Scheduler) memberLatency(i int, sp Spec, at time.Time) {
	if err := s.t.MemberDelay.Delay(sp.Latency, sp.Jitter); err != nil {
		s.fail(err)
		return
	}
	s.took(i)
	const links = "every link between members"
	s.event(at, "latency", links, fmt.Sprintf("%v ± %v on replies; %s", sp.Latency, sp.Jitter, durationDetail(sp.For)))
	s.later(i, sp.For, func(reason string) {
		s.fail(s.t.MemberDelay.ClearDelay())
		s.event(time.Time{}, "latency_end", links, reason)
	})
}

// reset drops the pair's connections once (no sp.For), or resets every
// connection until sp.For has passed.
func (s *Scheduler) reset(i int, sp Spec, at time.Time) {
	if sp.For <= 0 {
		if err := s.t.Net.Reset(sp.Clients, sp.Masters); err != nil {
			s.fail(err)
			return
		}
		s.took(i)
		s.event(at, "reset", pairName(sp.Clients, sp.Masters), "connections dropped")
		return
	}
	if err := s.t.Net.ResetFor(sp.Clients, sp.Masters); err != nil {
		s.fail(err)
		return
	}
	s.took(i)
	s.event(at, "reset", pairName(sp.Clients, sp.Masters), "every connection reset for "+sp.For.String())
	s.later(i, sp.For, func(reason string) {
		s.fail(s.t.Net.EndReset(sp.Clients, sp.Masters))
		s.event(time.Time{}, "reset_end", pairName(sp.Clients, sp.Masters), reason)
	})
}

// pause stops the clients (or the servers it names: masters by index, an
// etcd member by role) and resumes them after sp.For; the fault took
// effect only when every one paused.
func (s *Scheduler) pause(i int, sp Spec, at time.Time) {
	if sp.Role != "" || len(sp.Masters) > 0 {
		s.pauseServers(i, sp, at)
		return
	}
	cs := orAll(sp.Clients, len(s.t.Clients))
	paused := 0
	for _, c := range cs {
		if err := s.t.Clients[c].Pause(); err != nil {
			s.fail(err)
			continue
		}
		paused++
	}
	if paused == len(cs) {
		s.took(i)
	}
	s.event(at, "pause", clientsName(sp.Clients), durationDetail(sp.For))
	s.later(i, sp.For, func(reason string) {
		for _, c := range cs {
			s.fail(s.t.Clients[c].Resume())
		}
		s.event(time.Time{}, "resume", clientsName(sp.Clients), reason)
	})
}

// pauseServers is pause of servers (SIGSTOP, SIGCONT after sp.For): a
// stop-the-world pause of a master or an etcd member (a leader paused
// loses its leadership to an election among the others).
func (s *Scheduler) pauseServers(i int, sp Spec, at time.Time) {
	targets := s.crashTargets(sp) // the same choice as a crash: by index or by role
	var paused []Client
	name := ""
	for _, tg := range targets {
		c, ok := tg.ms.(Client)
		if !ok {
			s.fail(fmt.Errorf("pause: %s cannot be paused", tg.name))
			continue
		}
		if err := c.Pause(); err != nil {
			s.fail(err)
			continue
		}
		paused, name = append(paused, c), name+tg.name+" "
	}
	if len(targets) > 0 && len(paused) == len(targets) {
		s.took(i)
	}
	name = strings.TrimSpace(name)
	s.event(at, "pause", name, durationDetail(sp.For))
	s.later(i, sp.For, func(reason string) {
		for _, c := range paused {
			s.fail(c.Resume())
		}
		s.event(time.Time{}, "resume", name, reason)
	})
}

// clockJump moves each master's fake wall clock by sp.By (one action per
// master; it is not undone).
func (s *Scheduler) clockJump(i int, sp Spec, at time.Time) {
	for _, m := range orAll(sp.Masters, len(s.t.Masters)) {
		c := s.t.Clocks[m]
		if err := c.Jump(sp.By); err != nil {
			s.fail(err)
			continue
		}
		s.took(i)
		s.event(at, "clock_jump", s.masterName(m), fmt.Sprintf("wall clock %+v, now %+v from real time", sp.By, c.Offset()))
	}
}

func durationDetail(d time.Duration) string {
	if d <= 0 {
		return "until the end"
	}
	return "for " + d.String()
}

// crashTarget is one process a crash kills, with its name in events.
type crashTarget struct {
	name   string
	ms     Master
	index  int  // in Targets.Masters; -1 for a replicated set's replica or monitor
	noKeys bool // a monitor: it holds no lock keys
}

// crashTargets are the processes sp names: masters by index (all when
// none is named, unless it names a replicated set's replicas or
// monitors), then those.
func (s *Scheduler) crashTargets(sp Spec) []crashTarget {
	if sp.Role != "" {
		return s.memberByRole(sp.Role)
	}
	var out []crashTarget
	masters := sp.Masters
	if !sp.ByRole() {
		masters = orAll(masters, len(s.t.Masters))
	}
	for _, m := range masters {
		out = append(out, crashTarget{s.masterName(m), s.t.Masters[m], m, false})
	}
	for _, r := range sp.Replicas {
		out = append(out, crashTarget{roleName(s.t.Replicas[r]), s.t.Replicas[r], -1, false})
	}
	for _, r := range sp.Sentinels {
		out = append(out, crashTarget{roleName(s.t.Monitors[r]), s.t.Monitors[r], -1, true})
	}
	return out
}

// crashCount is how many processes sp kills (a role: one).
func (s *Scheduler) crashCount(sp Spec) int {
	if sp.Role != "" {
		return 1
	}
	return len(s.crashTargets(sp))
}

// memberByRole is the member that leads now, or the first running one
// that does not (none when the cluster names no leader).
func (s *Scheduler) memberByRole(role string) []crashTarget {
	if s.t.Leader == nil {
		s.fail(fmt.Errorf("crash role %s: the cell has no consensus cluster", role))
		return nil
	}
	ctx, cancel := context.WithTimeout(s.ctx, 3*time.Second)
	defer cancel()
	leader, err := s.t.Leader(ctx)
	if err != nil {
		s.fail(err)
		return nil
	}
	for i, m := range s.t.Masters {
		if (role == "leader") == (i == leader) && m.Pid() > 0 {
			return []crashTarget{{fmt.Sprintf("%s, member %d (%s)", role, i, m.Addr()), m, i, false}}
		}
	}
	return nil
}

func roleName(m Process) string { return fmt.Sprintf("%s (%s)", m.Name(), m.Addr()) }

// crash kills the processes (after counting the keys they hold, to show
// they held locks) and restarts them as the spec says.
func (s *Scheduler) crash(i int, sp Spec, at time.Time) {
	delay, err := sp.RestartDelay()
	if err != nil {
		s.fail(err)
		return
	}
	for m, tg := range s.crashTargets(sp) {
		ms, name := tg.ms, tg.name
		keys := heldKeys(ms)
		pid := ms.Pid()
		killed := time.Now()
		if err := ms.Kill(); err != nil {
			s.fail(err)
			continue
		}
		s.took(i)
		s.record(Event{At: at, Kind: "crash", Target: name, Detail: fmt.Sprintf("kill -9 pid %d holding %s keys", pid, keyCount(keys)),
			HeldKeys: keys, NoKeys: tg.noKeys})
		restart := func(reason string) {
			if reason == EndOfCell {
				return // the cell ended first: the master stays down
			}
			if err := ms.Restart(s.ctx); err != nil {
				if !stopped(err) && s.ctx.Err() == nil {
					s.fail(err)
				}
				return
			}
			// Dated when it answers again, not after its keys were counted:
			// a grant may come between the two.
			up := time.Now()
			s.event(up, "restart", name,
				fmt.Sprintf("%v after the kill, pid %d, %s keys on it right after (reloaded, or set since)", up.Sub(killed).Round(time.Millisecond), ms.Pid(), keyCount(heldKeys(ms))))
		}
		switch {
		case delay == 0:
			restart("immediate")
		case delay > 0:
			s.later(1_000_000+i*1000+m, delay, restart)
		}
	}
}

// BackendKiller is a database server that can end the sessions holding
// locks on it (PostgreSQL's pg_terminate_backend).
type BackendKiller interface {
	KillHolders(ctx context.Context) (int, error)
}

// killBackends ends the lock holders' sessions on each server of sp: the
// server frees their locks; their clients learn it on their next call.
func (s *Scheduler) killBackends(i int, sp Spec, at time.Time) {
	for _, m := range orAll(sp.Masters, len(s.t.Masters)) {
		bk, ok := s.t.Masters[m].(BackendKiller)
		if !ok {
			s.fail(fmt.Errorf("kill_backend: %s is not a database server (a service whose sessions are backends)", s.masterName(m)))
			continue
		}
		ctx, cancel := context.WithTimeout(s.ctx, 3*time.Second)
		n, err := bk.KillHolders(ctx)
		cancel()
		if err != nil {
			s.fail(err)
			continue
		}
		s.eventKeys(at, string(KillBackend), s.masterName(m), fmt.Sprintf("pg_terminate_backend of the %d sessions holding locks", n), n)
		s.took(i)
	}
}

// KeyCounter is a server that counts the keys it holds (a Redis master,
// an etcd member).
type KeyCounter interface {
	HeldKeys(ctx context.Context) int
}

// heldKeys counts the keys on ms; -1 when it cannot.
func heldKeys(ms Master) int {
	kc, ok := ms.(KeyCounter)
	if !ok {
		return -1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	return kc.HeldKeys(ctx)
}

func keyCount(n int) string {
	if n < 0 {
		return "?"
	}
	return strconv.Itoa(n)
}

// failover kills the servers' primary for a replica to be promoted in
// its place (Targets.Failover), then lets the replicas a replication_lag
// stopped go on: they wake to a dead primary, as lagging replicas do, and
// the one promoted has what it had.
func (s *Scheduler) failover(i int, at time.Time) {
	target, detail, keys, err := s.t.Failover.Failover(s.ctx)
	if err != nil {
		s.fail(err)
		return
	}
	s.took(i)
	if at.IsZero() { // now: the kill's own time where the servers logged it
		at = time.Now()
		if log, ok := s.t.Failover.(FailoverLog); ok {
			if ks := log.PrimaryKills(); len(ks) > 0 {
				at = ks[len(ks)-1].At
			}
		}
	}
	s.eventKeys(at, "failover", target, detail, keys)
	s.endLags("the master was killed")
}

// endLags undoes the replication lags in place now.
func (s *Scheduler) endLags(reason string) {
	s.mu.Lock()
	var undo []func(string)
	for j, sp := range s.specs {
		if u, ok := s.undo[j]; ok && sp.Kind == ReplicationLag {
			undo = append(undo, u)
			delete(s.undo, j)
		}
	}
	s.mu.Unlock()
	for _, u := range undo {
		u(reason)
	}
}

// replicationLag stops the replicas (SIGSTOP) and cuts their links on the
// master, so that they receive none of its writes from now on (what a
// lagging replica lacks), until sp.For ends or the master is killed.
// Sentinel would point a replica that replicates from anywhere but the
// master (a delaying proxy) back at it, hence no proxy.
func (s *Scheduler) replicationLag(i int, sp Spec, at time.Time) {
	var stopped []Process
	for _, r := range orAll(sp.Replicas, len(s.t.Replicas)) {
		if err := s.t.Replicas[r].Pause(); err != nil {
			s.fail(err)
			continue
		}
		stopped = append(stopped, s.t.Replicas[r])
	}
	target := "replicas " + results.FaultTargets(sp.Replicas)
	resume := func(reason string) {
		for _, m := range stopped {
			s.fail(m.Resume())
		}
		s.event(time.Time{}, "replication_resumed", target, reason)
	}
	if err := s.t.Replication.CutReplicaLinks(s.ctx); err != nil {
		s.fail(err)
		resume("the links could not be cut")
		return
	}
	s.took(i)
	s.event(at, "replication_lag", target, "stopped, their links to the master cut: they receive none of its writes; "+durationDetail(sp.For))
	s.later(i, sp.For, resume)
}
