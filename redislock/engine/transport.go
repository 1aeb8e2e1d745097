package engine

import (
	"context"
	"errors"
	"hash/maphash"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"lockbench/lock"
)

// Outcome is what one master said to one command: the seam's per-server
// outcome.
type Outcome = lock.Outcome

const (
	Pending     = lock.Pending
	OK          = lock.OK
	Taken       = lock.Taken
	Timeout     = lock.Timeout
	Error       = lock.Error
	NotSent     = lock.NotSent
	FewAcks     = lock.Unconfirmed
	NumOutcomes = lock.NumOutcomes
)

type opKind uint8

const (
	opSet opKind = iota
	opRelease
	opExtend
	opReleaseNotify // opRelease that publishes on the key's channel (strategy notify)
	numOps
)

// request is one command for one master; its call collects the answer.
type request struct {
	master   int
	deadline time.Time
	call     *call
}

// link is one master: a rueidis client fed by dispatchers that coalesce the
// commands of all workers into pipelined batches. Each dispatcher has its
// own queue and a key always goes to the same one, so one key's commands
// reach the master in the order they were issued (a release never overtakes
// its SET), while the dispatchers keep several batches in flight.
type link struct {
	index    int
	addr     string
	client   rueidis.Client
	queues   []*queue
	maxBatch int
	wait     *waitSpec // WAIT after the SETs (replicated, cluster); nil otherwise
	cluster  bool      // a Redis Cluster's client: commands routed by their key's slot
	wg       sync.WaitGroup
	// batches and sent count pipelined writes and the commands in them;
	// kinds splits sent by command (SET, release, extend).
	batches, sent atomic.Int64
	kinds         [numOps]atomic.Int64
}

var errQueueFull = errors.New("client queue full")

// maxQueued bounds one dispatcher's backlog: beyond it a master is so far
// behind that failing fast says more than queueing.
const maxQueued = 1 << 16

var keySeed = maphash.MakeSeed()

func (l *link) enqueue(r *request) {
	q := l.queues[r.call.keyHash%uint64(len(l.queues))]
	if !q.push(r) {
		r.call.deliver(r.master, Error)
	}
}

func (l *link) start(dispatchers int) {
	l.queues = make([]*queue, dispatchers)
	for i := range l.queues {
		l.queues[i] = newQueue()
		l.wg.Add(1)
		go l.dispatch(l.queues[i])
	}
}

func (l *link) stop() {
	for _, q := range l.queues {
		q.close()
	}
	l.wg.Wait()
}

// lane is what a dispatcher keeps from one batch to the next.
type lane struct {
	ctx *batchCtx
	// cmds is emptied for the next batch when every command was
	// answered, and dropped when DoMulti may have returned before rueidis'
	// writer read them all (a deadline or a broken connection).
	cmds []rueidis.Completed
}

func (l *link) dispatch(q *queue) {
	defer l.wg.Done()
	var spare []*request
	d := &lane{ctx: newBatchCtx()}
	defer func() { d.ctx.timer.Stop() }()
	for {
		batch, ok := q.take(spare)
		if !ok {
			return
		}
		// Chunks go one after the other: the order within a queue is the
		// order to the master.
		for rest := batch; len(rest) > 0; {
			n := min(len(rest), l.maxBatch)
			l.send(d, rest[:n])
			rest = rest[n:]
		}
		clear(batch) // let finished calls go
		spare = batch[:0]
	}
}

// send writes one batch and answers every request in it.
func (l *link) send(d *lane, batch []*request) {
	live, deadline := l.expire(batch)
	if len(live) == 0 {
		return
	}
	l.batches.Add(1)
	l.sent.Add(int64(len(live)))
	l.countKinds(live)
	ctx := d.ctx
	ctx.arm(deadline)
	defer d.next()
	if l.wait != nil && hasSet(live) {
		sets, rest := splitSets(live)
		if len(rest) == 0 {
			l.sendWaited(ctx, d, sets)
			return
		}
		// The batch's other commands (releases, extends) must not wait
		// for WAIT: they go at once, the SETs and their WAIT beside them.
		waited := make(chan struct{})
		go func() {
			defer close(waited)
			l.sendWaited(ctx, &lane{}, sets)
		}()
		defer func() { <-waited }()
		live = rest
	}
	var retry []*request
	check := func(r *request, res rueidis.RedisResult) {
		err := res.Error()
		if err != nil && r.call.kind != opSet && isNoScript(err) {
			retry = append(retry, r)
			return
		}
		l.answer(r, res, err)
	}
	if len(live) == 1 {
		// One command (low concurrency): no slices at all.
		check(live[0], l.client.Do(ctx, live[0].call.cmd))
	} else {
		for _, r := range live {
			d.cmds = append(d.cmds, r.call.cmd)
		}
		written := true
		for i, res := range l.client.DoMulti(ctx, d.cmds...) {
			written = written && res.NonRedisError() == nil
			check(live[i], res)
		}
		if written {
			clear(d.cmds)
			d.cmds = d.cmds[:0]
		} else {
			d.cmds = nil // rueidis' writer may still read it: leave it alone
		}
	}
	if len(retry) > 0 {
		l.sendEval(ctx, retry)
	}
}

// next readies the lane's context for the next batch: the same one while
// its deadline has not passed, else a new one, since a context that ended
// must stay ended for whoever still holds it (a context derived from it
// while rueidis redials, for one).
func (d *lane) next() {
	if !d.ctx.timer.Stop() {
		d.ctx = newBatchCtx()
	}
}

// expire answers Timeout to the requests that waited in the queue past
// their deadline (not worth sending) and returns the others, in order, with
// the latest deadline among them.
func (l *link) expire(batch []*request) ([]*request, time.Time) {
	now := time.Now()
	live := batch[:0]
	var deadline time.Time
	for _, r := range batch {
		if !now.Before(r.deadline) {
			r.call.deliver(r.master, Timeout)
			continue
		}
		live = append(live, r)
		if r.deadline.After(deadline) {
			deadline = r.deadline
		}
	}
	return live, deadline
}

// sendEval resends scripts with their body: the script cache is empty (a
// restarted master).
func (l *link) sendEval(ctx context.Context, retry []*request) {
	cmds := make([]rueidis.Completed, 0, len(retry))
	for _, r := range retry {
		cmds = append(cmds, l.evalCommand(r.call))
	}
	results := l.client.DoMulti(ctx, cmds...)
	for i, r := range retry {
		l.answer(r, results[i], results[i].Error())
	}
}

// evalCommand is the call's script with its body, for a master whose
// script cache is empty; built for that master alone, so rueidis recycles it.
func (l *link) evalCommand(c *call) rueidis.Completed {
	b := l.client.B()
	switch c.kind {
	case opRelease:
		return b.Eval().Script(releaseScript).Numkeys(1).Key(c.key).Arg(c.token).Build()
	case opReleaseNotify:
		return b.Eval().Script(releaseNotifyScript).Numkeys(1).Key(c.key).Arg(c.token).Build()
	}
	return b.Eval().Script(extendScript).Numkeys(1).Key(c.key).Arg(c.token, strconv.FormatInt(c.ttlMs, 10)).Build()
}

func (l *link) answer(r *request, res rueidis.RedisResult, err error) {
	o := OK
	switch {
	case err == nil && r.call.kind != opSet:
		if n, _ := res.AsInt64(); n != 1 {
			o = Taken
		} else if r.call.kind == opReleaseNotify {
			r.call.e.publishes.Add(1) // the script deleted our token, so it published
		}
	case err == nil:
	case rueidis.IsRedisNil(err):
		o = Taken
	case errors.Is(err, context.DeadlineExceeded) || !time.Now().Before(r.deadline):
		o = Timeout
	default:
		o = Error
	}
	r.call.deliver(r.master, o)
}

func isNoScript(err error) bool {
	var re *rueidis.RedisError
	return errors.As(err, &re) && re.IsNoScript()
}

// batchCtx is the context of a dispatcher's batch in flight, reused for
// the next batch as long as its deadline did not pass: context.WithDeadline
// allocated a context, a timer and a channel per batch, which at low
// concurrency is per command.
type batchCtx struct {
	deadline time.Time
	done     chan struct{}
	expired  atomic.Bool
	timer    *time.Timer
}

func newBatchCtx() *batchCtx {
	c := &batchCtx{done: make(chan struct{})}
	c.timer = time.AfterFunc(time.Hour, func() {
		c.expired.Store(true)
		close(c.done)
	})
	c.timer.Stop()
	return c
}

// arm starts a batch that ends at deadline.
func (c *batchCtx) arm(deadline time.Time) {
	c.deadline = deadline
	c.timer.Reset(time.Until(deadline))
}

func (c *batchCtx) Deadline() (time.Time, bool) { return c.deadline, true }
func (c *batchCtx) Done() <-chan struct{}       { return c.done }
func (c *batchCtx) Value(any) any               { return nil }

func (c *batchCtx) Err() error {
	if c.expired.Load() {
		return context.DeadlineExceeded
	}
	return nil
}

// queue is one dispatcher's backlog. The dispatcher takes everything queued
// in one lock, so a busy master costs one lock per batch, not one channel
// operation per command.
type queue struct {
	mu     sync.Mutex
	items  []*request
	closed bool
	wake   chan struct{} // one slot: "something was queued"
}

func newQueue() *queue { return &queue{wake: make(chan struct{}, 1)} }

func (q *queue) push(r *request) bool {
	q.mu.Lock()
	if q.closed || len(q.items) >= maxQueued {
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, r)
	first := len(q.items) == 1
	q.mu.Unlock()
	if first {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
	return true
}

// take waits for requests and swaps them out, handing back spare as the
// next backlog; false once closed and drained.
func (q *queue) take(spare []*request) ([]*request, bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			out := q.items
			q.items = spare
			q.mu.Unlock()
			return out, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return nil, false
		}
		<-q.wake
	}
}

func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// countKinds files a batch's commands by kind: a local tally, then one
// atomic add per kind, not one per command.
func (l *link) countKinds(live []*request) {
	var n [numOps]int64
	for _, r := range live {
		n[r.call.kind]++
	}
	for k, v := range n {
		if v > 0 {
			l.kinds[k].Add(v)
		}
	}
}
