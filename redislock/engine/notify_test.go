package engine_test

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"lockbench/internal/bound"
	"lockbench/internal/redistest"
	"lockbench/redislock/engine"
	"lockbench/redislock/localmasters"
)

// notifyEngine is an engine of strategy notify with the given timeout.
func notifyEngine(t *testing.T, set *localmasters.Set, timeout time.Duration) *engine.Engine {
	return newEngine(t, set, func(c *engine.Config) {
		c.Strategy, c.NotifyTimeout, c.WaitTime = engine.StrategyNotify, timeout, 5*time.Second
	})
}

type acquired struct {
	lock *engine.Lock
	res  engine.Result
	at   time.Time
}

// holdAndWait takes key with holder, then starts waiter's Acquire of it.
func holdAndWait(t *testing.T, holder, waiter *engine.Engine, key string) (*engine.Lock, <-chan acquired) {
	t.Helper()
	lock, res := holder.Acquire(context.Background(), key)
	if lock == nil {
		t.Fatalf("holder: %+v", res)
	}
	got := make(chan acquired, 1)
	go func() {
		l, r := waiter.Acquire(context.Background(), key)
		got <- acquired{l, r, time.Now()}
	}()
	return lock, got
}

func receive(t *testing.T, got <-chan acquired) acquired {
	t.Helper()
	select {
	case a := <-got:
		if a.lock == nil {
			t.Fatalf("waiter did not acquire: %+v", a.res)
		}
		return a
	case <-time.After(10 * time.Second):
		t.Fatal("waiter still waiting after 10s")
	}
	return acquired{}
}

// A release wakes a notify waiter within milliseconds, by message, long
// before its 2 s timeout. Fails if the release does not publish (the
// waiter then wakes at 2 s, by timeout) or the waiter is not subscribed.
func TestNotifyWakesWaiterOnRelease(t *testing.T) {
	for _, n := range []int{1, 3} {
		t.Run(strconv.Itoa(n)+" masters", func(t *testing.T) {
			set := redistest.StartMasters(t, n, localmasters.PersistNone)
			holder, waiter := notifyEngine(t, set, 2*time.Second), notifyEngine(t, set, 2*time.Second)
			attempts := wakeAfterRelease(t, holder, waiter, "notify:wake", 2*time.Second)
			c := waiter.NotifyCounts()
			// One master: one message, one wake-up, the third attempt wins.
			// Several: the first master's message may beat the release to
			// the others, whose SET then loses; the next message wakes it again.
			exact := n == 1 && (c.WokenByMessage != 1 || attempts != 3)
			if exact || c.WokenByMessage < 1 || c.WokenByTimeout != 0 || c.Subscribes != int64(n) {
				t.Errorf("waiter counts %+v after %d attempts: want 1 wake-up by message (3 attempts) with 1 master, 0 by timeout, %d SUBSCRIBEs", c, attempts, n)
			}
			if p := holder.NotifyCounts().Publishes; p != int64(n) {
				t.Errorf("holder's release published %d times, want %d (one per master)", p, n)
			}
			waitFor(t, "an UNSUBSCRIBE per master once the waiter left", func() bool { return waiter.NotifyCounts().Unsubscribes == int64(n) })
		})
	}
}

// wakeAfterRelease releases once the waiter waits for a message and
// wants it woken by that release's message: one more wake-up by message,
// none by its timeout, and the lock within the timeout of the release (a
// loose bound: the counts tell a message from the timeout, the time only
// that nothing hung after it). It returns its attempts.
func wakeAfterRelease(t *testing.T, holder, waiter *engine.Engine, key string, timeout time.Duration) int {
	t.Helper()
	lock, got := holdAndWait(t, holder, waiter, key)
	waitFor(t, "the waiter waiting for a message", func() bool { return waiter.NotifyCounts().Waiting == 1 })
	before := waiter.NotifyCounts()
	released := time.Now()
	holder.Release(context.Background(), lock)
	a := receive(t, got)
	wake, after := a.at.Sub(released), waiter.NotifyCounts()
	t.Logf("woken %v after the release (attempts %d)", wake, a.res.Attempts)
	if after.WokenByMessage == before.WokenByMessage || after.WokenByTimeout != before.WokenByTimeout {
		t.Errorf("counts %+v → %+v: want the wait ended by the release's message, not by the timeout", before, after)
	}
	if !bound.Max(t, "notify.wake_after_release", wake, timeout) {
		t.Errorf("waiter had the lock %v after the release; want within its timeout %v", wake, timeout)
	}
	waiter.Release(context.Background(), a.lock)
	return a.res.Attempts
}

// A notification lost with the pub/sub connection costs the waiter its
// timeout, counted as a wake-up by timeout; the engine reconnects, and the
// next wait is woken by message again.
func TestNotifyLostMessageCostsTheTimeout(t *testing.T) {
	set := redistest.StartMasters(t, 3, localmasters.PersistNone)
	const timeout = 300 * time.Millisecond
	holder, waiter := notifyEngine(t, set, timeout), notifyEngine(t, set, timeout)
	lock, got := holdAndWait(t, holder, waiter, "notify:lost")
	waitFor(t, "the waiter waiting for a message", func() bool { return waiter.NotifyCounts().Waiting == 1 })
	for _, a := range set.Addrs() {
		if n, err := redistest.Do(a, "CLIENT", "KILL", "TYPE", "pubsub"); err != nil || n != "1" {
			t.Fatalf("CLIENT KILL TYPE pubsub on %s: %q, %v; want the waiter's one connection", a, n, err)
		}
	}
	holder.Release(context.Background(), lock)
	a := receive(t, got)
	// Its timeout at least (load only lengthens it); the counts below say
	// it ended by the timeout, once, so no upper bound on time is needed.
	if !bound.Min(t, "notify.lost_message_acquire", a.res.Elapsed, timeout) {
		t.Errorf("acquired %v into the acquire; want its timeout, %v, at least", a.res.Elapsed, timeout)
	}
	if c := waiter.NotifyCounts(); c.WokenByTimeout != 1 || c.WokenByMessage != 0 {
		t.Errorf("counts %+v: want 1 wake-up by timeout, 0 by message", c)
	}
	waiter.Release(context.Background(), a.lock)
	waitFor(t, "a pub/sub reconnection per master", func() bool { return waiter.NotifyCounts().Reconnects == 3 })
	wakeAfterRelease(t, holder, waiter, "notify:lost:again", timeout)
	if c := waiter.NotifyCounts(); c.WokenByMessage < 1 || c.WokenByTimeout != 1 {
		t.Errorf("after reconnecting: %+v, want the second wait woken by message", c)
	}
}

// With the key held elsewhere on 2 of 3 masters, every attempt takes the
// third and loses: a split vote, after which no release may come. The
// waiter retries after the retry delay (50-250 ms): it neither spins
// (hundreds of attempts a second, had its clean-up woken it) nor sleeps
// for a message, and its clean-ups announce nothing.
func TestNotifySplitVoteRetriesAfterTheDelay(t *testing.T) {
	set := redistest.StartMasters(t, 3, localmasters.PersistNone)
	waiter := newEngine(t, set, func(c *engine.Config) {
		c.Strategy, c.NotifyTimeout, c.WaitTime = engine.StrategyNotify, 200*time.Millisecond, time.Second
	})
	for _, a := range set.Addrs()[:2] {
		if _, err := redistest.Do(a, "SET", "notify:split", "someone-else", "PX", "5000"); err != nil {
			t.Fatal(err)
		}
	}
	lock, res := waiter.Acquire(context.Background(), "notify:split")
	c := waiter.NotifyCounts()
	// Nominal, said: 4 attempts leave room for three delays at their
	// 250 ms maximum and 60 ms an attempt (8-10 measured idle); 25 is
	// above what 50 ms delays allow, and load only lowers the count.
	few, many := !bound.Min(t, "notify.split_vote_attempts", res.Attempts, 4), !bound.Max(t, "notify.split_vote_attempts", res.Attempts, 25)
	if lock != nil || few || many || c.WokenByMessage+c.WokenByTimeout != 0 || c.Publishes != 0 {
		t.Errorf("%d attempts in %v, counts %+v; want ≈ 1s/150ms attempts, no wait for a message, no PUBLISH", res.Attempts, res.Elapsed, c)
	}
}

// A waiter subscribed across a reconnection is subscribed again on the
// new connection, and woken by a release after it.
func TestNotifyResubscribesAfterReconnect(t *testing.T) {
	set := redistest.StartMasters(t, 1, localmasters.PersistNone)
	holder, waiter := notifyEngine(t, set, 3*time.Second), notifyEngine(t, set, 3*time.Second)
	lock, got := holdAndWait(t, holder, waiter, "notify:resub")
	waitFor(t, "the waiter waiting for a message", func() bool { return waiter.NotifyCounts().Waiting == 1 })
	if n, err := redistest.Do(set.Addrs()[0], "CLIENT", "KILL", "TYPE", "pubsub"); err != nil || n != "1" {
		t.Fatalf("CLIENT KILL TYPE pubsub: %q, %v", n, err)
	}
	waitFor(t, "the waiter's channel subscribed again", func() bool {
		list, _ := redistest.Do(set.Addrs()[0], "CLIENT", "LIST", "TYPE", "pubsub")
		return waiter.NotifyCounts().Reconnects == 1 && strings.Contains(list, " sub=1 ")
	})
	released := time.Now()
	holder.Release(context.Background(), lock)
	a := receive(t, got)
	// By message (the counts); the 3 s timeout bounds the time loosely,
	// the counts tell a message from the timeout.
	if d := a.at.Sub(released); !bound.Max(t, "notify.resubscribed_wake", d, 3*time.Second) || waiter.NotifyCounts().WokenByMessage != 1 {
		t.Errorf("woken %v after the release, counts %+v; want by message, within the 3 s timeout", d, waiter.NotifyCounts())
	}
}

// Messages cost no goroutine: 200 published while the waiter is busy
// leave the goroutine count where it was (a hook that handed each message
// to a goroutine blocking on the waiter would pile them up). The hook
// only does non-blocking sends to a one-slot channel per waiter.
func TestNotifyMessagesCostNoGoroutine(t *testing.T) {
	set := redistest.StartMasters(t, 1, localmasters.PersistNone)
	holder, waiter := notifyEngine(t, set, 5*time.Second), notifyEngine(t, set, 5*time.Second)
	pub, err := engine.NewSingleClient(rueidis.ClientOption{InitAddress: set.Addrs()})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	key := "notify:many"
	lock, got := holdAndWait(t, holder, waiter, key)
	waitFor(t, "the waiter waiting for a message", func() bool { return waiter.NotifyCounts().Waiting == 1 })
	base := runtime.NumGoroutine()
	cmds := make(rueidis.Commands, 200)
	for i := range cmds {
		cmds[i] = pub.B().Publish().Channel(engine.NotifyChannel(key)).Message(strconv.Itoa(i)).Build()
	}
	for _, r := range pub.DoMulti(context.Background(), cmds...) {
		if err := r.Error(); err != nil {
			t.Fatal(err)
		}
	}
	peak := base
	for deadline := time.Now().Add(5 * time.Second); waiter.NotifyCounts().Messages < 200 && time.Now().Before(deadline); {
		peak = max(peak, runtime.NumGoroutine())
		time.Sleep(100 * time.Microsecond)
	}
	time.Sleep(20 * time.Millisecond) // the waiter's last retries
	peak = max(peak, runtime.NumGoroutine())
	c := waiter.NotifyCounts()
	t.Logf("goroutines %d → peak %d; %+v", base, peak, c)
	if c.Messages != 200 || c.WokenByMessage == 0 || peak > base+5 {
		t.Errorf("200 messages: goroutines %d → peak %d, counts %+v; want all received, a wake-up, no goroutine per message", base, peak, c)
	}
	holder.Release(context.Background(), lock)
	receive(t, got)
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 5s", what)
		}
	}
}

// A release wakes one of an engine's waiters, not all (Redisson's
// semaphore): four waiters on one key, one release, one wake-up by message
// and one lock; the others sleep on. Fails with a wake-all herd (4).
func TestNotifyReleaseWakesOneWaiter(t *testing.T) {
	set := redistest.StartMasters(t, 3, localmasters.PersistNone)
	holder, waiter := notifyEngine(t, set, 3*time.Second), notifyEngine(t, set, 3*time.Second)
	lock, res := holder.Acquire(context.Background(), "notify:one")
	if lock == nil {
		t.Fatalf("holder: %+v", res)
	}
	got := make(chan acquired, 4)
	for range 4 {
		go func() {
			l, r := waiter.Acquire(context.Background(), "notify:one")
			got <- acquired{l, r, time.Now()}
		}()
	}
	waitFor(t, "4 waiters subscribed and waiting", func() bool {
		c := waiter.NotifyCounts()
		return c.Subscribes == 3 && c.Waiting == 4
	})
	holder.Release(context.Background(), lock)
	first := receive(t, got)
	time.Sleep(300 * time.Millisecond)
	// One waiter, woken by up to one message per master (its retry may
	// reach a master before the release did); a herd wakes all four.
	if c := waiter.NotifyCounts(); c.WokenByMessage < 1 || c.WokenByMessage > 3 || c.WokenByTimeout != 0 || len(got) != 0 {
		t.Fatalf("after one release: %+v, %d more locks; want 1-3 wake-ups by message (one waiter) and none by timeout", c, len(got))
	}
	waiter.Release(context.Background(), first.lock)
	for range 3 { // the others, each woken by the release before it
		waiter.Release(context.Background(), receive(t, got).lock)
	}
}

// Waiters of two engines, the key held on a majority with one master free:
// each attempt's SET lands on the free master and its clean-up frees it
// again. A clean-up must not wake the other engine's waiter (they would
// wake each other in turn, spinning): an attempt that lost so retries
// after the retry delay. Fails with thousands of attempts when clean-ups
// announce themselves.
func TestNotifyCleanupsDoNotPingPong(t *testing.T) {
	set := redistest.StartMasters(t, 3, localmasters.PersistNone)
	holder := notifyEngine(t, set, 2*time.Second)
	lock, res := holder.Acquire(context.Background(), "notify:pingpong")
	if lock == nil {
		t.Fatalf("holder: %+v", res)
	}
	if _, err := redistest.Do(set.Addrs()[2], "DEL", "notify:pingpong"); err != nil {
		t.Fatal(err)
	}
	got := make(chan acquired, 2)
	// The waiters' acquires end with the test: the second one is still
	// waiting when the first wins, and an engine closed under its acquire
	// (the cleanup) is a data race (2 of 10 runs beside a load).
	ctx, cancel := context.WithCancel(context.Background())
	var waiting sync.WaitGroup
	defer waiting.Wait()
	defer cancel()
	for range 2 {
		w := notifyEngine(t, set, 2*time.Second)
		waiting.Add(1)
		go func() {
			defer waiting.Done()
			l, r := w.Acquire(ctx, "notify:pingpong")
			got <- acquired{l, r, time.Now()}
		}()
	}
	time.Sleep(1200 * time.Millisecond)
	holder.Release(context.Background(), lock)
	first := receive(t, got)
	if first.res.Attempts > 40 {
		t.Fatalf("the first waiter made %d attempts in 1.2 s: waiters woke each other in turn", first.res.Attempts)
	}
}
