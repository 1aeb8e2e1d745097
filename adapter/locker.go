package adapter

import (
	"context"
	"fmt"
	"time"

	"lockbench/lock"
)

// farFuture is a session lock's ValidUntil (as the engine's watchdog
// and the session services set it): Lost says when it ended instead.
const farFuture = 100 * 365 * 24 * time.Hour

// Acquire asks the adapter for key and waits for its answer; a context
// that ends first cancels the request (a grant that comes later is
// released). Err is set only when the run ends or the adapter broke:
// the worker then stops.
func (c *Client) Acquire(ctx context.Context, key string) (*lock.Lock, lock.Result) {
	req := newRequest(TypeAcquire, key, c.opt.Hello.Wait+c.opt.Hello.TTL)
	if err := c.send(req, Msg{Type: TypeAcquire, Key: key}); err != nil {
		return nil, lock.Result{Err: err}
	}
	select {
	case r := <-req.reply:
		defer recycle(req)
		return c.acquired(req, r)
	case <-ctx.Done():
		if r, ok := c.abandon(req); ok {
			defer recycle(req)
			return c.acquired(req, r)
		}
		return nil, lock.Result{Err: ctx.Err(), Elapsed: time.Since(req.sent)}
	case <-c.failed:
		return nil, lock.Result{Err: c.Err()}
	}
}

// abandon gives up on req: a cancel follows it. A reply that came
// meanwhile is returned instead.
func (c *Client) abandon(req *request) (reply, bool) {
	c.mu.Lock()
	if _, waiting := c.pending[req.id]; !waiting {
		c.mu.Unlock()
		select {
		case r := <-req.reply:
			return r, true
		default:
			return reply{}, false // the client broke
		}
	}
	req.abandoned = true
	c.mu.Unlock()
	c.cancels.Add(1)
	_ = c.send(&request{typ: TypeCancel}, Msg{Type: TypeCancel, Cancels: req.id})
	return reply{}, false
}

// acquired is an acquire's answer as the worker loop takes it, timed on
// lockbench's clock.
func (c *Client) acquired(req *request, r reply) (*lock.Lock, lock.Result) {
	res := lock.Result{Attempts: max(r.m.Attempts, 1), Elapsed: r.at.Sub(req.sent)}
	switch r.m.Type {
	case TypeGranted:
		l := c.newLock(req, r)
		res.Acquired, res.Validity = true, l.ValidUntil.Sub(r.at)
		if l.Until != nil {
			res.Validity = l.Until().Sub(r.at)
		}
		return l, res
	case TypeRefused:
		res.Taken = true
	}
	return nil, res
}

// newLock is a granted lock: valid until the adapter's validity (or
// deadline) from the reply's receipt, never past the TTL from the
// request's send; a library that extends it in the background keeps it
// until its lost notice.
func (c *Client) newLock(req *request, r reply) *lock.Lock {
	m := r.m
	l := &lock.Lock{Key: req.key, Token: m.Token, Start: req.sent, Fence: m.Fence}
	until := req.sent.Add(c.opt.Hello.TTL)
	if v, ok := validity(m); ok && r.at.Add(v).Before(until) {
		until = r.at.Add(v)
	}
	c.mu.Lock()
	h := c.held[m.Token]
	c.mu.Unlock()
	l.ValidUntil, l.Handle = until, h
	if h == nil {
		return l // broke meanwhile
	}
	if c.hello.Capabilities.LostNotice {
		l.Lost = h.lost
	}
	if c.hello.Capabilities.AutoExtend || c.hello.Validity.Method == "session" {
		h.until.Store(until.UnixNano())
		l.ValidUntil = req.sent.Add(farFuture)
		l.Until = func() time.Time { return time.Unix(0, h.until.Load()) }
	}
	return l
}

// validity is what a granted or extended reply says is left: validity_ms,
// or its deadline on the adapter's own clock less its own now.
func validity(m Msg) (time.Duration, bool) {
	switch {
	case m.ValidityMs != nil:
		return time.Duration(*m.ValidityMs) * time.Millisecond, true
	case m.DeadlineMs != 0 && m.NowMs != 0:
		return time.Duration(m.DeadlineMs-m.NowMs) * time.Millisecond, true
	}
	return 0, false
}

// Release asks the adapter to release l: released is OK, refused (not
// held) and failed are not.
func (c *Client) Release(ctx context.Context, l *lock.Lock) lock.OpResult {
	defer c.forget(l.Token)
	r, res, ok := c.call(ctx, TypeRelease, Msg{Type: TypeRelease, Key: l.Key, Token: l.Token})
	if ok && r.m.Type == TypeReleased {
		res.OK, res.Count = true, 1
	}
	return res
}

// Extend asks the adapter to extend l by ttl (an adapter without the
// capability: not extended).
func (c *Client) Extend(ctx context.Context, l *lock.Lock, ttl time.Duration) lock.OpResult {
	if !c.hello.Capabilities.Extend {
		return lock.OpResult{}
	}
	r, res, ok := c.call(ctx, TypeExtend, Msg{Type: TypeExtend, Key: l.Key, Token: l.Token, TTLms: ttl.Milliseconds()})
	if !ok || r.m.Type != TypeExtended {
		return res
	}
	res.OK, res.Count = true, 1
	v, given := validity(r.m)
	if !given { // from the send, as the library would count it
		v = ttl - res.Elapsed
	}
	res.Validity = v
	l.Start = r.at.Add(-res.Elapsed)
	l.ValidUntil = r.at.Add(v)
	return res
}

// call sends one release or extend and waits for its answer (a context
// that ends first: not done, the reply dropped when it comes).
func (c *Client) call(ctx context.Context, typ string, m Msg) (reply, lock.OpResult, bool) {
	req := newRequest(typ, m.Key, 0)
	if err := c.send(req, m); err != nil {
		return reply{}, lock.OpResult{}, false
	}
	select {
	case r := <-req.reply:
		defer recycle(req)
		return r, lock.OpResult{Elapsed: r.at.Sub(req.sent), Sent: 1}, true
	case <-ctx.Done():
		if r, ok := c.abandon(req); ok {
			defer recycle(req)
			return r, lock.OpResult{Elapsed: r.at.Sub(req.sent), Sent: 1}, true
		}
	case <-c.failed:
	}
	return reply{}, lock.OpResult{Elapsed: time.Since(req.sent)}, false
}

// Request sends m as it is (a new id) and waits for its reply, bounded by
// ctx: the conformance checks' way to send what the Locker never does.
func (c *Client) Request(ctx context.Context, m Msg) (Msg, time.Duration, error) {
	req := &request{typ: m.Type, key: m.Key, reply: make(chan reply, 1)}
	if err := c.send(req, m); err != nil {
		return Msg{}, 0, err
	}
	select {
	case r := <-req.reply:
		return r.m, r.at.Sub(req.sent), nil
	case <-ctx.Done():
		if r, ok := c.abandon(req); ok {
			return r.m, r.at.Sub(req.sent), nil
		}
		return Msg{}, time.Since(req.sent), fmt.Errorf("no reply to %s %d within the check's bound", m.Type, req.id)
	case <-c.failed:
		return Msg{}, time.Since(req.sent), c.Err()
	}
}
