package engine_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"lockbench/internal/bound"
	"lockbench/internal/redistest"
	"lockbench/redislock/engine"
	"lockbench/redislock/localmasters"
)

// slowDown stops and resumes m every few milliseconds until stop closes,
// so its replies lag behind the others' and wait=quorum decides without it.
func slowDown(t *testing.T, m *localmasters.Master, stop <-chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(4 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				_ = m.Resume()
				return
			case <-tick.C:
				if err := m.Pause(); err != nil {
					t.Error(err)
					return
				}
				time.Sleep(3 * time.Millisecond)
				_ = m.Resume()
			}
		}
	}()
	return &wg
}

// Issue 10.1: with wait=quorum and hold 0 the release follows its SET at
// once; one key's commands must reach a slow master in issue order, or the
// SET lands after its release and the key stays held for the whole TTL.
// Each worker cycles through keys of its own, so any `taken` is false.
func TestReleaseNeverOvertakesItsSet(t *testing.T) {
	set := redistest.StartMasters(t, 5, localmasters.PersistNone)
	e := newEngine(t, set, func(c *engine.Config) {
		// A generous timeout: a release that times out may leave its key
		// for a reason other than order; those are counted apart below.
		c.Wait, c.Timeout, c.Dispatchers = engine.WaitQuorum, time.Second, 8
	})
	stop := make(chan struct{})
	slow := slowDown(t, set.Masters()[4], stop)
	var mu sync.Mutex
	taken, cycles, unreleased := 0, 0, 0
	var wg sync.WaitGroup
	end := time.Now().Add(1500 * time.Millisecond)
	for w := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(end); i++ {
				lock, res := e.Acquire(context.Background(), "order:"+strconv.Itoa(w)+":"+strconv.Itoa(i%8))
				mu.Lock()
				taken += count(res.PerMaster, engine.Taken)
				mu.Unlock()
				if lock != nil {
					rel := e.Release(context.Background(), lock)
					mu.Lock()
					cycles++
					// Only a release that got no answer can leave a key
					// for a reason other than order.
					unreleased += count(rel.PerMaster, engine.Timeout) + count(rel.PerMaster, engine.Error)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	slow.Wait()
	if cycles < 100 {
		t.Fatalf("only %d cycles: the test judged too little", cycles)
	}
	// The slow master's last releases land when they land: wait for the
	// keys to go, for at most 5 s. A SET that overtook its release keeps
	// its key for the whole 10 s TTL, so the wait cannot hide one.
	left := countOrderKeys(t, e, len(set.Masters()))
	for deadline := time.Now().Add(5 * time.Second); left != 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		left = countOrderKeys(t, e, len(set.Masters()))
	}
	t.Logf("%d cycles, %d taken, %d keys left, %d releases a master did not answer", cycles, taken, left, unreleased)
	// A key left where every release was answered can only be a SET that
	// landed after its own release.
	if taken != 0 || (left != 0 && unreleased == 0) {
		t.Fatalf("per-key order broken: %d false `taken` answers, %d released keys still held", taken, left)
	}
}

// countOrderKeys: the keys TestReleaseNeverOvertakesItsSet left on its
// masters, summed.
func countOrderKeys(t *testing.T, e *engine.Engine, masters int) int {
	t.Helper()
	left := 0
	for i := range masters {
		n, err := e.CountKeys(context.Background(), i, "order:")
		if err != nil {
			t.Fatal(err)
		}
		left += n
	}
	return left
}

// Issue 10.2: a SET that answers OK after its acquire was decided as failed
// is released on that master and counted.
func TestLateOKOfFailedAcquireIsReleased(t *testing.T) {
	set := redistest.StartMasters(t, 5, localmasters.PersistNone)
	// The late SETs must answer within their per-master timeout to count
	// as late OKs: 2 s, a second past the resume below.
	e := newEngine(t, set, func(c *engine.Config) { c.Wait, c.Timeout = engine.WaitQuorum, 2*time.Second })
	e.MarkMeasured()
	ms := set.Masters()
	for _, m := range ms[:3] { // three masters already hold the key for someone else
		if _, err := redistest.Do(m.Addr(), "SET", "late", "foreign", "PX", "60000"); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range ms[3:] {
		if err := m.Pause(); err != nil {
			t.Fatal(err)
		}
	}
	// The paused masters resume 1 s after the acquire starts (was 100 ms):
	// its decision, three local round trips, must come first, so that
	// their SETs are still pending then and answer OK after it; the
	// failure's own release waits for them meanwhile. The decision's time
	// is measured against it.
	const resumeAfter = time.Second
	time.AfterFunc(resumeAfter, func() {
		for _, m := range ms[3:] {
			_ = m.Resume()
		}
	})
	lock, res := e.TryAcquire(context.Background(), "late") // Elapsed: its decision
	if !bound.Max(t, "late.decided_before_resume", res.Elapsed, resumeAfter) {
		t.Fatalf("the acquire was decided %v after its start, after the paused masters resumed: nothing judged", res.Elapsed)
	}
	if lock != nil || count(res.PerMaster, engine.Taken) != 3 || count(res.PerMaster, engine.Pending) != 2 {
		t.Fatalf("want a failure decided by 3 taken with 2 pending, got %v", res.PerMaster)
	}
	deadline := time.Now().Add(5 * time.Second)
	for sum(e.LateReleased()) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := e.LateReleased(); got[3] != 1 || got[4] != 1 {
		t.Fatalf("late_released per master = %v, want 1 on masters 3 and 4", got)
	}
	if late := e.LateOutcomes(); late[3][engine.OK] != 1 || late[4][engine.OK] != 1 {
		t.Fatalf("late OKs per master = %v", late)
	}
	// LateReleased counts a release as it is sent: wait for it to land,
	// for at most 5 s, well below the 10 s TTL a key not released keeps.
	for _, m := range ms[3:] {
		v := get(t, m.Addr(), "late")
		for end := time.Now().Add(5 * time.Second); v != "" && time.Now().Before(end); v = get(t, m.Addr(), "late") {
			time.Sleep(20 * time.Millisecond)
		}
		if v != "" {
			t.Fatalf("%s still holds the failed acquire's token %q", m.Addr(), v)
		}
	}
}

func sum(xs []int64) int64 {
	var s int64
	for _, x := range xs {
		s += x
	}
	return s
}

// Issue 10.4: validity is what is left from the end of the acquire; the
// lock is usable until t1 + TTL − drift, as in the algorithm and redsync.
func TestValidUntilIsStartPlusTTLMinusDrift(t *testing.T) {
	set := redistest.StartMasters(t, 3, localmasters.PersistNone)
	const ttl = 2 * time.Second
	e := newEngine(t, set, func(c *engine.Config) { c.TTL, c.Timeout = ttl, 500*time.Millisecond })
	drift := engine.Drift(ttl, 0.01)
	// One master answers 30 ms late, so elapsed is far above the 1 ms
	// tolerance and counting it twice would show.
	slow := set.Masters()[2]
	if err := slow.Pause(); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(30*time.Millisecond, func() { _ = slow.Resume() })
	lock, res := e.Acquire(context.Background(), "validuntil")
	if lock == nil || res.Elapsed < 20*time.Millisecond {
		t.Fatalf("acquire: %v after %v; want it acquired after the slow master's 30 ms", res.PerMaster, res.Elapsed)
	}
	near := func(got, want time.Duration) bool { return got-want < time.Millisecond && want-got < time.Millisecond }
	if got := lock.ValidUntil.Sub(lock.Start); !near(got, ttl-drift) {
		t.Fatalf("ValidUntil − Start = %v, want TTL − drift = %v", got, ttl-drift)
	}
	if !near(res.Validity, ttl-res.Elapsed-drift) {
		t.Fatalf("Validity = %v, want TTL − elapsed − drift = %v", res.Validity, ttl-res.Elapsed-drift)
	}
	ext := e.Extend(context.Background(), lock, ttl)
	if !ext.OK {
		t.Fatalf("extend: %+v", ext)
	}
	if got := lock.ValidUntil.Sub(lock.Start); !near(got, ttl-drift) {
		t.Fatalf("after extend, ValidUntil − Start = %v, want %v", got, ttl-drift)
	}
	if !near(ext.Validity, ttl-ext.Elapsed-drift) {
		t.Fatalf("extend validity = %v, want %v", ext.Validity, ttl-ext.Elapsed-drift)
	}
	e.Release(context.Background(), lock)
}
