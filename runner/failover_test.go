package runner

import (
	"strings"
	"testing"

	"lockbench/internal/bound"
)

// A short failover cell: the master of a replicated set is killed, the
// clients (one of them a process of its own, its Sentinel addresses
// passed as JSON) follow Sentinel to the promoted replica; the result has
// the kill, the +switch-master and the unavailability window with the
// acquires that failed in it, and nothing the cell started is left.
func TestFailoverCellShowsItsWindow(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	r := runFaultDoc(t, `
settings: {topology: replicated, replicas: 1, sentinels: 1, down_after: 300ms, failover_timeout: 1s,
  clients: 2, client_mode: processes, workers: 4, keys: 16, ttl: 2s, hold: 50ms, duration: 5s}
faults:
  - {at: 1s, kind: failover}
`)
	if len(r.Run.Failovers) != 1 {
		t.Fatalf("failovers %+v, want one", r.Run.Failovers)
	}
	f := r.Run.Failovers[0]
	t.Logf("%s", f.Text())
	// Bounds: the kill no earlier than its 1 s (a loaded machine only
	// delays it) and early enough that its window fits the 5 s cell; the
	// window longer than down-after (Sentinel's own wait), and ending
	// within the 2 s TTL of the +switch-master however long Sentinel took
	// (by then every key the old master held has expired on the new one).
	switch {
	case !bound.Min(t, "failover.killed_at_s", f.KilledAt, 0.9) || !bound.Max(t, "failover.killed_at_s", f.KilledAt, 2.5) || f.HeldKeys <= 0:
		t.Errorf("killed at %.3f s holding %d keys: want 0.9-2.5 s, holding locks", f.KilledAt, f.HeldKeys)
	case f.SwitchAt == nil || *f.SwitchAt <= f.KilledAt || f.NewMaster == "" || strings.Contains(f.Master, f.NewMaster):
		t.Errorf("no +switch-master to another process after the kill: %+v", f)
	case f.Unavailable == nil || f.FirstAcquireAt == nil || !bound.Min(t, "failover.unavailable_s", *f.Unavailable, 0.3) ||
		!bound.Max(t, "failover.first_acquire_after_switch_s", *f.FirstAcquireAt-*f.SwitchAt, 2.0):
		t.Errorf("unavailable %v s, first acquire at %v s: want above down-after (0.3 s), and the first acquire within the 2 s TTL of the switch", f.Unavailable, f.FirstAcquireAt)
	case f.Errors == 0:
		t.Errorf("no acquire failed while the set had no master: %+v", f)
	}
	var kinds []string
	for _, e := range r.Run.Events {
		kinds = append(kinds, e.Kind)
	}
	if strings.Join(kinds, ",") != "failover,switch_master" {
		t.Errorf("events %v, want the failover and the switch", kinds)
	}
	// The metric is the cell's outage span (the longest with no acquire
	// won after the fault), at least the failover's time to its first
	// grant (10 ms allowed: the two start from the event and the kill).
	if u, v := r.Run.Safety.Unavailable, r.Value("unavailable_s"); u == nil || v != u.Seconds || u.Seconds < *f.Unavailable-0.01 {
		t.Errorf("unavailable_s %v (span %+v), want the span, at least the failover's %v s", v, u, *f.Unavailable)
	}
	assertCleanedUp(t, r, tmp)
}

// lagDoc is the shipped chaos-failover's replicated cells, shorter: the
// replicas stop receiving writes, then the master is killed (3 replicas:
// after it WAIT 2 still has two).
const lagDoc = `
settings: {topology: replicated, replicas: 3, sentinels: 1, down_after: 300ms, failover_timeout: 1s, wait_replicas: %WAIT%,
  clients: 2, workers: 8, keys: 16, ttl: 5s, hold: 2s, hold_distribution: uniform, duration: 10s}
faults:
  - {at: 500ms, kind: replication_lag}
  - {at: 5s, kind: failover}
`

// Without WAIT a promoted replica that lagged lacks the locks taken while
// it did: their keys are taken again while held (violations, lost
// updates). With WAIT 2 none of those locks was granted (few acks): none
// is lost.
//
// WAIT 0's loss is a race (no lock taken while the replicas lagged may
// be taken again after the promotion): a run without it earns one more
// (untilShown). WAIT 2's refusals are no race: every acquire in the 4.5 s
// lag waits for acks that do not come.
func TestReplicationLagThenFailover(t *testing.T) {
	for _, wait := range []string{"0", "2"} {
		doc := strings.Replace(lagDoc, "%WAIT%", wait, 1)
		run := runFaultDoc
		if wait == "0" {
			run = func(t *testing.T, doc string) *CellResult {
				return untilShown(t, doc, "WAIT 0's lost locks", overlapAndLoss)
			}
		}
		r := run(t, doc)
		s, o := r.Run.Safety, r.Run.Outcomes
		t.Logf("WAIT %s: %d violations, %d lost updates, %d few acks; %s", wait, s.Violations, s.LostUpdates, o.Unconfirmed, r.Run.Failovers[0].Text())
		switch {
		case wait == "0" && (s.Violations == 0 || s.LostUpdates == 0):
			t.Errorf("WAIT 0: %d violations, %d lost updates: want both above 0", s.Violations, s.LostUpdates)
		case wait == "2" && (s.Violations != 0 || s.LostUpdates != 0 || o.Unconfirmed == 0):
			t.Errorf("WAIT 2: %d violations, %d lost updates, %d few acks: want none lost and the lagging acquires refused", s.Violations, s.LostUpdates, o.Unconfirmed)
		}
	}
}

// WAIT 1 with two replicas, the lagging one preferred by Sentinel
// (replica-priority): the replica that keeps up acknowledges every lock,
// the lagging one is promoted, and acknowledged locks are lost anyway
// (what Redisson's users report). Fails if WAIT 1 kept them.
func TestWait1LaggingPreferredReplicaLosesLocks(t *testing.T) {
	doc := `
settings: {topology: replicated, replicas: 2, sentinels: 1, down_after: 300ms, failover_timeout: 1s, wait_replicas: 1,
  replica_priority: [10, 100], clients: 2, workers: 8, keys: 16, ttl: 5s, hold: 2s, hold_distribution: uniform, duration: 10s}
faults:
  - {at: 3s, kind: replication_lag, replica_index: [0]}
  - {at: 5s, kind: failover}
`
	// A race, shown in most runs (1-6 violations): once in CI none of the
	// locks the lagging replica lacked was taken again before Sentinel,
	// which moves between the two replicas every second or so here, made
	// the other one master. One miss earns one more run; two fail.
	r := untilShown(t, doc, "the lost locks' overlap and lost update", overlapAndLoss)
	s := r.Run.Safety
	t.Logf("Sentinel switched %d times", switches(r))
	if len(r.Run.Failovers) != 1 {
		t.Fatalf("failovers %+v, want one", r.Run.Failovers)
	}
	t.Logf("%d violations, %d lost updates, %d few acks; %s", s.Violations, s.LostUpdates, r.Run.Outcomes.Unconfirmed, r.Run.Failovers[0].Text())
	if s.Violations == 0 || s.LostUpdates == 0 {
		t.Errorf("%d violations, %d lost updates: want both above 0 (the promoted replica lacked the acknowledged locks)", s.Violations, s.LostUpdates)
	}
}

// switches counts a cell's +switch-master events.
func switches(r *CellResult) int {
	n := 0
	for _, e := range r.Run.Events {
		if e.Kind == "switch_master" {
			n++
		}
	}
	return n
}
