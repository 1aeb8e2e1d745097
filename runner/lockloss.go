package runner

import (
	"time"

	"lockbench/chaos"
	"lockbench/results"
	"lockbench/service"
)

// watchSessionEnds starts watching the cell's servers for session ends
// (none: a service without sessions, or not local).
func (r *cellRun) watchSessionEnds() {
	stop, err := r.servers.Service.WatchSessionEnds()
	switch {
	case err != nil:
		r.ends = unwatched(err.Error()) // said, not dropped
	case stop != nil:
		r.ends = stop
		r.cleanups = append(r.cleanups, func() { r.stopEnds() })
	}
}

// unwatched is a service whose session ends could not be watched: its
// losses are counted, none matched ("not measured").
func unwatched(why string) service.SessionEnds {
	return func() (map[string]time.Time, string) { return nil, why }
}

// stopEnds stops the watch once; its ends are kept for lockLoss.
func (r *cellRun) stopEnds() {
	if r.ends != nil && !r.endsStopped {
		r.endsStopped = true
		r.endsSeen, r.endsSource = r.ends()
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
