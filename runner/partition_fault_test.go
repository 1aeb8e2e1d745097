package runner

import (
	"strings"
	"testing"

	"lockbench/results"
)

// memberPartition is the leader cut from the other members for 3 s.
const memberPartition = "{at: 1.5s, kind: partition, link: members, role: leader, for: 3s}"

// wantIsolatedLeader: the leader was cut from the others and proven unable
// to commit before it rejoined; an election followed (its window begun by
// the partition); nothing was lost.
func wantIsolatedLeader(t *testing.T, r *CellResult) {
	t.Helper()
	if s := r.Run.Safety; s.LostUpdates != 0 || s.Violations != 0 || s.JudgedHolds == 0 || len(r.NotJudged) > 0 {
		t.Fatalf("leader partitioned: %d holds judged, %d lost updates, %d violations, not judged %v", s.JudgedHolds, s.LostUpdates, s.Violations, r.NotJudged)
	}
	kinds := map[string]string{}
	for _, e := range r.Run.Events {
		kinds[e.Kind] = e.Target + ": " + e.Detail
	}
	if !strings.HasPrefix(kinds["partition"], "leader, member ") || kinds["isolated"] == "" || kinds["heal"] == "" || kinds["not_isolated"] != "" {
		t.Fatalf("events %v: want the leader cut off, proven isolated, healed", kinds)
	}
	f := r.Run.Failovers
	if len(f) != 1 || f[0].Kind != "election" || f[0].Cause != "partition" || f[0].Unavailable == nil {
		t.Fatalf("failovers %+v: want one election begun by the partition, with its window", f)
	}
	t.Logf("%s; %s", kinds["isolated"], f[0].Text())
}

// The etcd leader cut from the other members (wantIsolatedLeader). The
// clients' first acquire after the cut came up to 2.1 s after the heal
// here (at 6.5–6.6 s in 4 runs of 8: within 0.5 s of a 7 s cell's end, so
// the cell is etcdRecoveryDoc's). A run whose heal left them less than
// sessionRoom before the cell's end earns one more (untilRoom); a second
// such run fails.
func TestEtcdLeaderPartitioned(t *testing.T) {
	requireEtcd(t)
	r := untilRoom(t, etcdRecoveryDoc(memberPartition), "etcd.leader_partition_healed_before_end", "heal", sessionRoom)
	wantIsolatedLeader(t, r)
}

// The ZooKeeper leader cut from the other members (wantIsolatedLeader).
// The heal is due 4.5 s in: the cell runs 10 s, not 8, which left 3.5 s,
// within half a second of sessionRoom. A run whose heal left the clients
// less than sessionRoom before the load's end earns one more (untilRoom);
// a second such run fails.
func TestZookeeperLeaderPartitioned(t *testing.T) {
	requireZookeeper(t)
	doc := strings.Replace(zkFaultDoc("false", memberPartition), "duration: 8s", "duration: 10s", 1)
	r := untilRoom(t, doc, "zookeeper.leader_partition_healed_before_end", "heal", sessionRoom)
	wantIsolatedLeader(t, r)
}

// wantLag: the cell's lost sessions were matched to their end on the
// servers, and the client learnt after it (a paused or cut-off client).
func wantLag(t *testing.T, ll *results.LockLoss) {
	t.Helper()
	if ll == nil || ll.Matched == 0 || ll.P50 <= 0 || !strings.Contains(ll.Text(), "server ended → client learnt") {
		t.Fatalf("lock-loss lag %+v: want lost sessions matched to their end on the servers, learnt after it", ll)
	}
	t.Log(ll.Text())
}

// A PostgreSQL client cut off from its server (its proxy black-holes both
// ways): the server cannot tell a silent client from a slow one, so the
// cut client's sessions keep their locks; the other client's workers give
// up on those keys, nothing is lost.
func TestPostgresClientPartitioned(t *testing.T) {
	requirePostgres(t)
	r := runFaultDoc(t, strings.Replace(pgFaultBase, "%FAULT%", "{at: 1.5s, kind: partition, client_index: [0], for: 4s}", 1))
	if s := r.Run.Safety; s.LostUpdates != 0 || s.Violations != 0 || s.JudgedHolds == 0 || r.Value("gave_up") == 0 {
		t.Fatalf("client partitioned: %d holds judged, %d lost updates, %d violations, %v gave up (want > 0)", s.JudgedHolds, s.LostUpdates, s.Violations, r.Value("gave_up"))
	}
}
