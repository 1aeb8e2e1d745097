package runner

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"lockbench/check"
	"lockbench/internal/redistest"
	"lockbench/pglock"
	"lockbench/results"
)

// pgFaultBase is a short postgres fault cell: 1 server, 2 client
// processes, a connection per worker; %FAULT% is the cell's.
const pgFaultBase = `
settings: {topology: postgres, clients: 2, client_mode: processes, workers: 8, keys: 8,
  wait_strategy: queue, wait_time: 3s, hold: 150ms, duration: 8s}
faults:
  - %FAULT%
`

func requirePostgres(t *testing.T) {
	t.Helper()
	if _, ok := pglock.BinDir(); !ok {
		redistest.RequireTool(t, errors.New("postgres not installed (apt-get install "+pglock.Package+")"))
	}
}

// The lock holders' backends ended on the server (pg_terminate_backend):
// their locks go to the next waiters while their clients, mid-use, write
// back what they read: two holders and lost updates, which the history
// judge sees too.
// A run in which the race did not show earns one more (untilShown).
func TestPostgresKilledBackend(t *testing.T) {
	requirePostgres(t)
	// 4 keys for 16 workers: every killed holder has a waiter queued on
	// its key. On 8, a CI run killed 4 holders none of whose keys had one
	// (0 violations, 0 lost: nothing took the freed locks in time).
	doc := strings.NewReplacer("%FAULT%", "{at: 2s, kind: kill_backend}", "keys: 8", "keys: 4").Replace(pgFaultBase)
	r := untilShown(t, doc, "a freed lock taken again and an update lost", overlapAndLoss)
	if s := r.Run.Safety; s.LostUpdates == 0 || s.Violations == 0 {
		t.Fatalf("killed backends: %d lost updates (want > 0), %d violations (want > 0)", s.LostUpdates, s.Violations)
	}
	wantLag(t, r.Run.Safety.LockLoss)
	wantHistory(t, r, dirOf[r], check.NotLinearizable)
	var killed string
	for _, e := range r.Run.Events {
		if e.Kind == "kill_backend" {
			killed = e.Detail
		}
	}
	if !strings.Contains(killed, "pg_terminate_backend of the ") || strings.Contains(killed, "of the 0 sessions") {
		t.Fatalf("kill_backend event %q: want the sessions it ended", killed)
	}
}

// The server (postmaster and backends) killed and restarted once every
// hold has ended (1 s: holds are 150 ms, at most 300): every lock is
// freed, nothing is lost, the clients come back; the result gives the
// recovery window. Restarted at once, the server can grant a lock whose
// holder, never told, still uses it: lockbench choose's postgres × crash.
//
// The restart's own length is the machine's: 0.4 s idle here, 5.4 s in a
// CI run whose server came back after the cell's 8 s had ended, so the
// run judged no recovery (its data directory unsynced then: see
// pglock.Options.Synced). A run whose restart left the clients less than
// reconnectRoom before the cell's end earns one more (untilRoom); a
// second such run fails.
func TestPostgresServerCrash(t *testing.T) {
	requirePostgres(t)
	doc := strings.Replace(pgFaultBase, "%FAULT%", "{at: 2s, kind: crash, master_index: [0], restart: 1s}", 1)
	r := untilRoom(t, doc, "postgres.crash_back_before_end", "restart", reconnectRoom)
	if s := r.Run.Safety; s.LostUpdates != 0 || s.Violations != 0 || s.JudgedHolds == 0 {
		t.Fatalf("server crash: %d holds judged, %d lost updates, %d violations", s.JudgedHolds, s.LostUpdates, s.Violations)
	}
	if len(r.Run.Failovers) != 1 || r.Run.Failovers[0].Kind != "recovery" || r.Run.Failovers[0].Unavailable == nil {
		t.Fatalf("failovers %+v: want one recovery with its window", r.Run.Failovers)
	}
	if r.Run.Config.Topology != "postgres" {
		t.Fatalf("topology %q", r.Run.Config.Topology)
	}
	t.Logf("%s", r.Run.Failovers[0].Text())
}

// reconnectRoom is how long before the cell's end a PostgreSQL server
// (restarted, or the replica promoted) must be serving for its clients to
// be judged on coming back: a client whose connection failed tries again
// within internal/slots' reopen cap (250 ms), and the restart or failover
// event is logged once the server answers; four caps of margin for a
// loaded machine. The restart itself took 1.9–4.8 s beside scripts/stress's
// runs here (PostgreSQL's crash recovery fsyncs its data directory first),
// 0.4 s idle.
const reconnectRoom = time.Second

// The database's own guarded write: the counter in a table, updated on the
// holding session under pg_try_advisory_xact_lock. The killed sessions
// cannot write: their updates are refused, and nothing is lost where the
// plain cell (TestPostgresKilledBackend) loses updates.
// A run in which the race did not show earns one more (untilShown).
func TestPostgresGuardedWrite(t *testing.T) {
	requirePostgres(t)
	doc := strings.Replace(pgFaultBase, "%FAULT%", "{at: 2s, kind: kill_backend}", 1)
	doc = strings.Replace(doc, "duration: 8s}", "duration: 8s, guarded_write: true}", 1)
	r := untilShown(t, doc, "a killed session's refused write", lateWriteRefused)
	if s := r.Run.Safety; s.LostUpdates != 0 || s.StaleWritesRejected+s.WritesInDoubt == 0 || !s.GuardedWrite || s.AcknowledgedWrites < 50 {
		t.Fatalf("guarded write: %d lost updates (want 0), %d refused + %d in doubt (want > 0), guarded %v, %d acknowledged", s.LostUpdates, s.StaleWritesRejected, s.WritesInDoubt, s.GuardedWrite, s.AcknowledgedWrites)
	}
	wantHistory(t, r, dirOf[r], check.Linearizable)
}

// A primary with a streaming replica, the primary killed and the replica
// promoted: the clients find the new primary through their multi-host
// URL, and the result gives the failover window. What it costs is
// measured, not required here: advisory locks are in the primary's memory,
// never in its WAL, so the promoted one grants them again while old
// holders, mid-use, write back what they read when the promotion is
// quicker than their holds (Redis failover's race); and a write the old
// primary acknowledged but had not streamed yet is gone (asynchronous
// replication), guarded or not.
// The failover is dated at the kill, its switch_master event once the
// promotion returned (0.3–0.8 s after the kill here, but 5.2 s in 3 of 7
// runs), and the window runs from the kill: no lock is won before the
// promoted server serves (dated at the promotion's end, the window left
// the promotion out). The cell runs 10 s, not 8, and a run in which the
// promotion left the clients less than reconnectRoom before the load's
// end earns one more (untilRoom); a second such run fails.
func TestPostgresReplicaPromoted(t *testing.T) {
	requirePostgres(t)
	doc := strings.Replace(strings.Replace(pgFaultBase, "%FAULT%", "{at: 2s, kind: failover}", 1), "topology: postgres,", "topology: postgres, replicas: 1,", 1)
	doc = strings.Replace(doc, "duration: 8s}", "duration: 10s}", 1)
	r := untilRoom(t, doc, "postgres.promoted_before_end", "switch_master", reconnectRoom)
	killed, _, _ := faultEvent(r, "failover")
	promoted, _, _ := faultEvent(r, "switch_master")
	s := r.Run.Safety
	var f *results.Failover
	for i := range r.Run.Failovers {
		f = &r.Run.Failovers[i]
	}
	switch {
	case f == nil || f.Kind != "failover" || !strings.HasPrefix(f.Master, "primary "):
		t.Fatalf("failovers %+v: want the primary's", r.Run.Failovers)
	case f.FirstAcquireAt == nil:
		t.Fatalf("no acquire won after the promotion: the clients did not find the new primary")
	case math.Abs(f.KilledAt-killed) > 0.001 || promoted <= killed:
		t.Fatalf("failover %s: want its window from the kill (failover event at %.3f s), before the promotion returned (switch_master at %.3f s)", f.Text(), killed, promoted)
	case s.JudgedHolds == 0 || r.Run.Outcomes.Acquired < 50:
		t.Fatalf("%d acquired, %d holds judged: the cell judged too little", r.Run.Outcomes.Acquired, s.JudgedHolds)
	case r.Run.Config.Replicas != 1 || !strings.Contains(r.Run.Config.Service.Servers, "streaming replica"):
		t.Errorf("config: %d replicas, servers %q; want the replica recorded", r.Run.Config.Replicas, r.Run.Config.Service.Servers)
	}
	t.Logf("promoted replica: %d violations, %d lost updates; promoted %.3f s after the kill, unavailable %.3f s", s.Violations, s.LostUpdates, promoted-killed, *f.Unavailable)
}

// A guarded write kept in PostgreSQL across a failover whose standby was
// cut from its primary first (lag-failover): the writes acknowledged after
// the cut are past what the promoted standby had, and the history check
// finds them lost. The failover says how many were acknowledged after the
// standby's last replayed commit, which bounds the lost from above.
func TestPostgresGuardedLagFailoverLosesWrites(t *testing.T) {
	requirePostgres(t)
	doc := strings.Replace(pgFaultBase, "%FAULT%", "{at: 1s, kind: replication_lag}\n  - {at: 3s, kind: failover}", 1)
	doc = strings.Replace(doc, "topology: postgres,", "topology: postgres, replicas: 1, guarded_write: true,", 1)
	r := untilRoom(t, doc, "postgres.promoted_before_end", "switch_master", reconnectRoom)
	s := r.Run.Safety
	var f *results.Failover
	for i := range r.Run.Failovers {
		f = &r.Run.Failovers[i]
	}
	switch {
	case f == nil || f.WritesPast == nil:
		t.Fatalf("failovers %+v: want the writes past the promoted standby counted", r.Run.Failovers)
	case !s.History || s.LostUpdates == 0:
		t.Fatalf("safety %+v: want acknowledged guarded writes lost (the cut's)", s)
	case *f.WritesPast < s.LostUpdates || f.LackedBytes <= 0:
		t.Fatalf("failover %s: %d writes past what the standby had, %d lost; want lost ≤ past, and the WAL it lacked", f.Text(), *f.WritesPast, s.LostUpdates)
	}
	t.Logf("%s; %d lost of %d acknowledged, %d in doubt", f.Text(), s.LostUpdates, s.AcknowledgedWrites, s.WritesInDoubt)
}
