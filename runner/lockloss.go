package runner

import (
	"time"

	"lockbench/chaos"
	"lockbench/etcdlock"
	"lockbench/pglock"
	"lockbench/results"
	"lockbench/zklock"
)

// sessionEnds dates, on the servers' side, the sessions of a fault cell's
// lock service (nil: a service without sessions, or not local).
type sessionEnds interface {
	// stop ends the watch and returns the ends seen by session name, and
	// how they were seen.
	stop() (map[string]time.Time, string)
}

type etcdLeaseEnds struct{ w *etcdlock.LeaseEnds }

func (e etcdLeaseEnds) stop() (map[string]time.Time, string) {
	return e.w.Stop(), etcdlock.LeaseEndSource
}

// watchSessionEnds starts watching the cell's servers for session ends.
func (r *cellRun) watchSessionEnds() {
	if pg := r.masters.Postgres; pg != nil && pg.Local != nil {
		r.ends = postgresKills{pg.Local}
		return
	}
	if z := r.masters.Zookeeper; z != nil && z.Local != nil {
		r.ends = zookeeperExpiries{z.Local}
		return
	}
	e := r.masters.Etcd
	if e == nil || e.Local == nil {
		return
	}
	w, err := etcdlock.WatchLeases(e.Local.Endpoints())
	if err != nil {
		r.ends = unwatched{"etcd: the leases not watched: " + err.Error()} // said, not dropped
		return
	}
	r.ends = etcdLeaseEnds{w}
	r.cleanups = append(r.cleanups, func() { r.stopEnds() })
}

// unwatched is a service whose session ends could not be watched: its
// losses are counted, none matched ("not measured").
type unwatched struct{ why string }

func (u unwatched) stop() (map[string]time.Time, string) { return nil, u.why }

// stopEnds stops the watch once; its ends are kept for lockLoss.
func (r *cellRun) stopEnds() {
	if r.ends != nil && !r.endsStopped {
		r.endsStopped = true
		r.endsSeen, r.endsSource = r.ends.stop()
	}
}

// lockLoss is the cell's lock-loss lag: each session the clients lost,
// matched to its end on the servers.
func (r *cellRun) lockLoss(clients []chaos.ClientResult) *results.LockLoss {
	var losses []results.SessionLoss
	for _, c := range clients {
		losses = append(losses, c.Losses...)
	}
	r.stopEnds()
	if r.ends == nil {
		return nil
	}
	return results.NewLockLoss(losses, r.endsSeen, r.endsSource)
}

// zookeeperExpiries reads a local ensemble's logs when the cell ends.
type zookeeperExpiries struct{ cl *zklock.Cluster }

func (z zookeeperExpiries) stop() (map[string]time.Time, string) {
	return z.cl.SessionEnds(), zklock.SessionEndSource
}

// postgresKills are the backends a kill_backend fault ended.
type postgresKills struct{ s *pglock.Server }

func (p postgresKills) stop() (map[string]time.Time, string) {
	return p.s.SessionEnds(), pglock.SessionEndSource
}
