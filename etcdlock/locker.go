package etcdlock

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"lockbench/internal/sessionloss"
	"lockbench/internal/slots"
	"lockbench/internal/tlsfiles"
	"lockbench/lock"
	"lockbench/results"
)

// StrategyQueue is etcd's own wait: Mutex.Lock puts the caller in the
// key's queue, and each waiter watches the one just before it (FIFO, no
// thundering herd).
const StrategyQueue = "queue"

// WaitStrategies are the wait strategies an etcd lock takes: its queue,
// or lock's retry, backoff and spin over TryLock.
var WaitStrategies = []string{StrategyQueue, lock.StrategyRetry, lock.StrategyBackoff, lock.StrategySpin}

// FenceSource says where an etcd lock's fencing token comes from.
const FenceSource = "etcd: the lock response's header revision (no extra call)"

// noValidity is a keep-alive lock's ValidUntil: it has no TTL − elapsed −
// drift window; it holds until released or its session is lost.
const noValidity = 100 * 365 * 24 * time.Hour

// Config is an etcd lock client's terms.
type Config struct {
	Endpoints []string
	TLS       *tlsfiles.Files `json:",omitempty"` // nil: plain http
	Username  string
	Password  string
	// TTL is each session's lease: whole seconds, granted as asked or
	// refused (the server raises a lease below its minimum).
	TTL time.Duration
	// Strategy is StrategyQueue or one of the retry policy's; Retry holds
	// the retry terms, and its WaitTime bounds a queued wait too (0: the
	// caller waits in the queue until its context ends).
	Strategy string
	Retry    lock.RetryPolicy
	// Sessions is how many contenders: one Session (lease) each, since
	// Mutexes sharing a Session do not exclude each other (etcd#10756).
	Sessions int
}

// Locker is etcd's concurrency.Mutex as its users write it, one Session
// per contender, as the worker loop's Locker.
type Locker struct {
	cli      *clientv3.Client
	cfg      Config
	sessions *slots.Pool[*concurrency.Session] // one per contender
	granted  atomic.Int64                      // the lease TTL the server granted, seconds
	rpcs     atomic.Int64
	losses   sessionloss.Log // leases etcd ended under their sessions
	revoked  sync.Map        // leases this locker ended itself: not losses
	closing  atomic.Bool
}

// held is a lock's etcd side: its mutex and the session it holds it with.
type held struct {
	m    *concurrency.Mutex
	sess *concurrency.Session
}

// callTimeout bounds a clean-up call (a release, a stale key's delete, a
// revoke), which has no caller's deadline: during an election it may wait
// for a new leader, never for ever.
const callTimeout = 5 * time.Second

// Dial connects to the endpoints and checks each answers, naming the
// first that does not.
func Dial(ctx context.Context, cfg Config) (*clientv3.Client, error) {
	var tc *tls.Config
	if cfg.TLS != nil {
		var err error
		if tc, err = cfg.TLS.Config(""); err != nil {
			return nil, err
		}
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: cfg.Endpoints, TLS: tc, Username: cfg.Username, Password: cfg.Password,
		DialTimeout: 3 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("etcd endpoints %s: not reachable (%v)", strings.Join(cfg.Endpoints, ","), err)
	}
	for _, ep := range cfg.Endpoints {
		sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err := cli.Status(sctx, ep)
		cancel()
		if err != nil {
			cli.Close()
			return nil, fmt.Errorf("etcd endpoint %s: not reachable: %v", ep, err)
		}
	}
	return cli, nil
}

// New dials the cluster and opens cfg.Sessions sessions on leases it
// grants itself, refusing a TTL the server would change.
func New(ctx context.Context, cfg Config) (*Locker, error) {
	if cfg.TTL%time.Second != 0 || cfg.TTL < time.Second {
		return nil, fmt.Errorf("ttl: %v is not accepted with topology etcd; a lease takes whole seconds, such as 10s", cfg.TTL)
	}
	cli, err := Dial(ctx, cfg)
	if err != nil {
		return nil, err
	}
	l := &Locker{cli: cli, cfg: cfg}
	l.sessions = slots.New(cfg.Sessions, l.newSession, sessionAlive)
	if err := l.sessions.Fill(ctx); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// newSession grants a lease of the TTL and keeps it alive in a Session.
func (l *Locker) newSession(ctx context.Context) (*concurrency.Session, error) {
	want := int64(l.cfg.TTL / time.Second)
	g, err := l.cli.Grant(ctx, want)
	if err != nil {
		return nil, fmt.Errorf("etcd: grant a lease: %w", err)
	}
	if g.TTL != want {
		l.revoke(g.ID)
		return nil, fmt.Errorf("ttl: %v is not accepted by this etcd; it grants a lease of %ds (its minimum); use ttl: %ds or more", l.cfg.TTL, g.TTL, g.TTL)
	}
	l.granted.Store(g.TTL)
	s, err := concurrency.NewSession(l.cli, concurrency.WithLease(g.ID), concurrency.WithContext(context.Background()))
	if err != nil {
		l.revoke(g.ID)
		return nil, err
	}
	go l.watchLoss(s)
	return s, nil
}

// watchLoss records the session's end unless this locker ended it: its
// lease ended on the server and the client learnt it (Session.Done).
func (l *Locker) watchLoss(s *concurrency.Session) {
	<-s.Done()
	if _, ours := l.revoked.Load(s.Lease()); !ours && !l.closing.Load() {
		l.losses.Add(LeaseName(s.Lease()))
	}
}

// LeaseName is a lease's id as losses name it (hex, as etcdctl shows it).
func LeaseName(id clientv3.LeaseID) string { return strconv.FormatInt(int64(id), 16) }

// Losses are the sessions etcd ended under this locker, as it learnt.
func (l *Locker) Losses() []results.SessionLoss { return l.losses.List() }

// sessionAlive says the session's lease has not ended.
func sessionAlive(s *concurrency.Session) bool {
	select {
	case <-s.Done():
		return false
	default:
		return true
	}
}

// revoke ends a lease: the keys it carries (a lock, a waiter's place) go.
func (l *Locker) revoke(id clientv3.LeaseID) {
	l.revoked.Store(id, true)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	_, _ = l.cli.Revoke(ctx, id)
}

// GrantedTTL is the lease the server granted each session.
func (l *Locker) GrantedTTL() time.Duration { return time.Duration(l.granted.Load()) * time.Second }

// LostSessions are sessions whose lease ended under them (or that a failed
// clean-up gave up) and were replaced.
func (l *Locker) LostSessions() int64 { return l.sessions.Lost() }

// RPCs are the calls the locker made to etcd for locks (grants and
// keep-alives not counted; a queued wait's watch counts as one).
func (l *Locker) RPCs() int64 { return l.rpcs.Load() }

// giveBack returns a session to the pool; dirty (a clean-up that failed:
// a key of it may still stand in a queue) revokes its lease first, so
// that no stale key blocks the key's other callers, and leaves the slot
// empty.
func (l *Locker) giveBack(s *concurrency.Session, dirty bool) {
	if !dirty {
		l.sessions.Put(s)
		return
	}
	l.revoke(s.Lease())
	s.Orphan()
	l.sessions.Drop(true)
}

// Acquire takes key: in etcd's queue, or by TryLock with the retry policy.
// Result.Err is set only when ctx ended; etcd's own errors (a leader
// change, a timeout) are failed attempts the caller may retry.
func (l *Locker) Acquire(ctx context.Context, key string) (*lock.Lock, lock.Result) {
	start := time.Now()
	sess, err := l.sessions.Take(ctx)
	if err != nil {
		return nil, lock.Result{Attempts: 1, Elapsed: time.Since(start), Err: ctx.Err()}
	}
	m := concurrency.NewMutex(sess, key)
	var res lock.Result
	if l.cfg.Strategy == StrategyQueue {
		res = l.queue(ctx, m)
	} else {
		_, res = l.cfg.Retry.Acquire(ctx, func(ctx context.Context) (*lock.Lock, lock.Result) { return l.try(ctx, m) })
	}
	res.Elapsed = time.Since(start)
	if res.Acquired && !sessionAlive(sess) {
		// Granted on a lease the client already knows is gone (a waiter
		// whose member was cut off, served once it rejoined): the server
		// will end it any moment, so it is not the caller's; the ZooKeeper
		// recipe's holders check the same.
		res.Acquired = false
	}
	if !res.Acquired {
		l.giveBack(sess, !l.clean(m))
		return nil, res
	}
	lk := &lock.Lock{Key: key, Token: m.Key(), Start: start, ValidUntil: start.Add(noValidity),
		Handle: held{m, sess}, Fence: m.Header().Revision, Lost: sess.Done()}
	return lk, res
}

// clean deletes what a failed attempt may have left: its waiting key, when
// the call failed after the server wrote it; false when that failed too.
func (l *Locker) clean(m *concurrency.Mutex) bool {
	if k := m.Key(); k == "" || k == "\x00" {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	l.rpcs.Add(1)
	_, err := l.cli.Delete(ctx, m.Key())
	return err == nil
}

// queue waits in the key's queue, at most the wait time: a caller that
// waited that long gave up (the key was taken all along).
func (l *Locker) queue(ctx context.Context, m *concurrency.Mutex) lock.Result {
	wctx := ctx
	if wt := l.cfg.Retry.WaitTime; wt > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, wt)
		defer cancel()
	}
	err := m.Lock(wctx)
	l.rpcs.Add(1)
	res := lock.Result{Attempts: 1, Sent: 1}
	switch {
	case err == nil:
		res.Acquired = true
	case ctx.Err() != nil:
		res.Err = ctx.Err()
	case errors.Is(err, context.DeadlineExceeded):
		res.Taken = true
	}
	return res
}

// try is one TryLock: acquired, or the key taken (TryLock then deletes its
// own waiting key: a second call); another error is a failed attempt (Err
// only when ctx ended).
func (l *Locker) try(ctx context.Context, m *concurrency.Mutex) (*lock.Lock, lock.Result) {
	err := m.TryLock(ctx)
	l.rpcs.Add(1)
	switch {
	case err == nil: // the retry loop stops at a lock: Acquire makes the real one
		return &lock.Lock{}, lock.Result{Acquired: true, Sent: 1}
	case errors.Is(err, concurrency.ErrLocked):
		l.rpcs.Add(1)
		return nil, lock.Result{Taken: true, Sent: 2}
	}
	return nil, lock.Result{Sent: 1, Err: ctx.Err()}
}

// Release deletes the holder's key and gives its session back; a delete
// that failed (an election under way) is tried once more, then the lease
// is revoked so that the key cannot block the queue.
func (l *Locker) Release(ctx context.Context, lk *lock.Lock) lock.OpResult {
	start := time.Now()
	h := lk.Handle.(held)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
	defer cancel()
	key := h.m.Key()
	err := h.m.Unlock(rctx)
	l.rpcs.Add(1)
	if err != nil && !errors.Is(err, concurrency.ErrLockReleased) {
		l.rpcs.Add(1)
		_, err = l.cli.Delete(rctx, key)
	}
	l.giveBack(h.sess, err != nil)
	ok := err == nil
	return lock.OpResult{OK: ok, Count: b2i(ok), Elapsed: time.Since(start), Sent: 1}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// CountKeys counts keys under prefix (another live run's locks).
func (l *Locker) CountKeys(ctx context.Context, prefix string) (int64, error) {
	r, err := l.cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, err
	}
	return r.Count, nil
}

// Put is a plain write: the baseline a lock's round trips compare with.
func (l *Locker) Put(ctx context.Context, key string) error {
	_, err := l.cli.Put(ctx, key, "x")
	return err
}

// Delete removes key (the baseline's own).
func (l *Locker) Delete(ctx context.Context, key string) error {
	_, err := l.cli.Delete(ctx, key)
	return err
}

// Close ends every session the locker granted (revoking a lease frees
// the locks it holds), also those still held by a lock, and the client.
func (l *Locker) Close() {
	l.closing.Store(true)
	for _, s := range l.sessions.Opened() {
		l.revoke(s.Lease())
		s.Orphan()
	}
	l.cli.Close()
}
