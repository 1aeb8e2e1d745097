package etcdlock

import (
	"context"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// LeaseEndSource says how a lease's end on the servers is seen, for the
// lock-loss lag.
const LeaseEndSource = "etcd: the lease gone from LeaseLeases, polled every 50 ms, dated half way between the last poll that listed it and the first that did not; the client learnt by Session.Done"

// leasePoll is how often LeaseEnds asks.
const leasePoll = 50 * time.Millisecond

// LeaseEnds polls a cluster's leases and dates each one's end: etcd logs
// no lease expiry, and its watch does not say why a key went.
type LeaseEnds struct {
	cli    *clientv3.Client
	cancel context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	seen map[clientv3.LeaseID]bool
	last time.Time // the last poll that answered
	ends map[string]time.Time
}

// WatchLeases starts polling the endpoints (the members' own, not a
// fault's proxies) until Stop.
func WatchLeases(endpoints []string) (*LeaseEnds, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &LeaseEnds{cli: cli, cancel: cancel, done: make(chan struct{}), seen: map[clientv3.LeaseID]bool{}, ends: map[string]time.Time{}}
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

// poll lists the leases; one listed at the last answered poll and gone
// now ended between the two (dated half way). A poll that fails (no
// leader: an election) dates nothing and widens the next one's gap.
func (w *LeaseEnds) poll(ctx context.Context) {
	asked := time.Now()
	pctx, cancel := context.WithTimeout(ctx, leasePoll)
	defer cancel()
	resp, err := w.cli.Leases(pctx)
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
		if !now[id] {
			w.ends[LeaseName(id)] = w.last.Add(asked.Sub(w.last) / 2)
		}
	}
	w.seen, w.last = now, asked
}

// Stop ends the polling and returns the ends seen, by lease name.
func (w *LeaseEnds) Stop() map[string]time.Time {
	w.cancel()
	<-w.done
	w.cli.Close()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ends
}
