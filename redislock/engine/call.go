package engine

import (
	"hash/maphash"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
)

// call is one phase (acquire, release or extend) of one lock across the
// masters. Dispatchers file each master's answer where it arrives and wake
// the caller once, when the outcome is decided, not once per reply. Calls
// are pooled: a call goes back to the pool when its caller and every
// request it sent are done with it, so late replies never touch a reused call.
type call struct {
	e          *Engine
	kind       opKind
	key, token string
	keyHash    uint64 // picks the key's dispatcher queue on every master
	ttlMs      int64
	measured   bool // started after MarkMeasured: late replies count as the run's
	orphan     bool // a release nobody waits for (of a late OK): not counted as late
	reqs       []request
	// cmd is the one command every master is sent: built once per call,
	// pinned so that no master's reply recycles it while others still
	// write it (building and recycling it per master was a tenth of the
	// client's time per cycle at 512 workers).
	cmd  rueidis.Completed
	wake chan struct{} // one slot: "decided" or "deadline passed"

	mu       sync.Mutex
	outs     []Outcome
	ok, bad  int
	early    bool // wait=quorum: decided as soon as the majority is known
	waitFor  int  // sequential: the master awaited; -1 when waiting on all
	closed   bool // the caller stopped waiting: later replies are late
	failed   bool // an acquire decided as failed: a late OK is released
	signaled bool
	// inWait is gen while the caller waits, 0 otherwise: only the wait in
	// progress may be woken, and the watchdog reads it without the lock to
	// drop waits that ended without it.
	inWait  atomic.Uint64
	expired bool   // the watchdog woke the caller: its deadline passed
	gen     uint64 // counts waits, so a stale deadline wakes nobody
	refs    int    // requests in flight + the caller
}

func (e *Engine) newCall(kind opKind, key, token string, ttlMs int64, early bool) *call {
	c, _ := e.calls.Get().(*call)
	if c == nil {
		n := len(e.links)
		c = &call{e: e, reqs: make([]request, n), outs: make([]Outcome, n), wake: make(chan struct{}, 1)}
	}
	c.kind, c.key, c.token, c.ttlMs, c.early, c.orphan = kind, key, token, ttlMs, early, false
	if e.cfg.Dispatchers > 1 { // hashed once per call, not once per master
		c.keyHash = maphash.String(keySeed, key)
	}
	c.cmd = e.command(kind, key, token, ttlMs)
	c.measured = e.measuring.Load()
	clear(c.outs)
	c.ok, c.bad, c.waitFor, c.closed, c.failed, c.signaled, c.expired, c.refs = 0, 0, -1, false, false, false, false, 1
	select { // a signal nobody took (the caller timed out first)
	case <-c.wake:
	default:
	}
	return c
}

// command builds the SET or script call for key, the same for every
// master. Each names its key as a key, so that a cluster client routes it
// to the key's slot.
func (e *Engine) command(kind opKind, key, token string, ttlMs int64) rueidis.Completed {
	b := e.builder
	switch kind {
	case opSet:
		return b.Arbitrary("SET").Keys(key).Args(token, "NX", "PX", e.setTTL).Build().Pin()
	case opRelease:
		return b.Evalsha().Sha1(e.relSHA).Numkeys(1).Key(key).Arg(token).Build().Pin()
	case opReleaseNotify:
		return b.Evalsha().Sha1(e.relNotifySHA).Numkeys(1).Key(key).Arg(token).Build().Pin()
	default:
		return b.Evalsha().Sha1(e.extSHA).Numkeys(1).Key(key).Arg(token, strconv.FormatInt(ttlMs, 10)).Build().Pin()
	}
}

// send queues the command for master i; the call is held until it answers.
func (c *call) send(i int, deadline time.Time) {
	c.mu.Lock()
	c.refs++
	c.mu.Unlock()
	c.enqueue(i, deadline)
}

// sendAll queues the command for every master at once, holding the call
// for all of them in one lock.
func (c *call) sendAll(deadline time.Time) {
	c.mu.Lock()
	c.refs += len(c.reqs)
	c.mu.Unlock()
	for i := range c.reqs {
		c.enqueue(i, deadline)
	}
}

func (c *call) enqueue(i int, deadline time.Time) {
	r := &c.reqs[i]
	r.master, r.deadline, r.call = i, deadline, c
	c.e.links[i].enqueue(r)
}

// deliver files master m's answer. Called by dispatchers (or by enqueue).
func (c *call) deliver(m int, o Outcome) {
	c.mu.Lock()
	late := c.closed || c.outs[m] != Pending
	if !late {
		c.outs[m] = o
		if o == OK {
			c.ok++
		} else {
			c.bad++
		}
		if !c.signaled && c.decided() {
			c.signaled = true
			c.wake <- struct{}{} // never blocks: one signal per wait, drained before the next
		}
	}
	releaseLate := late && c.kind == opSet && (o == OK || o == FewAcks) && c.failed
	kind, key, token, measured, orphan := c.kind, c.key, c.token, c.measured, c.orphan
	c.refs--
	free := c.refs == 0
	c.mu.Unlock()
	if late && !orphan {
		c.e.late.add(kind, measured, m, o)
	}
	if releaseLate {
		c.e.releaseLate(m, key, token, measured)
	}
	if free {
		c.e.calls.Put(c)
	}
}

// decided says whether the caller can stop waiting (under mu).
func (c *call) decided() bool {
	if c.waitFor >= 0 {
		return c.outs[c.waitFor] != Pending
	}
	n := len(c.outs)
	if c.ok+c.bad == n {
		return true
	}
	q := Quorum(n)
	return c.early && (c.ok >= q || c.bad > n-q)
}

// wait blocks until the call is decided or deadline passes; false on timeout.
func (c *call) wait(deadline time.Time) bool {
	c.mu.Lock()
	c.gen++
	gen := c.gen
	c.inWait.Store(gen)
	c.mu.Unlock()
	c.e.watchdog(c.kind).add(waiter{c: c, gen: gen, deadline: deadline})
	<-c.wake
	c.mu.Lock()
	defer c.mu.Unlock()
	c.signaled = false
	c.inWait.Store(0)
	expired := c.expired
	c.expired = false
	// Decided between the watchdog's wake-up and now: deliver has filed the
	// answer (and counted it), so take it rather than count a timeout too.
	if !expired || c.decided() {
		return true
	}
	if c.waitFor >= 0 {
		c.outs[c.waitFor], c.bad = Timeout, c.bad+1
	}
	return false
}

// expire wakes the caller of wait number gen, unless it was decided first
// or has left that wait (a stale wake-up would end the next wait at once).
func (c *call) expire(gen uint64) {
	c.mu.Lock()
	if c.inWait.Load() == gen && !c.signaled {
		c.signaled, c.expired = true, true
		c.wake <- struct{}{}
	}
	c.mu.Unlock()
}

// finish stops the call, copies the outcomes into outs and returns the OK
// count and the time since t1: masters still pending become Timeout unless the
// quorum rule decided without them. An acquire that lost (no quorum, or no
// validity left) is marked failed at the same instant, so that a SET
// answering OK from then on gets released.
func (c *call) finish(t1 time.Time, outs []Outcome) (int, time.Duration) {
	c.mu.Lock()
	c.closed = true
	ok := c.ok
	elapsed := time.Since(t1)
	cfg := &c.e.cfg
	c.failed = c.kind == opSet && (ok < Quorum(len(c.outs)) || Validity(cfg.TTL, elapsed, cfg.DriftFactor) <= 0)
	copy(outs, c.outs)
	keepPending := c.early && c.decided()
	c.refs--
	free := c.refs == 0
	c.mu.Unlock()
	for i := range outs {
		if outs[i] == Pending && !keepPending {
			outs[i] = Timeout
		}
	}
	if free {
		c.e.calls.Put(c)
	}
	return ok, elapsed
}

// lateCounts are replies that arrived after the caller moved on, per master
// and outcome: acquires (split into before and after MarkMeasured) apart from
// releases and extends, plus late OKs of failed acquires that were released.
type lateCounts struct {
	acquire  [2][][NumOutcomes]atomic.Int64
	other    [][NumOutcomes]atomic.Int64
	released [2][]atomic.Int64
}

func newLateCounts(n int) lateCounts {
	var l lateCounts
	for i := range 2 {
		l.acquire[i] = make([][NumOutcomes]atomic.Int64, n)
		l.released[i] = make([]atomic.Int64, n)
	}
	l.other = make([][NumOutcomes]atomic.Int64, n)
	return l
}

func (l *lateCounts) add(kind opKind, measured bool, m int, o Outcome) {
	if kind != opSet {
		l.other[m][o].Add(1)
		return
	}
	l.acquire[b2i(measured)][m][o].Add(1)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// releaseLate frees, on master m, a SET that answered OK after its acquire
// had been decided as failed: the failure's own release may have been
// dropped (its deadline passed in a stuck master's queue), and the key
// would otherwise stay held for the whole TTL.
func (e *Engine) releaseLate(m int, key, token string, measured bool) {
	e.late.released[b2i(measured)][m].Add(1)
	c := e.newCall(opRelease, key, token, 0, false)
	c.orphan = true
	c.send(m, time.Now().Add(e.cfg.Timeout))
	c.mu.Lock()
	c.closed = true
	c.refs--
	free := c.refs == 0
	c.mu.Unlock()
	if free {
		e.calls.Put(c)
	}
}
