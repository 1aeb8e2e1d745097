package runner

import (
	"errors"
	"strings"
	"testing"

	"lockbench/check"
	"lockbench/internal/redistest"
	"lockbench/pglock"
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
func TestPostgresKilledBackend(t *testing.T) {
	requirePostgres(t)
	r := runFaultDoc(t, strings.Replace(pgFaultBase, "%FAULT%", "{at: 2s, kind: kill_backend}", 1))
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

// The server's process group killed and restarted: every lock is freed,
// nothing is lost, the clients come back; the result gives the recovery
// window.
func TestPostgresServerCrash(t *testing.T) {
	requirePostgres(t)
	r := runFaultDoc(t, strings.Replace(pgFaultBase, "%FAULT%", "{at: 2s, kind: crash, master_index: [0], restart: immediate}", 1))
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

// The database's own guarded write: the counter in a table, updated on the
// holding session under pg_try_advisory_xact_lock. The killed sessions
// cannot write: their updates are refused, and nothing is lost where the
// plain cell (TestPostgresKilledBackend) loses updates.
func TestPostgresGuardedWrite(t *testing.T) {
	requirePostgres(t)
	doc := strings.Replace(pgFaultBase, "%FAULT%", "{at: 2s, kind: kill_backend}", 1)
	doc = strings.Replace(doc, "duration: 8s}", "duration: 8s, guarded_write: true}", 1)
	r := runFaultDoc(t, doc)
	if s := r.Run.Safety; s.LostUpdates != 0 || s.StaleWritesRejected+s.GuardedInDoubt == 0 || !s.GuardedWrite || s.AcknowledgedWrites < 50 {
		t.Fatalf("guarded write: %d lost updates (want 0), %d refused + %d in doubt (want > 0), guarded %v, %d acknowledged", s.LostUpdates, s.StaleWritesRejected, s.GuardedInDoubt, s.GuardedWrite, s.AcknowledgedWrites)
	}
	wantHistory(t, r, dirOf[r], check.Linearizable)
}
