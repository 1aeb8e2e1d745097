package lock

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"lockbench/internal/bound"
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
	// 1 s: a wait that ignored its context would take the hour's delay.
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
		if d := p.Delay(1); d < p.Min || d > p.Max {
			t.Fatalf("delay %v outside [%v, %v]", d, p.Min, p.Max)
		}
	}
}

// Each wait strategy's delays: retry within [min, max], backoff within
// its doubling ceiling up to the cap (full jitter), spin none.
func TestWaitStrategyDelays(t *testing.T) {
	backoff := RetryPolicy{Strategy: StrategyBackoff, Base: time.Millisecond, Cap: 8 * time.Millisecond}
	for n := 1; n <= 70; n++ {
		ceil := min(8*time.Millisecond, time.Millisecond<<min(n-1, 10))
		if d := backoff.Delay(n); d < 0 || d > ceil {
			t.Fatalf("backoff attempt %d: %v, want within [0, %v]", n, d, ceil)
		}
	}
	var top time.Duration
	for range 200 {
		top = max(top, backoff.Delay(40))
	}
	if top < 4*time.Millisecond {
		t.Errorf("backoff after 40 attempts never came near its cap: at most %v of 8ms", top)
	}
	if d := (RetryPolicy{Strategy: StrategySpin, Min: time.Second, Max: time.Second}).Delay(3); d != 0 {
		t.Errorf("spin waited %v", d)
	}
}

// With a wait time a caller tries until it has passed, whatever the
// retries; never sleeping past it.
func TestWaitTimeBoundsTheAttempts(t *testing.T) {
	p := RetryPolicy{Strategy: StrategyRetry, Min: 20 * time.Millisecond, Max: 20 * time.Millisecond, WaitTime: 110 * time.Millisecond}
	start := time.Now()
	_, res := p.Acquire(context.Background(), func(context.Context) (*Lock, Result) { return nil, Result{} })
	took := time.Since(start)
	// That it tried until the wait time passed is took's lower bound; the
	// attempts at least 2 (it retried), not 5: load makes each 20 ms delay
	// late and fewer fit in 110 ms (7 idle); at most 8, which load only
	// lowers (a caller that spun would make hundreds). took's 400 ms is an
	// upper bound well above 110 ms plus one late delay.
	attempts := bound.Min(t, "retry.wait_time_attempts", res.Attempts, 2) && bound.Max(t, "retry.wait_time_attempts", res.Attempts, 8)
	if !attempts || !bound.Min(t, "retry.wait_time_took", took, 110*time.Millisecond) || !bound.Max(t, "retry.wait_time_took", took, 400*time.Millisecond) {
		t.Errorf("wait 110ms, 20ms apart: %d attempts in %v", res.Attempts, took)
	}
}

// Bad terms name the setting.
func TestWaitStrategyValidation(t *testing.T) {
	for want, p := range map[string]RetryPolicy{
		"wait-strategy: \"notify-me\"": {Strategy: "notify-me"},
		"backoff-cap":                  {Strategy: StrategyBackoff, Base: 10 * time.Millisecond, Cap: time.Millisecond},
		"backoff-base":                 {Strategy: StrategyBackoff, Cap: time.Millisecond},
		"wait-time":                    {WaitTime: -time.Second},
	} {
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want an error naming %s", p, err, want)
		}
	}
	if err := (RetryPolicy{Strategy: StrategySpin}).Validate(); err != nil {
		t.Errorf("spin refused: %v", err)
	}
}

// fakeSub records a notify waiter's calls.
type fakeSub struct {
	log    *[]string
	wakeBy bool
}

func (f fakeSub) Wait(_ context.Context, d time.Duration) bool {
	*f.log = append(*f.log, "wait "+d.String())
	return f.wakeBy
}
func (f fakeSub) Close() { *f.log = append(*f.log, "close") }

// Notify subscribes after the first failure and tries again before
// waiting (a release in between is not missed), waits at most
// NotifyTimeout and never past the wait time, and unsubscribes at the end.
func TestNotifyPolicySubscribesBeforeRetrying(t *testing.T) {
	var log []string
	p := RetryPolicy{Strategy: StrategyNotify, NotifyTimeout: time.Hour, WaitTime: time.Hour,
		Subscribe: func() Subscription { log = append(log, "subscribe"); return fakeSub{log: &log, wakeBy: true} }}
	n := 0
	lock, res := p.Acquire(context.Background(), func(context.Context) (*Lock, Result) {
		if n++; n == 4 {
			return &Lock{}, Result{}
		}
		log = append(log, "try")
		return nil, Result{}
	})
	shape := slices.Clone(log)
	for i, w := range shape {
		if d, err := time.ParseDuration(strings.TrimPrefix(w, "wait ")); err == nil && d > 59*time.Minute && d <= time.Hour {
			shape[i] = "wait ≤1h" // the wait time left, below NotifyTimeout
		}
	}
	want := "try subscribe try wait ≤1h try wait ≤1h close"
	if got := strings.Join(shape, " "); lock == nil || res.Attempts != 4 || got != want {
		t.Fatalf("calls %q (attempts %d), want %q", log, res.Attempts, want)
	}
	// The wait is cut to the wait time left; a spent wait time ends it.
	log = nil
	p.WaitTime = 30 * time.Millisecond
	_, res = p.Acquire(context.Background(), func(context.Context) (*Lock, Result) { time.Sleep(10 * time.Millisecond); return nil, Result{} })
	if res.Elapsed < p.WaitTime || log[len(log)-1] != "close" {
		t.Errorf("wait time 30ms: %v, calls %q", res.Elapsed, log)
	}
}
