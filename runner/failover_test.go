package runner

import (
	"strings"
	"testing"
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
	switch {
	case f.KilledAt < 0.9 || f.KilledAt > 1.5 || f.HeldKeys <= 0:
		t.Errorf("killed at %.3f s holding %d keys: want about 1 s, holding locks", f.KilledAt, f.HeldKeys)
	case f.SwitchAt == nil || *f.SwitchAt <= f.KilledAt || f.NewMaster == "" || strings.Contains(f.Master, f.NewMaster):
		t.Errorf("no +switch-master to another process after the kill: %+v", f)
	case f.Unavailable == nil || *f.Unavailable <= 0.3 || *f.Unavailable > 3.5:
		t.Errorf("unavailable %v s: want above down-after (0.3 s) and below 3.5 s", f.Unavailable)
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
func TestReplicationLagThenFailover(t *testing.T) {
	for _, wait := range []string{"0", "2"} {
		r := runFaultDoc(t, strings.Replace(lagDoc, "%WAIT%", wait, 1))
		s, o := r.Run.Safety, r.Run.Outcomes
		t.Logf("WAIT %s: %d violations, %d lost updates, %d few acks; %s", wait, s.Violations, s.LostUpdates, o.FewAcks, r.Run.Failovers[0].Text())
		switch {
		case wait == "0" && (s.Violations == 0 || s.LostUpdates == 0):
			t.Errorf("WAIT 0: %d violations, %d lost updates: want both above 0", s.Violations, s.LostUpdates)
		case wait == "2" && (s.Violations != 0 || s.LostUpdates != 0 || o.FewAcks == 0):
			t.Errorf("WAIT 2: %d violations, %d lost updates, %d few acks: want none lost and the lagging acquires refused", s.Violations, s.LostUpdates, o.FewAcks)
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
	r := runFaultDoc(t, doc)
	// A race, shown in most runs (1-6 violations): once in CI none of the
	// locks the lagging replica lacked was taken again before Sentinel,
	// which moves between the two replicas every second or so here, made
	// the other one master. One miss earns one more run; two fail.
	if s := r.Run.Safety; s.Violations == 0 || s.LostUpdates == 0 {
		t.Logf("%d violations, %d lost updates (Sentinel switched %d times): running the cell once more", s.Violations, s.LostUpdates, switches(r))
		r = runFaultDoc(t, doc)
	}
	s := r.Run.Safety
	if len(r.Run.Failovers) != 1 {
		t.Fatalf("failovers %+v, want one", r.Run.Failovers)
	}
	t.Logf("%d violations, %d lost updates, %d few acks; %s", s.Violations, s.LostUpdates, r.Run.Outcomes.FewAcks, r.Run.Failovers[0].Text())
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
