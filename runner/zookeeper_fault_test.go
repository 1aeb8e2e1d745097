package runner

import (
	"errors"
	"strings"
	"testing"

	"lockbench/check"
	"lockbench/internal/redistest"
	"lockbench/zklock"
)

// zkFaultBase is a short zookeeper fault cell: 3 servers, 2 client
// processes, 2 s sessions; %FENCING% and %FAULT% are the cell's. 8
// workers a client on 8 keys: a paused client holds several keys in the
// middle of their use (one stale write alone may fail on resume and prove
// nothing).
const zkFaultBase = `
settings: {topology: zookeeper, local: 3, persistence: no-fsync, clients: 2, client_mode: processes, workers: 8, keys: 8,
  ttl: 2s, wait_strategy: queue, wait_time: 3s, hold: 200ms, duration: 8s, fencing: %FENCING%}
faults:
  - %FAULT%
`

func zkFaultDoc(fencing, fault string) string {
	return strings.NewReplacer("%FENCING%", fencing, "%FAULT%", fault).Replace(zkFaultBase)
}

func requireZookeeper(t *testing.T) {
	t.Helper()
	if _, ok := zklock.ServerPath(); !ok {
		redistest.RequireTool(t, errors.New("zookeeper not installed (apt-get install "+zklock.Package+")"))
	}
}

// A client process paused (SIGSTOP) past its session: the ensemble
// expires it and hands its locks on, so two clients hold them; without
// fencing updates are lost, fenced with the holder znode's czxid none is.
// A run in which the race did not show earns one more (untilShown).
func TestZookeeperPausePastSession(t *testing.T) {
	requireZookeeper(t)
	// 4 s: past the 2 s session, its tick and the client's ping lag by as
	// much again, as in the shipped scenario (3.5 s once left no overlap).
	pause := "{at: 1.5s, kind: pause, client_index: [0], for: 4s}"
	r := untilShown(t, zkFaultDoc("false", pause), "the expired holder's overlap and lost update", overlapAndLoss)
	if s := r.Run.Safety; s.LostUpdates == 0 || s.Violations == 0 {
		t.Fatalf("no fencing: %d lost updates (want > 0), %d violations (want > 0: the expired holder's use overlaps the next one's)", s.LostUpdates, s.Violations)
	}
	wantLag(t, r.Run.Safety.LockLoss)
	wantHistory(t, r, dirOf[r], check.NotLinearizable)
	r = untilShown(t, zkFaultDoc("true", pause), "the expired holder's overlap and refused write", overlapAndRejected)
	if s := r.Run.Safety; s.LostUpdates != 0 || s.StaleWritesRejected == 0 || s.Violations == 0 {
		t.Fatalf("czxid fencing: %d lost updates (want 0), %d stale writes rejected (want > 0), %d violations (want > 0)",
			s.LostUpdates, s.StaleWritesRejected, s.Violations)
	}
	if cc := r.Run.Config; cc.Topology != "zookeeper" || !strings.HasPrefix(cc.ServerVersion, "zookeeper ") {
		t.Fatalf("config: topology %q server %q", cc.Topology, cc.ServerVersion)
	}
}

// The leader killed mid-run (and restarted) is followed: the others elect
// another, the sessions move, nothing is lost; the crash names the server
// by its role and the ephemeral znodes it held.
// The restarted server is back once it leads or follows (an election
// over), 0.8–2.3 s after the kill here: a run in which that left the
// clients less than sessionRoom before the cell's end earns one more
// (untilRoom); a second such run fails.
func TestZookeeperLeaderCrash(t *testing.T) {
	requireZookeeper(t)
	doc := zkFaultDoc("false", "{at: 2s, kind: crash, role: leader, restart: immediate}")
	r := untilRoom(t, doc, "zookeeper.leader_crash_back_before_end", "restart", sessionRoom)
	if s := r.Run.Safety; s.LostUpdates != 0 || s.Violations != 0 || len(r.NotJudged) > 0 || s.JudgedHolds == 0 {
		t.Fatalf("leader crash: %d holds judged, %d lost updates, %d violations, not judged %v", s.JudgedHolds, s.LostUpdates, s.Violations, r.NotJudged)
	}
	var crash string
	for _, e := range r.Run.Events {
		if e.Kind == "crash" {
			crash = e.Target + " " + e.Detail
		}
	}
	if !strings.HasPrefix(crash, "leader, member ") || !strings.Contains(crash, "holding ") || strings.Contains(crash, "holding ? keys") {
		t.Fatalf("crash event %q: want the leader by role and the znodes it held", crash)
	}
	if len(r.Run.Failovers) != 1 || r.Run.Failovers[0].Kind != "election" || r.Run.Failovers[0].Unavailable == nil {
		t.Fatalf("failovers %+v: want one election with its window", r.Run.Failovers)
	}
	t.Logf("%s", r.Run.Failovers[0].Text())
}

// The guarded write: the counter in a znode, set in one multi that checks
// the holder's lock znode and the version read. The paused client's
// session expired with its znodes: its late writes are refused, nothing is
// lost where the plain cell loses updates.
// A run in which the race did not show earns one more (untilShown).
func TestZookeeperGuardedWrite(t *testing.T) {
	requireZookeeper(t)
	doc := strings.Replace(zkFaultDoc("false", "{at: 1.5s, kind: pause, client_index: [0], for: 4s}"), "fencing: false}", "fencing: false, guarded_write: true}", 1)
	r := untilShown(t, doc, "a late guarded write", lateWriteRefused)
	if s := r.Run.Safety; s.LostUpdates != 0 || s.StaleWritesRejected+s.WritesInDoubt == 0 || !s.GuardedWrite {
		t.Fatalf("guarded write: %d lost updates (want 0), %d refused + %d in doubt (want > 0: the late writes did not land acknowledged), guarded %v", s.LostUpdates, s.StaleWritesRejected, s.WritesInDoubt, s.GuardedWrite)
	}
	wantHistory(t, r, dirOf[r], check.Linearizable)
}
