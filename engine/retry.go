package engine

import (
	"context"
	"math/rand/v2"
	"time"
)

// RetryPolicy is the acquire loop's terms, the engine's and the redsync
// driver's alike: up to Retries more attempts after a failed one, each after
// a random delay in [Min, Max].
type RetryPolicy struct {
	Retries  int
	Min, Max time.Duration
	// Rand draws the delays (nil: the shared source); a worker's own
	// seeded source makes them reproducible with the run's seed.
	Rand *rand.Rand
}

// Retry is the policy of c's Retries, RetryMin and RetryMax.
func (c Config) Retry() RetryPolicy {
	return RetryPolicy{Retries: c.Retries, Min: c.RetryMin, Max: c.RetryMax}
}

// Delay is one random pause in [Min, Max].
func (p RetryPolicy) Delay() time.Duration {
	d := p.Min
	if span := p.Max - p.Min; span > 0 && p.Rand != nil {
		d += time.Duration(p.Rand.Int64N(int64(span) + 1))
	} else if span > 0 {
		d += rand.N(span + 1)
	}
	return d
}

// Wait sleeps one Delay; false, at once, when ctx ends first.
func (p RetryPolicy) Wait(ctx context.Context) bool {
	t := time.NewTimer(p.Delay())
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Acquire runs try until it returns a lock, no retry is left or ctx ends,
// with a Wait between attempts. Attempts and Elapsed (from the first
// attempt's start) are set on the result; Err when ctx ended in a Wait.
func (p RetryPolicy) Acquire(ctx context.Context, try func(context.Context) (*Lock, Result)) (*Lock, Result) {
	start := time.Now()
	for attempt := 1; ; attempt++ {
		lock, res := try(ctx)
		res.Attempts = attempt
		res.Elapsed = time.Since(start)
		if lock != nil || attempt > p.Retries || ctx.Err() != nil {
			return lock, res
		}
		if !p.Wait(ctx) {
			res.Err = ctx.Err()
			return nil, res
		}
	}
}
