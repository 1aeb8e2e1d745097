package engine

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A context that ends ends the retry delay at once, not after it.
func TestRetryWaitEndsWithTheContext(t *testing.T) {
	p := RetryPolicy{Retries: 3, Min: time.Hour, Max: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if p.Wait(ctx) {
		t.Fatal("Wait with a cancelled context waited")
	}
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	if p.Wait(ctx) || time.Since(start) > time.Second {
		t.Fatalf("Wait went on %v past its context's end", time.Since(start))
	}
}

func TestRetryAcquireStopsInTheDelay(t *testing.T) {
	p := RetryPolicy{Retries: 3, Min: time.Hour, Max: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	calls := 0
	lock, res := p.Acquire(ctx, func(context.Context) (*Lock, Result) {
		calls++
		return nil, Result{Successes: 1}
	})
	if lock != nil || calls != 1 || res.Attempts != 1 || res.Successes != 1 || !errors.Is(res.Err, context.Canceled) {
		t.Fatalf("lock %v after %d calls: %+v; want the first attempt's result with Err canceled", lock, calls, res)
	}
}

func TestRetryAcquireRetriesUpToRetries(t *testing.T) {
	p := RetryPolicy{Retries: 2}
	calls := 0
	fail := func(context.Context) (*Lock, Result) { calls++; return nil, Result{} }
	if _, res := p.Acquire(context.Background(), fail); calls != 3 || res.Attempts != 3 || res.Err != nil {
		t.Fatalf("%d calls, %+v; want 3 attempts", calls, res)
	}
	calls = 0
	winSecond := func(context.Context) (*Lock, Result) {
		if calls++; calls == 2 {
			return &Lock{}, Result{Acquired: true}
		}
		return nil, Result{}
	}
	if lock, res := p.Acquire(context.Background(), winSecond); lock == nil || res.Attempts != 2 {
		t.Fatalf("lock %v, %+v; want it on the second attempt", lock, res)
	}
}

func TestRetryDelayWithinBounds(t *testing.T) {
	p := RetryPolicy{Min: time.Millisecond, Max: 3 * time.Millisecond}
	for range 1000 {
		if d := p.Delay(); d < p.Min || d > p.Max {
			t.Fatalf("delay %v outside [%v, %v]", d, p.Min, p.Max)
		}
	}
}
