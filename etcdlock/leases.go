package etcdlock

import (
	"context"
	"errors"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// LeaseEndSource says how a lease's end on the servers is seen, for the
// lock-loss lag.
const LeaseEndSource = "etcd: the lease gone from the leader's LeaseLeases, polled every 50 ms, dated half way between the last poll that listed it and the first that did not; the client learnt by Session.Done"

// leasePoll is how often LeaseEnds asks.
const leasePoll = 50 * time.Millisecond

// LeaseEnds polls a cluster's leases and dates each one's end: etcd logs
// no lease expiry, and its watch does not say why a key went. It asks the
// leader only: a member answers LeaseLeases from its own table, and a cut
// off, paused or restarted one lists leases the quorum has ended.
type LeaseEnds struct {
	clis   []*clientv3.Client // one per member
	cancel context.CancelFunc
	done   chan struct{}

	leader int // the member asked last (-1: none known)
	mu     sync.Mutex
	seen   map[clientv3.LeaseID]bool
	last   time.Time // the last poll that answered
	ends   map[string]time.Time
}

// WatchLeases starts polling the members' own endpoints (not a fault's
// proxies) until Stop.
func WatchLeases(endpoints []string) (*LeaseEnds, error) {
	w := &LeaseEnds{done: make(chan struct{}), leader: -1, seen: map[clientv3.LeaseID]bool{}, ends: map[string]time.Time{}}
	for _, ep := range endpoints {
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, DialTimeout: time.Second, Logger: zap.NewNop()})
		if err != nil {
			w.closeClients()
			return nil, err
		}
		w.clis = append(w.clis, cli)
	}
	if len(w.clis) == 0 {
		return nil, errors.New("etcd: no endpoint to watch the leases on")
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go w.loop(ctx)
	return w, nil
}

func (w *LeaseEnds) loop(ctx context.Context) {
	defer close(w.done)
	t := time.NewTicker(leasePoll)
	defer t.Stop()
	for {
		w.poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// findLeader is the member that says it leads (-1: none answers so).
func (w *LeaseEnds) findLeader(ctx context.Context) int {
	order := make([]int, 0, len(w.clis))
	if w.leader >= 0 {
		order = append(order, w.leader) // most polls: one Status
	}
	for i := range w.clis {
		if i != w.leader {
			order = append(order, i)
		}
	}
	for _, i := range order {
		sctx, cancel := context.WithTimeout(ctx, leasePoll)
		st, err := w.clis[i].Status(sctx, w.clis[i].Endpoints()[0])
		cancel()
		if err == nil && st.Leader == st.Header.MemberId {
			return i
		}
	}
	return -1
}

// poll lists the leader's leases; one listed at the last answered poll
// and gone now ended between the two (dated half way; a lease ends once,
// its first end is kept). A poll without a leader (an election) dates
// nothing and widens the next one's gap.
func (w *LeaseEnds) poll(ctx context.Context) {
	asked := time.Now()
	if w.leader = w.findLeader(ctx); w.leader < 0 {
		return
	}
	pctx, cancel := context.WithTimeout(ctx, leasePoll)
	defer cancel()
	resp, err := w.clis[w.leader].Leases(pctx)
	if err != nil {
		return
	}
	now := map[clientv3.LeaseID]bool{}
	for _, l := range resp.Leases {
		now[l.ID] = true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for id := range w.seen {
		if _, ended := w.ends[LeaseName(id)]; !now[id] && !ended {
			w.ends[LeaseName(id)] = w.last.Add(asked.Sub(w.last) / 2)
		}
	}
	w.seen, w.last = now, asked
}

func (w *LeaseEnds) closeClients() {
	for _, c := range w.clis {
		c.Close()
	}
}

// Stop ends the polling and returns the ends seen, by lease name.
func (w *LeaseEnds) Stop() map[string]time.Time {
	w.cancel()
	<-w.done
	w.closeClients()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ends
}
