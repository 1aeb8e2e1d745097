package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"lockbench/lock"
)

// Engine is a Redlock client over N masters.
type Engine struct {
	cfg Config
	// setTTL is the TTL in ms, formatted once, not per SET; relSHA,
	// relNotifySHA and extSHA name the preloaded scripts.
	setTTL, relSHA, relNotifySHA, extSHA string
	// relKind is every release's script: opReleaseNotify with strategy
	// notify (it publishes), opRelease otherwise (nothing extra to pay).
	relKind opKind
	// notify is the pub/sub side of strategy notify (nil otherwise);
	// publishes counts the PUBLISHes notify releases made.
	notify    *notifier
	publishes atomic.Int64
	builder   rueidis.Builder
	links     []*link
	addrs     []string
	quorum    int
	tokens    *tokenSource
	// timeouts ends waits at their deadline (one watchdog, no timer per call).
	timeouts *timeouts
	// setTimeouts ends acquires' waits when they carry WAIT (wait.go).
	setTimeouts *timeouts
	late        lateCounts
	calls       sync.Pool // *call, reused once every reply is in
	// measuring is set by MarkMeasured: late replies of acquires started
	// from then on are the run's, earlier ones the warm-up's.
	measuring atomic.Bool
	// quit ends every watchdog's renewals at Close, watchers waits for
	// them (a lock never released must not renew on closed links).
	quit     chan struct{}
	watchers sync.WaitGroup
	// closed is set as Close begins: attempts after it return ErrClosed
	// (a notify waiter woken by the close must not touch its links).
	closed atomic.Bool
	// closing is held by Close, and read-held by InfoAt: a live-metrics
	// scrape may come at any time, also as the cell closes its engine.
	closing sync.RWMutex
}

// ErrClosed is an attempt's error once the engine was closed.
var ErrClosed = errors.New("engine: closed")

// New connects to every master. A master that cannot be reached is an error
// naming its address: a benchmark should not start against a typo.
func New(ctx context.Context, cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	targets, err := cfg.targets(ctx)
	if err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, quorum: Quorum(len(targets)), tokens: newTokenSource(), timeouts: startTimeouts(cfg.Timeout),
		setTTL: strconv.FormatInt(cfg.TTL.Milliseconds(), 10), relSHA: sha1Hex(releaseScript), extSHA: sha1Hex(extendScript),
		relNotifySHA: sha1Hex(releaseNotifyScript), relKind: opRelease, quit: make(chan struct{})}
	e.late = newLateCounts(len(targets))
	e.startWait()
	scripts := []string{releaseScript, extendScript}
	if cfg.Strategy == StrategyNotify {
		e.relKind = opReleaseNotify
		scripts = append(scripts, releaseNotifyScript)
	}
	for i, tg := range targets {
		opt, display := tg.opt, tg.display
		var client rueidis.Client
		if tg.cluster {
			client, err = newClusterClient(clientOption(opt, cfg.Timeout, cfg.FlushDelay), display)
		} else {
			client, err = NewSingleClient(clientOption(opt, cfg.Timeout, cfg.FlushDelay))
		}
		if err != nil {
			e.Close()
			return nil, fmt.Errorf("master %s: %w", display, err)
		}
		l := &link{index: i, addr: display, client: client, maxBatch: cfg.MaxBatch, wait: tg.wait, cluster: tg.cluster}
		if i == 0 {
			e.builder = client.B() // builds the commands every master is sent
		}
		e.links = append(e.links, l)
		e.addrs = append(e.addrs, display)
		// Preload the scripts so the hot path is EVALSHA; NOSCRIPT still falls back.
		if err := l.loadScripts(ctx, scripts); err != nil {
			e.Close()
			return nil, fmt.Errorf("master %s: SCRIPT LOAD: %w", display, err)
		}
		l.start(cfg.Dispatchers)
	}
	if cfg.Strategy == StrategyNotify {
		n, err := startNotifier(e.links, cfg.Timeout)
		if err != nil {
			e.Close()
			return nil, err
		}
		e.notify = n
	}
	return e, nil
}

// loadScripts loads scripts on the link's master, or on every node of a
// cluster (each shard runs the scripts of its keys).
func (l *link) loadScripts(ctx context.Context, scripts []string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for _, c := range l.nodes() {
		for _, s := range scripts {
			if err := c.Do(ctx, c.B().ScriptLoad().Script(s).Build()).Error(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close stops the dispatchers and closes every connection.
func (e *Engine) Close() {
	e.closing.Lock()
	defer e.closing.Unlock()
	if !e.closed.Load() {
		close(e.quit)
	}
	e.closed.Store(true)
	e.watchers.Wait()
	if e.notify != nil {
		e.notify.close()
		e.notify = nil
	}
	for _, l := range e.links {
		l.stop()
		l.client.Close()
	}
	e.links = nil
	if e.timeouts != nil {
		e.timeouts.stop()
		e.timeouts = nil
	}
	if e.setTimeouts != nil {
		e.setTimeouts.stop()
		e.setTimeouts = nil
	}
}

// Addrs are the masters' display addresses (no secrets), in order.
func (e *Engine) Addrs() []string { return e.addrs }

// MarkMeasured starts the measured window: from here on, late replies
// count as the run's (LateOutcomes, LateReleased); before it, as warm-up.
func (e *Engine) MarkMeasured() { e.measuring.Store(true) }

// LateOutcomes returns, per master and outcome, replies to acquire SETs
// that arrived after the caller stopped waiting (wait=quorum or a timeout):
// of acquires started after MarkMeasured, or of all of them if it was never
// called. Releases' and extends' late replies are in LateOther.
func (e *Engine) LateOutcomes() [][NumOutcomes]int64 {
	return loadOutcomes(e.late.acquire[b2i(e.measuring.Load())])
}

// LateOther returns late replies to releases and extends, per master.
func (e *Engine) LateOther() [][NumOutcomes]int64 { return loadOutcomes(e.late.other) }

// LateReleased returns, per master, SETs that answered OK after their
// acquire was decided as failed and were then released there (same window
// as LateOutcomes).
func (e *Engine) LateReleased() []int64 {
	src := e.late.released[b2i(e.measuring.Load())]
	out := make([]int64, len(src))
	for i := range src {
		out[i] = src[i].Load()
	}
	return out
}

func loadOutcomes(src [][NumOutcomes]atomic.Int64) [][NumOutcomes]int64 {
	out := make([][NumOutcomes]int64, len(src))
	for i := range src {
		for o := range src[i] {
			out[i][o] = src[i][o].Load()
		}
	}
	return out
}

// Lock is a held lock, the seam's (lock.Lock): a Redlock's t1 of the
// winning attempt is its Start, t1 + TTL − drift its ValidUntil, and its
// Room the release's outcomes.
type Lock = lock.Lock

// lockRoom is a lock with room for the outcomes its acquire and its release
// return: one allocation instead of three, for up to 8 masters.
type lockRoom struct {
	lock Lock
	outs [2][8]Outcome
}

// newLock returns an empty lock and its acquire's outcome slice.
func (e *Engine) newLock() (*Lock, []Outcome) {
	n := len(e.links)
	if n > len(lockRoom{}.outs[0]) {
		return &Lock{Room: make([]Outcome, n)}, make([]Outcome, n)
	}
	r := &lockRoom{}
	r.lock.Room = r.outs[1][:n]
	return &r.lock, r.outs[0][:n]
}

// Result is what one acquire saw, and OpResult what a release or an
// extend saw: the seam's, per master.
type (
	Result   = lock.Result
	OpResult = lock.OpResult
)

// Acquire tries to take key, retrying by the wait strategy up to Retries
// times or for WaitTime. A nil lock means not acquired.
func (e *Engine) Acquire(ctx context.Context, key string) (*Lock, Result) {
	if e.notify != nil {
		return e.acquireNotify(ctx, key)
	}
	return e.cfg.Retry().Acquire(ctx, func(ctx context.Context) (*Lock, Result) { return e.TryAcquire(ctx, key) })
}

// acquireNotify is Acquire with strategy notify. Its attempts' tokens
// share one unique family (family + attempt number), which its
// subscription ignores: the clean-up of its own failed attempt publishes
// where its SET landed, and must not wake it.
func (e *Engine) acquireNotify(ctx context.Context, key string) (*Lock, Result) {
	family := e.tokens.next() + "."
	p := e.cfg.Retry()
	p.Subscribe = func() Subscription { return e.notify.subscribe(key, family) }
	n := 0
	return p.Acquire(ctx, func(ctx context.Context) (*Lock, Result) {
		n++
		return e.tryAcquire(ctx, key, family+strconv.Itoa(n))
	})
}

// TryAcquire is one attempt of the algorithm: SET NX PX on every master,
// quorum and validity, and release on all masters when it failed.
func (e *Engine) TryAcquire(ctx context.Context, key string) (*Lock, Result) {
	return e.tryAcquire(ctx, key, e.tokens.next())
}

// tryAcquire is TryAcquire with the attempt's token.
func (e *Engine) tryAcquire(ctx context.Context, key, token string) (*Lock, Result) {
	if err := ctx.Err(); err != nil {
		return nil, Result{Err: err, PerMaster: make([]Outcome, len(e.links))}
	}
	if e.closed.Load() {
		return nil, Result{Err: ErrClosed}
	}
	lock, outs := e.newLock()
	t1 := time.Now()
	ok, elapsed := e.run(opSet, key, token, e.cfg.TTL.Milliseconds(), true, t1, outs)
	validity := Validity(e.cfg.TTL, elapsed, e.cfg.DriftFactor)
	res := Result{Successes: ok, Elapsed: elapsed, Validity: validity, PerMaster: outs, Sent: e.sent(opSet, outs)}
	if ok >= e.quorum && validity > 0 {
		res.Acquired = true
		// Validity is what is left from the end of the acquire, so the lock
		// is usable until t1 + TTL − drift.
		lock.Key, lock.Token, lock.Start = key, token, t1
		lock.ValidUntil = t1.Add(e.cfg.TTL - Drift(e.cfg.TTL, e.cfg.DriftFactor))
		if e.cfg.Watchdog {
			e.watch(lock)
		}
		return lock, res
	}
	// Release everywhere, also where the SET seemed to fail: a timed-out SET
	// may still have landed. It announces nothing, even with notify: the
	// waiters of several engines would wake each other in turn; an attempt
	// that lost a split vote retries after the retry delay instead.
	e.run(opRelease, key, token, 0, false, time.Now(), lock.Room)
	res.Sent += e.sent(opRelease, lock.Room)
	return nil, res
}

// sent counts a command's sends in its outcomes, and the PUBLISH of a
// notify release that freed the key (OK).
func (e *Engine) sent(kind opKind, outs []Outcome) int {
	n := 0
	for _, o := range outs {
		if o != NotSent {
			n++
		}
		if o == OK && kind == opReleaseNotify {
			n++
		}
	}
	return n
}

// Release frees the lock on every master (compare-and-delete). PerMaster
// is room kept in the lock, shared by its copies: a second Release of the
// same lock reuses it, so do not release one lock from two goroutines at once.
func (e *Engine) Release(ctx context.Context, l *Lock) OpResult {
	stopWatch(l) // no renewal after (or racing) the release
	outs := l.Room
	if len(outs) != len(e.links) { // a Lock not made by TryAcquire
		outs = make([]Outcome, len(e.links))
	}
	t1 := time.Now()
	n, elapsed := e.run(e.relKind, l.Key, l.Token, 0, false, t1, outs)
	return OpResult{OK: n > 0, Count: n, Elapsed: elapsed, PerMaster: outs, Sent: e.sent(e.relKind, outs)}
}

// Extend resets the TTL to ttl on every master that still holds our token.
// It succeeds only with a quorum within the remaining validity.
func (e *Engine) Extend(ctx context.Context, l *Lock, ttl time.Duration) OpResult {
	t1 := time.Now()
	if !t1.Before(l.ValidUntil) {
		return OpResult{Elapsed: 0, PerMaster: make([]Outcome, len(e.links))}
	}
	outs := make([]Outcome, len(e.links))
	n, elapsed := e.run(opExtend, l.Key, l.Token, ttl.Milliseconds(), true, t1, outs)
	validity := Validity(ttl, elapsed, e.cfg.DriftFactor)
	res := OpResult{Count: n, Elapsed: elapsed, Validity: validity, PerMaster: outs}
	if n >= e.quorum && validity > 0 && t1.Add(elapsed).Before(l.ValidUntil) {
		res.OK = true
		l.Start = t1
		l.ValidUntil = t1.Add(ttl - Drift(ttl, e.cfg.DriftFactor))
	}
	return res
}

// run sends one command to every master in the configured mode, writes
// the outcomes into outs (one per master) and returns how many were OK and
// the time since t1 when it stopped waiting. decides says whether
// wait=quorum may stop early for this command (acquire and extend; a
// release goes to all).
func (e *Engine) run(kind opKind, key, token string, ttlMs int64, decides bool, t1 time.Time, outs []Outcome) (int, time.Duration) {
	c := e.newCall(kind, key, token, ttlMs, decides && e.cfg.Wait == WaitQuorum)
	if e.cfg.Mode == Multiplexed {
		deadline := time.Now().Add(e.timeout(kind))
		c.sendAll(deadline)
		c.wait(deadline)
		return c.finish(t1, outs)
	}
	sent := e.sequential(c)
	ok, elapsed := c.finish(t1, outs)
	for i := sent; i < len(outs); i++ {
		outs[i] = NotSent
	}
	return ok, elapsed
}

// sequential tries master after master, each with its own timeout, until
// all were tried or (wait=quorum) the outcome is known. It returns how many
// masters were sent the command.
func (e *Engine) sequential(c *call) int {
	for i := range e.links {
		c.mu.Lock()
		c.waitFor = -1
		stop := c.early && c.decided()
		c.waitFor = i
		c.mu.Unlock()
		if stop {
			return i
		}
		deadline := time.Now().Add(e.timeout(c.kind))
		c.send(i, deadline)
		c.wait(deadline)
	}
	c.mu.Lock()
	c.waitFor = -1
	c.mu.Unlock()
	return len(e.links)
}

// BaselineRTT times samples plain SET round trips to each master, one at a
// time and without the dispatcher: the floor an acquire is compared with.
// The probe key is deleted afterwards.
func (e *Engine) BaselineRTT(ctx context.Context, key string, samples int) ([][]time.Duration, error) {
	out := make([][]time.Duration, len(e.links))
	for i, l := range e.links {
		c := l.client
		for range samples {
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			t0 := time.Now()
			err := c.Do(cctx, c.B().Set().Key(key).Value(e.tokens.prefix+"rtt").PxMilliseconds(e.cfg.TTL.Milliseconds()).Build()).Error()
			d := time.Since(t0)
			cancel()
			if err != nil {
				return nil, fmt.Errorf("master %s: baseline SET: %w", l.addr, err)
			}
			out[i] = append(out[i], d)
		}
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		_ = c.Do(cctx, c.B().Del().Key(key).Build()).Error()
		cancel()
	}
	return out, nil
}

// BaselineParallel times samples plain SETs sent to every master at once
// (one goroutine per master, no dispatcher) and waited for together: the
// floor of a multiplexed acquire on this machine, where N servers and the
// client share the cores.
func (e *Engine) BaselineParallel(ctx context.Context, key string, samples int) ([]time.Duration, error) {
	out := make([]time.Duration, 0, samples)
	errs := make([]error, len(e.links))
	for range samples {
		var wg sync.WaitGroup
		t0 := time.Now()
		for i, l := range e.links {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cctx, cancel := context.WithTimeout(ctx, time.Second)
				defer cancel()
				c := l.client
				errs[i] = c.Do(cctx, c.B().Set().Key(key).Value(e.tokens.prefix+"rtt").PxMilliseconds(e.cfg.TTL.Milliseconds()).Build()).Error()
			}()
		}
		wg.Wait()
		out = append(out, time.Since(t0))
		for i, err := range errs {
			if err != nil {
				return nil, fmt.Errorf("master %s: baseline SET: %w", e.links[i].addr, err)
			}
		}
	}
	for _, l := range e.links {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		_ = l.client.Do(cctx, l.client.B().Del().Key(key).Build()).Error()
		cancel()
	}
	return out, nil
}

// TokenPrefix is what every token of this engine starts with.
func (e *Engine) TokenPrefix() string { return e.tokens.prefix }

// CountKeys counts the keys under prefix on master i (SCAN, no KEYS).
func (e *Engine) CountKeys(ctx context.Context, i int, prefix string) (int, error) {
	n := 0
	err := e.links[i].scanPrefix(ctx, prefix, func(keys []string) error { n += len(keys); return nil })
	return n, err
}

// Cleanup deletes, on every master, the keys under prefix whose value
// starts with one of tokenPrefixes, and nothing else (no FLUSHALL, ever).
// It returns how many keys it deleted.
func (e *Engine) Cleanup(ctx context.Context, prefix string, tokenPrefixes ...string) (int, error) {
	total := 0
	var errs []error
	for _, l := range e.links {
		c := l.client
		err := l.scanPrefix(ctx, prefix, func(keys []string) error {
			if l.cluster {
				n, err := l.clusterCleanup(ctx, keys, tokenPrefixes)
				total += n
				return err
			}
			n, err := c.Do(ctx, c.B().Eval().Script(cleanupScript).Numkeys(int64(len(keys))).Key(keys...).Arg(tokenPrefixes...).Build()).AsInt64()
			total += int(n)
			return err
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("master %s: %w", l.addr, err))
		}
	}
	return total, errors.Join(errs...)
}

// scanPrefix walks the keys under prefix with SCAN (never KEYS) on the
// link's master or each of a cluster's, handing each non-empty page to fn.
func (l *link) scanPrefix(ctx context.Context, prefix string, fn func([]string) error) error {
	ms, err := l.masters(ctx)
	if err != nil {
		return err
	}
	for _, c := range ms {
		if err := scanNode(ctx, c, prefix, fn); err != nil {
			return err
		}
	}
	return nil
}

// scanNode is scanPrefix on one server.
func scanNode(ctx context.Context, c rueidis.Client, prefix string, fn func([]string) error) error {
	var cursor uint64
	for {
		se, err := c.Do(ctx, c.B().Scan().Cursor(cursor).Match(escapeGlob(prefix)+"*").Count(1000).Build()).AsScanEntry()
		if err != nil {
			return err
		}
		if len(se.Elements) > 0 {
			if err := fn(se.Elements); err != nil {
				return err
			}
		}
		if cursor = se.Cursor; cursor == 0 {
			return nil
		}
	}
}

func escapeGlob(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			out = append(out, '\\')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// Commands are the commands an engine sent its masters, by kind (the
// seam's, which the worker loop reads).
type Commands = lock.Commands

// The kinds of commands the engine counts, as results record them: a
// release's PUBLISH (notify) runs inside its script but is one more
// command the server executes; WAITs follow batches of SETs
// (replicated).
const (
	CmdSets         = "sets"
	CmdReleases     = "releases"
	CmdExtends      = "extends"
	CmdPublishes    = "publishes"
	CmdSubscribes   = "subscribes"
	CmdUnsubscribes = "unsubscribes"
	CmdWaits        = "waits"
)

// Commands returns the commands sent since New, by kind.
func (e *Engine) Commands() Commands {
	var sets, releases, extends int64
	for _, l := range e.links {
		sets += l.kinds[opSet].Load()
		releases += l.kinds[opRelease].Load() + l.kinds[opReleaseNotify].Load()
		extends += l.kinds[opExtend].Load()
	}
	n := e.NotifyCounts()
	return Commands{CmdSets: sets, CmdReleases: releases, CmdExtends: extends, CmdPublishes: n.Publishes,
		CmdSubscribes: n.Subscribes, CmdUnsubscribes: n.Unsubscribes, CmdWaits: e.WaitCounts().Sent}
}

// SharedKinds: subscriptions and WAITs are the window's, no one acquire's
// (an acquire's Sent counts its SETs and the release scripts theirs).
func (e *Engine) SharedKinds() []string { return []string{CmdSubscribes, CmdUnsubscribes, CmdWaits} }

// Wakeups are the notify waits' wake-ups so far; false when the engine
// does not wait by notify.
func (e *Engine) Wakeups() (lock.Wakeups, bool) {
	n := e.NotifyCounts()
	return lock.Wakeups{ByMessage: n.WokenByMessage, ByTimeout: n.WokenByTimeout}, e.Notifying()
}

// Notifying says whether the engine waits by notify (its wake-ups count).
func (e *Engine) Notifying() bool { return e.notify != nil }

// Batching returns how many batches were sent to the masters and how many
// commands they held, since New: commands per batch is how much the
// dispatchers coalesced.
func (e *Engine) Batching() (batches, commands int64) {
	for _, l := range e.links {
		batches += l.batches.Load()
		commands += l.sent.Load()
	}
	return batches, commands
}
