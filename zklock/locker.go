package zklock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"lockbench/internal/sessionloss"
	"lockbench/internal/slots"
	"lockbench/lock"
	"lockbench/results"
)

// StrategyQueue is the recipe's own wait: each waiter watches the znode
// just before its own (FIFO, no thundering herd).
const StrategyQueue = "queue"

// WaitStrategies are the waits a ZooKeeper lock takes: the recipe's queue,
// or lock's retry, backoff and spin over a try-once variant.
var WaitStrategies = []string{StrategyQueue, lock.StrategyRetry, lock.StrategyBackoff, lock.StrategySpin}

// FenceSource says where a ZooKeeper lock's fencing token comes from.
//
// The token is the key container's pzxid (the zxid of the last change to
// its children) in the Children reply that found the holder first, so no
// call of its own. It grows with each grant: that reply's state still
// holds the previous holder's znode or lies after its delete, whose zxid
// moves the pzxid past the previous token; a recreated container starts
// at its own, later, zxid. The znode's sequence number alone would not
// do: it restarts at 0 in a recreated container (the server deletes an
// empty one, and Close does).
const FenceSource = "zookeeper: the key container's pzxid in the Children reply that granted the lock (no extra call)"

// Root is the znode under which lockbench's locks live: one container
// per key, the contenders' ephemeral sequential znodes inside it.
const Root = "/lockbench"

// noValidity is a session lock's ValidUntil: it holds until released or
// its session expires (Lost says so), not for a TTL − drift window.
const noValidity = 100 * 365 * 24 * time.Hour

// Config is a ZooKeeper lock client's terms.
type Config struct {
	Servers []string
	// TTL is each session's timeout, as asked; the server clamps it to
	// its min/maxSessionTimeout, and a clamped one is refused.
	TTL time.Duration
	// Strategy is StrategyQueue or one of the retry policy's; Retry holds
	// the retry terms, and its WaitTime bounds a queued wait too.
	Strategy string
	Retry    lock.RetryPolicy
	// Sessions is how many contenders: one session (connection) each, so
	// that one contender's pause expires only its own.
	Sessions int
}

// Locker is the ZooKeeper lock recipe (Curator's InterProcessMutex, as
// the ZooKeeper docs give it) on go-zookeeper, one session per contender.
type Locker struct {
	cfg      Config
	sessions *slots.Pool[*session]
	granted  atomic.Int64 // the session timeout the server granted, ms
	rpcs     atomic.Int64
	parents  sync.Map        // key containers made by this locker, for Close
	losses   sessionloss.Log // sessions the ensemble expired under their clients
	// connected counts the sessions granted (a limit hit is named by it).
	connected atomic.Int64
}

// session is one ZooKeeper session: its connection, and lost closed when
// the server expired it (its ephemeral znodes are gone).
type session struct {
	conn     *zk.Conn
	lost     chan struct{}
	lostOnce sync.Once
	granted  atomic.Int64  // ms, from the connect reply
	id       atomic.Int64  // the session's id, from the connect reply
	has      chan struct{} // a session was granted (granted is set)
	// dirty: a znode of this session's may still stand in a queue (a
	// delete or a create failed); only its contender touches it.
	dirty bool
	// readVersion is the guarded read's, for its write.
	readVersion int32
}

// held is a lock's ZooKeeper side: its znode and the session holding it.
type held struct {
	s    *session
	path string
}

// New connects cfg.Sessions sessions, refusing a session timeout the
// server would change.
func New(ctx context.Context, cfg Config) (*Locker, error) {
	l := &Locker{cfg: cfg}
	l.sessions = slots.New(cfg.Sessions, l.connect, sessionAlive)
	if err := l.sessions.Fill(ctx); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// connectWait bounds the wait for a session from the servers.
const connectWait = 5 * time.Second

// connect opens one session and checks the timeout the server granted.
func (l *Locker) connect(ctx context.Context) (*session, error) {
	s := &session{lost: make(chan struct{}), has: make(chan struct{}, 1)}
	conn, _, err := zk.Connect(l.cfg.Servers, l.cfg.TTL, zk.WithLogger(s), zk.WithEventCallback(func(ev zk.Event) {
		if ev.State == zk.StateExpired {
			l.losses.Add(SessionName(s.id.Load()))
			s.lostOnce.Do(func() { close(s.lost) })
		}
	}))
	if err != nil {
		return nil, fmt.Errorf("zookeeper servers %s: %v", strings.Join(l.cfg.Servers, ","), err)
	}
	s.conn = conn
	select {
	case <-s.has:
		l.connected.Add(1)
	case <-time.After(connectWait):
		conn.Close()
		return nil, l.noSession()
	case <-ctx.Done():
		conn.Close()
		return nil, ctx.Err()
	}
	return s, l.checkGranted(s)
}

// noSession is why a session was not granted: the servers are not
// reachable, or, when others were granted, they refuse more connections
// from this address (a server closes at once a connection past its
// maxClientCnxns, and the client retries in silence).
func (l *Locker) noSession() error {
	servers := strings.Join(l.cfg.Servers, ",")
	if n := l.connected.Load(); n > 0 {
		return fmt.Errorf("zookeeper servers %s: session %d not granted in %v after %d were: the servers probably refuse more connections from this address (their maxClientCnxns, a limit per server); raise it, or use fewer workers or clients", servers, n+1, connectWait, n)
	}
	return fmt.Errorf("zookeeper servers %s: not reachable (no session in %v)", servers, connectWait)
}

// checkGranted refuses a session timeout the server clamped: the lock's
// hold bound would not be the one asked.
func (l *Locker) checkGranted(s *session) error {
	got := time.Duration(s.granted.Load()) * time.Millisecond
	l.granted.Store(s.granted.Load())
	if got != l.cfg.TTL {
		s.conn.Close()
		return fmt.Errorf("ttl: %v is not accepted by these ZooKeeper servers; they grant a session timeout of %v (clamped to their min/maxSessionTimeout)", l.cfg.TTL, got)
	}
	return nil
}

// Printf is the client's log: lockbench keeps only the timeout the server
// granted, which the client reports nowhere else (and only after its
// StateHasSession event: so this line, not the event, says "connected").
func (s *session) Printf(format string, args ...any) {
	if strings.HasPrefix(format, "authenticated: id=%d, timeout=%d") && len(args) == 2 {
		if id, ok := args[0].(int64); ok {
			s.id.Store(id)
		}
		if ms, ok := args[1].(int32); ok {
			s.granted.Store(int64(ms))
			select {
			case s.has <- struct{}{}:
			default:
			}
		}
	}
}

// SessionName is a session's id as losses name it (hex, as the server
// logs it: "Expiring session 0x…").
func SessionName(id int64) string { return strconv.FormatInt(id, 16) }

// Losses are the sessions the ensemble expired under this locker, as it
// learnt (StateExpired, on its next connection to a server).
func (l *Locker) Losses() []results.SessionLoss { return l.losses.List() }

// sessionAlive says the session has not expired; an expired one's
// connection is closed here, as its client would otherwise go on with a
// new session nobody uses.
func sessionAlive(s *session) bool {
	select {
	case <-s.lost:
		s.conn.Close()
		return false
	default:
		return true
	}
}

// GrantedTTL is the session timeout the servers granted.
func (l *Locker) GrantedTTL() time.Duration {
	return time.Duration(l.granted.Load()) * time.Millisecond
}

// LostSessions are sessions that expired (or that a failed clean-up gave
// up) and were replaced.
func (l *Locker) LostSessions() int64 { return l.sessions.Lost() }

// RPCs are the requests the locker sent for locks (connects and pings not
// counted; a watch set by ExistsW counts as its one request).
func (l *Locker) RPCs() int64 { return l.rpcs.Load() }

// giveBack returns a session to the pool; a dirty one (its znode may
// still stand in a queue) is closed, which ends the session and so its
// ephemeral znodes, and its slot left empty.
func (l *Locker) giveBack(s *session) {
	if !s.dirty {
		l.sessions.Put(s)
		return
	}
	s.abandon()
	l.sessions.Drop(true)
}

// abandon ends a dirty session at once: closing it ends the session on
// the servers, and its ephemeral znodes with it (a stale one first in a
// queue would hold the key for nobody); lost makes its contender's
// further tries fail fast until its slot is refilled.
func (s *session) abandon() {
	s.dirty = true
	s.conn.Close()
	s.lostOnce.Do(func() { close(s.lost) })
}

// Acquire takes key: in the recipe's queue, or by the try-once variant
// with the retry policy. Result.Err is set only when ctx ended; a lost
// connection or an election is a failed attempt the caller may retry.
func (l *Locker) Acquire(ctx context.Context, key string) (*lock.Lock, lock.Result) {
	start := time.Now()
	s, err := l.sessions.Take(ctx)
	if err != nil {
		return nil, lock.Result{Attempts: 1, Elapsed: time.Since(start), Err: ctx.Err()}
	}
	var path string
	var fence int64
	var res lock.Result
	if l.cfg.Strategy == StrategyQueue {
		path, fence, res = l.queue(ctx, s, key)
	} else {
		var lk *lock.Lock
		lk, res = l.cfg.Retry.Acquire(ctx, func(ctx context.Context) (*lock.Lock, lock.Result) { return l.tryOnce(ctx, s, key) })
		if lk != nil {
			path, fence = lk.Token, lk.Fence
		}
	}
	res.Elapsed = time.Since(start)
	if res.Acquired && isClosed(s.lost) { // an expiry during this Acquire: granted to a dead session
		l.remove(s, path)
		res.Acquired = false
	}
	if !res.Acquired {
		l.giveBack(s)
		return nil, res
	}
	return &lock.Lock{Key: key, Token: path, Start: start, ValidUntil: start.Add(noValidity),
		Handle: held{s, path}, Fence: fence, Lost: s.lost}, res
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// inDoubt says a failed call's effect is unknown: the connection went
// with its reply (a create may have left its znode).
func inDoubt(err error) bool {
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrClosing)
}

// dir is key's container znode; a key's "/" would make it a path, so it
// is escaped.
func dir(key string) string { return Root + "/" + strings.ReplaceAll(key, "/", "%2F") }

// enter creates the caller's ephemeral sequential znode in key's
// container (protected: a create whose reply was lost is found by its
// guid), making the container on the key's first use by this locker
// first: a create refused for want of it is a quorum write too (an error
// transaction). One the server deleted since is made again when the
// create is refused.
func (l *Locker) enter(s *session, key string) (string, error) {
	d := dir(key)
	if _, ok := l.parents.Load(d); !ok {
		if err := l.makeDir(s, d); err != nil {
			return "", err
		}
	}
	l.rpcs.Add(1)
	p, err := s.conn.CreateProtectedEphemeralSequential(d+"/lock-", nil, zk.WorldACL(zk.PermAll))
	if !errors.Is(err, zk.ErrNoNode) {
		return p, err
	}
	if err := l.makeDir(s, d); err != nil {
		return "", err
	}
	l.rpcs.Add(1)
	return s.conn.CreateProtectedEphemeralSequential(d+"/lock-", nil, zk.WorldACL(zk.PermAll))
}

// makeDir creates Root and the key's container (the server deletes an
// empty container itself; Close deletes the ones left).
func (l *Locker) makeDir(s *session, d string) error {
	if err := l.makeRoot(s); err != nil {
		return err
	}
	l.rpcs.Add(1)
	_, err := s.conn.CreateContainer(d, nil, zk.FlagContainer, zk.WorldACL(zk.PermAll))
	if errors.Is(err, zk.ErrNoNode) { // Root went (deleted from outside): make it again, once
		l.parents.Delete(Root)
		if err = l.makeRoot(s); err == nil {
			l.rpcs.Add(1)
			_, err = s.conn.CreateContainer(d, nil, zk.FlagContainer, zk.WorldACL(zk.PermAll))
		}
	}
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return err
	}
	l.parents.Store(d, true)
	return nil
}

// makeRoot creates Root, lockbench's znode, once.
func (l *Locker) makeRoot(s *session) error {
	if _, ok := l.parents.Load(Root); ok {
		return nil
	}
	l.rpcs.Add(1)
	if _, err := s.conn.Create(Root, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return err
	}
	l.parents.Store(Root, false)
	return nil
}

// predecessor is the znode just before path's in its container's queue
// ("" when path is first: it holds the lock, and fence is its token, the
// container's pzxid in that reply: see FenceSource).
func (l *Locker) predecessor(s *session, path string) (pred string, fence int64, err error) {
	d := path[:strings.LastIndexByte(path, '/')]
	l.rpcs.Add(1)
	kids, st, err := s.conn.Children(d)
	if err != nil {
		return "", 0, err
	}
	slices.SortFunc(kids, func(a, b string) int { return strings.Compare(seq(a), seq(b)) })
	me := path[len(d)+1:]
	i := slices.Index(kids, me)
	switch {
	case i < 0:
		return "", 0, zk.ErrNoNode // our znode is gone: its session expired
	case i == 0:
		return "", st.Pzxid, nil
	}
	return d + "/" + kids[i-1], 0, nil
}

// seq is a sequential znode's counter, the queue's order (the protected
// prefix differs per create and must not sort).
func seq(name string) string { return name[max(0, len(name)-10):] }

// queue waits in key's queue, watching its predecessor, at most the wait
// time: a caller that waited that long gave up (the key was taken).
func (l *Locker) queue(ctx context.Context, s *session, key string) (string, int64, lock.Result) {
	wctx := ctx
	if wt := l.cfg.Retry.WaitTime; wt > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, wt)
		defer cancel()
	}
	res := lock.Result{Attempts: 1, Sent: 1}
	path, err := l.enter(s, key)
	var fence int64
	if err == nil {
		fence, err = l.waitTurn(wctx, s, path)
	}
	switch {
	case err == nil:
		res.Acquired = true
		return path, fence, res
	case ctx.Err() != nil:
		res.Err = ctx.Err()
	case errors.Is(err, context.DeadlineExceeded):
		res.Taken = true
	}
	if path != "" {
		l.remove(s, path)
	} else if inDoubt(err) {
		s.abandon() // a create whose outcome is unknown
	}
	return "", 0, res
}

// waitTurn returns the lock's fence when path is first in its queue, or
// the wait ended.
func (l *Locker) waitTurn(ctx context.Context, s *session, path string) (int64, error) {
	for {
		pred, fence, err := l.predecessor(s, path)
		if err != nil || pred == "" {
			return fence, err
		}
		l.rpcs.Add(1)
		// GetW sets a watch only on a znode that exists (ExistsW would
		// leave one on a predecessor just gone, never to fire).
		_, _, ch, err := s.conn.GetW(pred)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return 0, err
		}
		select {
		case <-ch:
		case <-s.lost:
			return 0, zk.ErrSessionExpired
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// tryOnce is the try-once variant: enter the queue, hold the lock if
// first, else leave it (taken). Another error is a failed attempt.
func (l *Locker) tryOnce(ctx context.Context, s *session, key string) (*lock.Lock, lock.Result) {
	if s.dirty {
		return nil, lock.Result{Err: ctx.Err()} // abandoned: its slot is refilled when given back
	}
	path, err := l.enter(s, key)
	if err != nil {
		if inDoubt(err) {
			s.abandon() // a create whose outcome is unknown
		}
		return nil, lock.Result{Sent: 1, Err: ctx.Err()}
	}
	pred, fence, err := l.predecessor(s, path)
	switch {
	case err == nil && pred == "": // the retry loop stops at a lock: Acquire makes the real one
		return &lock.Lock{Token: path, Fence: fence}, lock.Result{Acquired: true, Sent: 2}
	case err == nil:
		l.remove(s, path)
		return nil, lock.Result{Taken: true, Sent: 3}
	}
	l.remove(s, path)
	return nil, lock.Result{Sent: 2, Err: ctx.Err()}
}

// remove deletes the caller's znode; when that failed the session is
// dirty (it must end for the znode to go).
func (l *Locker) remove(s *session, path string) {
	l.rpcs.Add(1)
	if err := s.conn.Delete(path, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		s.abandon()
	}
}

// Release deletes the holder's znode (the next waiter's watch fires) and
// gives its session back; a delete that failed ends the session, so that
// the znode cannot block the queue.
func (l *Locker) Release(ctx context.Context, lk *lock.Lock) lock.OpResult {
	start := time.Now()
	h := lk.Handle.(held)
	l.rpcs.Add(1)
	err := h.s.conn.Delete(h.path, -1)
	ok := err == nil
	h.s.dirty = h.s.dirty || !ok && !errors.Is(err, zk.ErrNoNode)
	l.giveBack(h.s)
	return lock.OpResult{OK: ok, Count: b2i(ok), Elapsed: time.Since(start), Sent: 1}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// CountKeys counts key containers under Root whose name starts with
// prefix (another live run's locks).
func (l *Locker) CountKeys(ctx context.Context, prefix string) (int64, error) {
	s, err := l.sessions.Take(ctx)
	if err != nil {
		return 0, err
	}
	defer l.sessions.Put(s)
	kids, _, err := s.conn.Children(Root)
	if errors.Is(err, zk.ErrNoNode) {
		return 0, nil
	}
	var n int64
	for _, k := range kids {
		if strings.HasPrefix(k, strings.ReplaceAll(prefix, "/", "%2F")) {
			n++
		}
	}
	return n, err
}

// Put is a plain write (a Set, created on first use): the baseline a
// lock's round trips compare with.
func (l *Locker) Put(ctx context.Context, key string) error {
	return l.with(ctx, func(s *session) error {
		_, err := s.conn.Set(dir(key), []byte("x"), -1)
		if errors.Is(err, zk.ErrNoNode) {
			if err = l.makeRoot(s); err == nil {
				_, err = s.conn.Create(dir(key), []byte("x"), 0, zk.WorldACL(zk.PermAll))
			}
		}
		return err
	})
}

// Delete removes key's znode (the baseline's own).
func (l *Locker) Delete(ctx context.Context, key string) error {
	return l.with(ctx, func(s *session) error {
		err := s.conn.Delete(dir(key), -1)
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		return err
	})
}

// with runs f on a session of the pool.
func (l *Locker) with(ctx context.Context, f func(*session) error) error {
	s, err := l.sessions.Take(ctx)
	if err != nil {
		return err
	}
	defer l.sessions.Put(s)
	return f(s)
}

// Close deletes the key containers this locker made (the server would
// only after its check interval) and ends every session, which deletes
// their ephemeral znodes, held locks' too.
func (l *Locker) Close() {
	var keep *session
	for _, s := range l.sessions.Opened() {
		if keep == nil && s.conn.State() == zk.StateHasSession {
			keep = s
			continue
		}
		s.conn.Close()
	}
	if keep != nil {
		l.sweep(keep)
		keep.conn.Close()
	}
}

// sweep deletes this locker's key containers with the one session left
// open, many at a time (the client pipelines them), and Root when nobody
// else's containers are in it. A container with a znode in it (another
// process's holder or waiter) is refused as not empty and left to the
// server, which deletes it once empty; nobody else's znode is touched.
func (l *Locker) sweep(s *session) {
	dirs := make(chan string)
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for d := range dirs {
				_ = s.conn.Delete(d, -1)
			}
		})
	}
	deadline := time.Now().Add(sweepTime)
	l.parents.Range(func(k, isDir any) bool {
		if isDir.(bool) {
			dirs <- k.(string)
		}
		return time.Now().Before(deadline)
	})
	close(dirs)
	wg.Wait()
	_ = s.conn.Delete(Root, -1)
}

// sweepTime bounds Close's clean-up of containers (the server deletes
// the empty ones left after its container check interval).
const sweepTime = 20 * time.Second
