// Package redsyncdriver runs the same workload through go-redsync/redsync v4
// on go-redis v9, so users can compare the library they run today with
// lockbench's engine under the same load, in the same report.
//
// The comparison is on equal terms: as many go-redis connections per master
// as workers can use, the per-master timeout on every command (release and
// extend too), the same drift (TTL × factor + 2 ms) and the same retry loop,
// and every master's reply counted as the engine counts it.
package redsyncdriver

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredislib "github.com/redis/go-redis/v9"

	"lockbench/lock"
	"lockbench/redislock/engine"
	"lockbench/results"
)

// Settings are the terms redsync ran on, recorded with the result (the
// type is results', so that a result can hold it).
type Settings = results.RedsyncSettings

// Driver adapts redsync to the runner's Locker and Extender interfaces.
type Driver struct {
	cfg      engine.Config
	rs       *redsync.Redsync
	clients  []*goredislib.Client
	addrs    []string
	tokens   *engine.TokenSource
	late     *lateCounts
	settings Settings
}

// New connects one go-redis client per master, sized for workers, and
// checks each with PING. redsync always acquires on all masters at once, so
// only mode multiplexed is accepted; wait=quorum maps to redsync's
// WithFailFast.
func New(ctx context.Context, cfg engine.Config, workers int) (*Driver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Mode != engine.Multiplexed {
		return nil, fmt.Errorf("mode: %q is not available with driver redsync; redsync acquires on all masters at once (multiplexed)", cfg.Mode)
	}
	if cfg.Strategy == engine.StrategyNotify { // redsync's unlock does not publish
		return nil, fmt.Errorf("wait-strategy: notify is not accepted with driver redsync; use retry, backoff or spin")
	}
	d := &Driver{cfg: cfg, tokens: engine.NewTokenSource(), late: newLateCounts(len(cfg.Masters))}
	d.settings = Settings{
		PoolSize:    max(2*workers, 10*runtime.GOMAXPROCS(0)),
		DriftFactor: driftFactor(cfg.TTL, cfg.DriftFactor),
		Drift:       engine.Drift(cfg.TTL, cfg.DriftFactor).String(),
		Timeout:     cfg.Timeout.String(),
		Retries:     cfg.Retries,
	}
	var pools []redsyncredis.Pool
	for i, m := range cfg.Masters {
		c, display, err := d.connect(ctx, m)
		if err != nil {
			d.Close()
			return nil, err
		}
		d.clients = append(d.clients, c)
		d.addrs = append(d.addrs, display)
		pools = append(pools, countingPool{inner: goredis.NewPool(c), node: i})
	}
	d.rs = redsync.New(pools...)
	return d, nil
}

// connect opens and pings one master's go-redis client.
func (d *Driver) connect(ctx context.Context, m string) (*goredislib.Client, string, error) {
	_, display, err := engine.ParseMaster(m)
	if err != nil {
		return nil, "", err
	}
	url := m
	if !strings.Contains(url, "://") {
		url = "redis://" + url
	}
	opt, err := goredislib.ParseURL(url)
	if err != nil {
		return nil, "", fmt.Errorf("masters: %q: %s", engine.RedactURL(m), engine.RedactIn(err.Error(), m))
	}
	if opt.TLSConfig != nil && !d.cfg.TLS.Empty() {
		if opt.TLSConfig, err = d.cfg.TLS.Config(opt.TLSConfig.ServerName); err != nil {
			return nil, "", err
		}
	}
	// Without this go-redis ignores context deadlines on the socket, and
	// the per-master timeout would not bound anything.
	opt.ContextTimeoutEnabled = true
	opt.MaxRetries = -1
	opt.PoolSize = d.settings.PoolSize
	c := goredislib.NewClient(opt)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err = c.Ping(pctx).Err()
	cancel()
	if err != nil {
		c.Close()
		return nil, "", fmt.Errorf("master %s: %w", display, err)
	}
	return c, display, nil
}

// driftFactor is the factor that gives redsync (drift = TTL × factor) the
// engine's drift, TTL × factor + 2 ms.
func driftFactor(ttl time.Duration, factor float64) float64 {
	return float64(engine.Drift(ttl, factor)) / float64(ttl)
}

// options are redsync's settings for a lock of ttl.
func (d *Driver) options(ttl time.Duration, extra ...redsync.Option) []redsync.Option {
	return append([]redsync.Option{
		redsync.WithExpiry(ttl),
		redsync.WithTries(1),
		redsync.WithDriftFactor(driftFactor(ttl, d.cfg.DriftFactor)),
		// redsync's per-master timeout on acquire is expiry × factor.
		redsync.WithTimeoutFactor(float64(d.cfg.Timeout) / float64(ttl)),
		redsync.WithFailFast(d.cfg.Wait == engine.WaitQuorum),
		// Our own token format, so the cleanup after a run recognises them.
		redsync.WithGenValueFunc(func() (string, error) { return d.tokens.Next(), nil }),
	}, extra...)
}

// Settings are the terms this driver runs redsync on.
func (d *Driver) Settings() Settings { return d.settings }

// TokenPrefix is what every lock value of this driver starts with.
func (d *Driver) TokenPrefix() string { return d.tokens.Prefix() }

// Close closes every client.
func (d *Driver) Close() {
	for _, c := range d.clients {
		c.Close()
	}
	d.clients = nil
}

// Addrs are the masters' display addresses.
func (d *Driver) Addrs() []string { return d.addrs }

// LateOutcomes are SET replies that came after redsync had decided (only
// under wait=quorum, where redsync returns without waiting for them).
func (d *Driver) LateOutcomes() [][engine.NumOutcomes]int64 { return d.late.snapshot() }

// Acquire tries to take key with the engine's retry policy, each attempt
// one redsync TryLockContext.
func (d *Driver) Acquire(ctx context.Context, key string) (*lock.Lock, lock.Result) {
	return d.cfg.Retry().Acquire(ctx, func(ctx context.Context) (*lock.Lock, lock.Result) { return d.tryAcquire(ctx, key) })
}

// tryAcquire is one redsync attempt, with every master's SET outcome.
func (d *Driver) tryAcquire(ctx context.Context, key string) (*lock.Lock, lock.Result) {
	n := len(d.addrs)
	if err := ctx.Err(); err != nil {
		return nil, lock.Result{Err: err, PerMaster: make([]engine.Outcome, n)}
	}
	rec := newAttempt(opSetNX, n, d.cfg.Wait == engine.WaitQuorum, d.late)
	m := d.rs.NewMutex(key, d.options(d.cfg.TTL)...)
	t1 := time.Now()
	err := m.TryLockContext(withAttempt(ctx, rec))
	end := time.Now()
	outs, ok := rec.close()
	res := lock.Result{Successes: ok, Elapsed: end.Sub(t1), PerMaster: outs,
		Validity: engine.Validity(d.cfg.TTL, end.Sub(t1), d.cfg.DriftFactor)}
	if err == nil {
		res.Acquired = true
		res.Validity = m.Until().Sub(end)
		return &lock.Lock{Key: key, Token: m.Value(), Start: t1, ValidUntil: m.Until(), Handle: m}, res
	}
	if ctx.Err() != nil {
		res.Err = ctx.Err()
	}
	return nil, res
}

// mutexFor is the redsync mutex of a held lock, for a lock of ttl.
func (d *Driver) mutexFor(l *lock.Lock, ttl time.Duration) *redsync.Mutex {
	if m, ok := l.Handle.(*redsync.Mutex); ok && ttl == d.cfg.TTL {
		return m
	}
	return d.rs.NewMutex(l.Key, d.options(ttl, redsync.WithValue(l.Token))...)
}

// Release unlocks with redsync's own compare-and-delete, each master
// bounded by the per-master timeout as the engine's release is. OK when at
// least one master freed it (as the engine counts it; redsync's own answer
// wants a quorum).
func (d *Driver) Release(ctx context.Context, l *lock.Lock) lock.OpResult {
	rec := newAttempt(opEval, len(d.addrs), false, nil)
	m := d.mutexFor(l, d.cfg.TTL)
	t1 := time.Now()
	cctx, cancel := context.WithTimeout(withAttempt(ctx, rec), d.cfg.Timeout)
	_, _ = m.UnlockContext(cctx)
	cancel()
	elapsed := time.Since(t1)
	outs, n := rec.close()
	return lock.OpResult{OK: n > 0, Count: n, Elapsed: elapsed, PerMaster: outs}
}

// Extend resets the TTL through redsync's ExtendContext, each master bounded
// by the per-master timeout. As with the engine, a lock whose validity has
// run out is not extended, and the extension counts only if it ended within
// the old validity.
func (d *Driver) Extend(ctx context.Context, l *lock.Lock, ttl time.Duration) lock.OpResult {
	n := len(d.addrs)
	t1 := time.Now()
	if !t1.Before(l.ValidUntil) {
		return lock.OpResult{PerMaster: make([]engine.Outcome, n)}
	}
	rec := newAttempt(opEval, n, false, nil)
	m := d.mutexFor(l, ttl)
	cctx, cancel := context.WithTimeout(withAttempt(ctx, rec), d.cfg.Timeout)
	extended, _ := m.ExtendContext(cctx)
	cancel()
	now := time.Now()
	outs, ok := rec.close()
	res := lock.OpResult{Count: ok, Elapsed: now.Sub(t1), PerMaster: outs}
	if extended && now.Before(l.ValidUntil) {
		res.OK = true
		res.Validity = m.Until().Sub(now)
		l.Start, l.ValidUntil, l.Handle = t1, m.Until(), m
	}
	return res
}
