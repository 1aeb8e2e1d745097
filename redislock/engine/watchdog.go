package engine

import (
	"context"
	"sync/atomic"
	"time"
)

// A watchdog keeps a held lock alive as Redis' lock clients do: Redisson
// renews its lease every third of it (lockWatchdogTimeout 30 s, every
// 10 s) while the holder's process lives. A failed renewal is told to the
// holder here, as rueidis' rueidislock cancels its holder's context
// (Redisson only logs it): the lock's Lost closes. The holder's process
// paused or cut from the masters renews nothing, so its lock expires as a
// fixed TTL would.
type watchdog struct {
	held  Lock // the watchdog's own copy: its validity as renewed
	until atomic.Int64
	lost  chan struct{}
	stop  chan struct{}
	done  chan struct{}
}

// noValidity is how far ValidUntil lies for a lock kept alive in the
// background (Lost says when it ended instead, Until when it would): a
// hundred years, as the session locks', a far future whose sums do not
// overflow.
const noValidity = 100 * 365 * 24 * time.Hour

// watch starts renewing l every TTL/3 until its release.
func (e *Engine) watch(l *Lock) {
	w := &watchdog{held: *l, lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	w.until.Store(l.ValidUntil.UnixNano())
	l.ValidUntil, l.Lost, l.Handle = l.Start.Add(noValidity), w.lost, w
	l.Until = func() time.Time { return time.Unix(0, w.until.Load()) }
	e.watchers.Add(1)
	go e.renew(w)
}

// renew extends the lock every TTL/3; the first failure closes lost and
// ends the renewals (the lock is gone, or about to be).
func (e *Engine) renew(w *watchdog) {
	defer e.watchers.Done()
	defer close(w.done)
	t := time.NewTicker(e.cfg.TTL / 3)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-e.quit:
			return
		case <-t.C:
		}
		if r := e.Extend(context.Background(), &w.held, e.cfg.TTL); !r.OK {
			close(w.lost)
			return
		}
		w.until.Store(w.held.ValidUntil.UnixNano())
	}
}

// stopWatch ends l's renewals, waiting for one in flight, before its
// release: none lands after it.
func stopWatch(l *Lock) {
	w, ok := l.Handle.(*watchdog)
	if !ok {
		return
	}
	l.Handle = nil
	close(w.stop)
	<-w.done
}
