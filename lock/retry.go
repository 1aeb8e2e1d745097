package lock

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// The wait strategies: how a caller waits between attempts.
const (
	StrategyRetry   = "retry"
	StrategyBackoff = "backoff"
	StrategySpin    = "spin"
	StrategyNotify  = "notify"
)

// WaitStrategies lists them.
var WaitStrategies = []string{StrategyRetry, StrategyBackoff, StrategySpin, StrategyNotify}

// splitDelay bounds a notify waiter's pause after its first lost split vote.
const splitDelay = 2 * time.Millisecond

// Subscription is one waiter's hold on a key's release messages (strategy
// notify), from its first failed attempt to the end of its acquire.
type Subscription interface {
	// Wait blocks until a release of the key is announced (true), the
	// timeout passes or ctx ends (false).
	Wait(ctx context.Context, timeout time.Duration) (byMessage bool)
	Close()
}

// RetryPolicy is the acquire loop's terms, every lock client's alike (the
// Redlock engine's, the redsync driver's, a service's TryLock loop, a
// fault cell's client): after a failed attempt, another after a delay of
// the strategy's, up to Retries more, or (WaitTime set) until WaitTime
// has passed since the first.
type RetryPolicy struct {
	Retries  int
	Min, Max time.Duration
	// Strategy: retry (a random delay in [Min, Max]; "" too), backoff
	// (full jitter: random in [0, min(Cap, Base·2^(n−1))] before attempt
	// n+1), spin (no delay) or notify (wait for a release message on
	// Subscribe's subscription, at most NotifyTimeout).
	Strategy  string
	Base, Cap time.Duration
	WaitTime  time.Duration
	// NotifyTimeout bounds one notify wait; Subscribe, set by the
	// Redlock engine's Acquire, subscribes to the key's releases (nil: notify
	// waits NotifyTimeout, a delay like the others).
	NotifyTimeout time.Duration
	Subscribe     func() Subscription `json:"-"`
	// Rand draws the delays (nil: the shared source); a worker's own
	// seeded source makes them reproducible with the run's seed.
	Rand *rand.Rand `json:"-"`
}

// CheckTerms checks a lock client's terms, any service's: its lease
// (ttl), its per-server timeout (below the ttl), its drift factor and its
// retry policy. The error names the first bad setting and what is
// accepted.
func CheckTerms(ttl, timeout time.Duration, driftFactor float64, p RetryPolicy) error {
	switch {
	case ttl < time.Millisecond:
		return fmt.Errorf("ttl: %v is not accepted; use at least 1ms", ttl)
	case timeout <= 0:
		return fmt.Errorf("timeout: %v is not accepted; use a positive duration below the ttl", timeout)
	case timeout >= ttl:
		return fmt.Errorf("timeout: %v is not below ttl %v; the per-master timeout must be much smaller than the ttl", timeout, ttl)
	case driftFactor < 0 || driftFactor >= 1 || math.IsNaN(driftFactor):
		return fmt.Errorf("drift-factor: %v is not accepted; use 0 <= drift-factor < 1 (reference 0.01)", driftFactor)
	case p.Retries < 0:
		return fmt.Errorf("retries: %d is not accepted; use 0 or more", p.Retries)
	case p.Min < 0 || p.Max < p.Min:
		return fmt.Errorf("retry-delay: %v..%v is not accepted; use 0 <= min <= max", p.Min, p.Max)
	}
	return p.Validate()
}

// Validate names the first bad term and what is accepted.
func (p RetryPolicy) Validate() error {
	switch {
	case p.Strategy != "" && !slices.Contains(WaitStrategies, p.Strategy):
		return fmt.Errorf("wait-strategy: %q is not accepted; use %s", p.Strategy, strings.Join(WaitStrategies, ", "))
	case p.Strategy == StrategyBackoff && p.Base <= 0:
		return fmt.Errorf("backoff-base: %v is not accepted; use a positive duration such as 1ms", p.Base)
	case p.Strategy == StrategyBackoff && p.Cap < p.Base:
		return fmt.Errorf("backoff-cap: %v is not accepted; use at least backoff-base (%v)", p.Cap, p.Base)
	case p.Strategy == StrategyNotify && p.NotifyTimeout <= 0:
		return fmt.Errorf("notify-timeout: %v is not accepted; use a positive duration such as 10s (the ttl by default)", p.NotifyTimeout)
	case p.WaitTime < 0:
		return fmt.Errorf("wait-time: %v is not accepted; use a positive duration such as 2s (0: retries decide)", p.WaitTime)
	}
	return nil
}

// Delay is the pause before attempt n+1 (n ≥ 1 attempts made).
func (p RetryPolicy) Delay(n int) time.Duration {
	switch p.Strategy {
	case StrategySpin:
		return 0
	case StrategyNotify:
		return p.NotifyTimeout
	case StrategyBackoff:
		ceil := p.Cap
		if n < 63 && p.Base<<(n-1) > 0 && p.Base<<(n-1) < p.Cap {
			ceil = p.Base << (n - 1)
		}
		return p.random(0, ceil)
	}
	return p.random(p.Min, p.Max)
}

// random is a duration in [lo, hi].
func (p RetryPolicy) random(lo, hi time.Duration) time.Duration {
	span := hi - lo
	switch {
	case span <= 0:
		return lo
	case p.Rand != nil:
		return lo + time.Duration(p.Rand.Int64N(int64(span)+1))
	}
	return lo + rand.N(span+1)
}

// Wait sleeps the delay after the first attempt; false, at once, when ctx
// ends first.
func (p RetryPolicy) Wait(ctx context.Context) bool { return p.wait(ctx, p.Delay(1)) }

func (p RetryPolicy) wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Acquire runs try until it returns a lock, no retry is left or ctx ends,
// with a pause between attempts. Attempts, Elapsed (from the first
// attempt's start) and LastStart are set on the result; Err when ctx ended
// in a pause.
func (p RetryPolicy) Acquire(ctx context.Context, try func(context.Context) (*Lock, Result)) (*Lock, Result) {
	start := time.Now()
	var sub Subscription
	defer func() {
		if sub != nil {
			sub.Close()
		}
	}()
	sent, splits := 0, 0
	for attempt := 1; ; attempt++ {
		tried := start
		if attempt > 1 {
			tried = time.Now()
		}
		lock, res := try(ctx)
		sent += res.Sent
		res.Attempts, res.Sent = attempt, sent
		res.Elapsed, res.LastStart = time.Since(start), tried.Sub(start)
		if lock != nil || p.done(attempt, res.Elapsed) || ctx.Err() != nil || res.Err != nil {
			return lock, res
		}
		if splits = splits + 1; res.Successes == 0 {
			splits = 0
		}
		if !p.pause(ctx, attempt, res, splits, &sub) {
			res.Err = ctx.Err()
			return nil, res
		}
	}
}

// pause waits before attempt n+1 after res, elapsed into the wait; false
// when ctx ended. Strategy notify subscribes after the first failure and
// tries again at once, so a release between that failure and the
// subscription is not missed (that attempt counts as one of the Retries);
// later pauses wait for a release message or NotifyTimeout. An attempt
// whose SET took some masters may have lost a split vote, after which
// nobody holds the key and no release is announced: it tries again after
// a random delay, up to splitDelay the first time (a split is over within
// a round trip), the retry delay after that (the key held elsewhere on a
// majority: a release will be announced, but not to this waiter's SETs
// that keep landing on a free master).
func (p RetryPolicy) pause(ctx context.Context, n int, res Result, splits int, sub *Subscription) bool {
	d := p.Delay(n)
	switch {
	case p.Strategy != StrategyNotify || splits == 0:
	case splits == 1:
		d = p.random(0, splitDelay)
	default:
		d = p.random(p.Min, p.Max)
	}
	if p.WaitTime > 0 {
		d = min(d, p.WaitTime-res.Elapsed) // never wait past the wait time
	}
	switch {
	case p.Strategy != StrategyNotify || p.Subscribe == nil || res.Successes > 0:
		return p.wait(ctx, d)
	case *sub == nil:
		*sub = p.Subscribe()
	default:
		(*sub).Wait(ctx, d)
	}
	return ctx.Err() == nil
}

// done: no attempt is left after attempt n, elapsed into the wait.
func (p RetryPolicy) done(n int, elapsed time.Duration) bool {
	if p.WaitTime > 0 {
		return elapsed >= p.WaitTime
	}
	return n > p.Retries
}
