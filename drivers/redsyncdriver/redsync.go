// Package redsyncdriver runs the same workload through go-redsync/redsync v4
// on go-redis v9, so users can compare the library they run today with
// lockbench's engine under the same load, in the same report.
package redsyncdriver

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredislib "github.com/redis/go-redis/v9"

	"lockbench/engine"
)

// Driver adapts redsync to the runner's Locker interface.
type Driver struct {
	cfg     engine.Config
	rs      *redsync.Redsync
	clients []*goredislib.Client
	addrs   []string
	opts    []redsync.Option
	tokens  *engine.TokenSource
}

// New connects one go-redis client per master and checks each with PING.
// redsync always acquires on all masters at once, so only mode multiplexed
// is accepted; wait=quorum maps to redsync's WithFailFast.
func New(ctx context.Context, cfg engine.Config) (*Driver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Mode != engine.Multiplexed {
		return nil, fmt.Errorf("mode: %q is not available with driver redsync; redsync acquires on all masters at once (multiplexed)", cfg.Mode)
	}
	d := &Driver{cfg: cfg, tokens: engine.NewTokenSource()}
	var pools []redsyncredis.Pool
	for _, m := range cfg.Masters {
		_, display, err := engine.ParseMaster(m)
		if err != nil {
			d.Close()
			return nil, err
		}
		url := m
		if !strings.Contains(url, "://") {
			url = "redis://" + url
		}
		opt, err := goredislib.ParseURL(url)
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("masters: %q: %s", engine.RedactURL(m), engine.RedactIn(err.Error(), m))
		}
		if opt.TLSConfig != nil && !cfg.TLS.Empty() {
			if opt.TLSConfig, err = cfg.TLS.Config(opt.TLSConfig.ServerName); err != nil {
				d.Close()
				return nil, err
			}
		}
		// Without this go-redis ignores context deadlines on the socket, and
		// redsync's per-master timeout would not bound anything.
		opt.ContextTimeoutEnabled = true
		opt.MaxRetries = -1
		c := goredislib.NewClient(opt)
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = c.Ping(pctx).Err()
		cancel()
		if err != nil {
			c.Close()
			d.Close()
			return nil, fmt.Errorf("master %s: %w", display, err)
		}
		d.clients = append(d.clients, c)
		d.addrs = append(d.addrs, display)
		pools = append(pools, goredis.NewPool(c))
	}
	d.rs = redsync.New(pools...)
	d.opts = []redsync.Option{
		redsync.WithExpiry(cfg.TTL),
		redsync.WithTries(cfg.Retries + 1),
		redsync.WithDriftFactor(cfg.DriftFactor),
		// redsync's per-master timeout is expiry × factor.
		redsync.WithTimeoutFactor(float64(cfg.Timeout) / float64(cfg.TTL)),
		redsync.WithFailFast(cfg.Wait == engine.WaitQuorum),
		// Our own token format, so the cleanup after a run recognises them.
		redsync.WithGenValueFunc(func() (string, error) { return d.tokens.Next(), nil }),
		redsync.WithRetryDelayFunc(func(int) time.Duration {
			span := cfg.RetryMax - cfg.RetryMin
			if span <= 0 {
				return cfg.RetryMin
			}
			return cfg.RetryMin + rand.N(span+1)
		}),
	}
	return d, nil
}

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

// LateOutcomes: redsync does not report replies after its decision.
func (d *Driver) LateOutcomes() [][engine.NumOutcomes]int64 {
	return make([][engine.NumOutcomes]int64, len(d.addrs))
}

// Acquire locks key with redsync. redsync reveals per-master outcomes only
// for failures (taken nodes, node errors); on success they stay pending.
func (d *Driver) Acquire(ctx context.Context, key string) (*engine.Lock, engine.Result) {
	m := d.rs.NewMutex(key, d.opts...)
	t0 := time.Now()
	err := m.LockContext(ctx)
	res := engine.Result{Elapsed: time.Since(t0), Attempts: 1, PerMaster: make([]engine.Outcome, len(d.addrs))}
	if err == nil {
		res.Acquired = true
		res.Validity = time.Until(m.Until())
		return &engine.Lock{Key: key, Token: m.Value(), Start: t0, ValidUntil: m.Until(), Handle: m}, res
	}
	if ctx.Err() != nil {
		res.Err = ctx.Err()
	}
	var taken *redsync.ErrTaken
	if errors.As(err, &taken) {
		for _, n := range taken.Nodes {
			res.PerMaster[n] = engine.Taken
		}
	}
	for _, e := range unwrapAll(err) {
		var nodeTaken *redsync.ErrNodeTaken
		var re *redsync.RedisError
		switch {
		case errors.As(e, &nodeTaken) && nodeTaken.Node < len(res.PerMaster):
			res.PerMaster[nodeTaken.Node] = engine.Taken
		case errors.As(e, &re) && re.Node < len(res.PerMaster):
			if errors.Is(re.Err, context.DeadlineExceeded) {
				res.PerMaster[re.Node] = engine.Timeout
			} else {
				res.PerMaster[re.Node] = engine.Error
			}
		}
	}
	return nil, res
}

// Release unlocks with redsync's own compare-and-delete.
func (d *Driver) Release(ctx context.Context, l *engine.Lock) engine.OpResult {
	m, ok := l.Handle.(*redsync.Mutex)
	if !ok {
		m = d.rs.NewMutex(l.Key, append(d.opts, redsync.WithValue(l.Token))...)
	}
	t0 := time.Now()
	released, _ := m.UnlockContext(ctx)
	return engine.OpResult{OK: released, Elapsed: time.Since(t0), PerMaster: make([]engine.Outcome, len(d.addrs))}
}

func unwrapAll(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, unwrapAll(e)...)
		}
		return out
	}
	return []error{err}
}
