package engine

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
)

// Outcome is what one master said to one command.
type Outcome uint8

const (
	Pending Outcome = iota // no answer yet (or never asked)
	OK                     // SET NX won, or the script acted on our token
	Taken                  // SET NX lost, or the key holds another token (or none)
	Timeout                // no answer within the per-master timeout
	Error                  // connection or server error
	NumOutcomes
)

var outcomeNames = [...]string{"pending", "ok", "taken", "timeout", "error"}

func (o Outcome) String() string { return outcomeNames[o] }

type opKind uint8

const (
	opSet opKind = iota
	opRelease
	opExtend
)

// request is one command for one master, answered on its call.
type request struct {
	kind     opKind
	master   int
	key      string
	token    string
	ttlMs    int64
	deadline time.Time
	call     *call
}

type reply struct {
	master  int
	outcome Outcome
	err     error
}

// call gathers the replies of one acquire/release/extend phase. Replies that
// arrive after the caller stopped waiting are counted as late on the engine,
// so wait=quorum loses no outcome.
type call struct {
	mu      sync.Mutex
	done    bool
	replies chan reply
	late    *lateCounts
}

func newCall(n int, late *lateCounts) *call {
	return &call{replies: make(chan reply, n), late: late}
}

func (c *call) deliver(r reply) {
	c.mu.Lock()
	if c.done {
		c.late.add(r.master, r.outcome)
	} else {
		c.replies <- r // capacity is one slot per master: never blocks
	}
	c.mu.Unlock()
}

// finish stops the call; anything still queued counts as late.
func (c *call) finish() {
	c.mu.Lock()
	c.done = true
	for {
		select {
		case r := <-c.replies:
			c.late.add(r.master, r.outcome)
			continue
		default:
		}
		break
	}
	c.mu.Unlock()
}

// lateCounts are per-master outcomes that arrived after the caller moved on.
type lateCounts struct{ c [][NumOutcomes]atomic.Int64 }

func (l *lateCounts) add(master int, o Outcome) { l.c[master][o].Add(1) }

// link is one master: a rueidis client fed by dispatchers that coalesce the
// commands of all workers into pipelined batches. Several batches are in
// flight at once, so a slow batch never stalls the next one.
type link struct {
	index    int
	addr     string
	client   rueidis.Client
	queue    chan *request
	maxBatch int
	relSHA   string
	extSHA   string
	wg       sync.WaitGroup
}

var errQueueFull = errors.New("client queue full")

func (l *link) enqueue(r *request) {
	select {
	case l.queue <- r:
	default:
		r.call.deliver(reply{master: r.master, outcome: Error, err: errQueueFull})
	}
}

func (l *link) start(dispatchers int) {
	for range dispatchers {
		l.wg.Add(1)
		go l.dispatch()
	}
}

func (l *link) dispatch() {
	defer l.wg.Done()
	batch := make([]*request, 0, l.maxBatch)
	cmds := make([]rueidis.Completed, 0, l.maxBatch)
	for {
		r, ok := <-l.queue
		if !ok {
			return
		}
		batch = append(batch[:0], r)
	fill:
		for len(batch) < l.maxBatch {
			select {
			case r, ok := <-l.queue:
				if !ok {
					break fill
				}
				batch = append(batch, r)
			default:
				break fill
			}
		}
		l.send(batch, cmds[:0])
	}
}

// send writes one batch and answers every request in it.
func (l *link) send(batch []*request, cmds []rueidis.Completed) {
	now := time.Now()
	live := batch[:0]
	var deadline time.Time
	for _, r := range batch {
		if !now.Before(r.deadline) {
			// Waited in the queue past its deadline: not worth sending.
			r.call.deliver(reply{master: r.master, outcome: Timeout, err: context.DeadlineExceeded})
			continue
		}
		live = append(live, r)
		if r.deadline.After(deadline) {
			deadline = r.deadline
		}
	}
	if len(live) == 0 {
		return
	}
	for _, r := range live {
		cmds = append(cmds, l.build(r, false))
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	results := l.client.DoMulti(ctx, cmds...)
	var retry []*request
	for i, r := range live {
		err := results[i].Error()
		if err != nil && r.kind != opSet && isNoScript(err) {
			retry = append(retry, r)
			continue
		}
		l.answer(r, results[i], err)
	}
	if len(retry) > 0 {
		// The script cache is empty (a restarted master): send the body.
		cmds = cmds[:0]
		for _, r := range retry {
			cmds = append(cmds, l.build(r, true))
		}
		results = l.client.DoMulti(ctx, cmds...)
		for i, r := range retry {
			l.answer(r, results[i], results[i].Error())
		}
	}
	cancel()
}

func (l *link) build(r *request, eval bool) rueidis.Completed {
	b := l.client.B()
	switch r.kind {
	case opSet:
		return b.Set().Key(r.key).Value(r.token).Nx().PxMilliseconds(r.ttlMs).Build()
	case opRelease:
		if eval {
			return b.Eval().Script(releaseScript).Numkeys(1).Key(r.key).Arg(r.token).Build()
		}
		return b.Evalsha().Sha1(l.relSHA).Numkeys(1).Key(r.key).Arg(r.token).Build()
	default:
		ttl := strconv.FormatInt(r.ttlMs, 10)
		if eval {
			return b.Eval().Script(extendScript).Numkeys(1).Key(r.key).Arg(r.token, ttl).Build()
		}
		return b.Evalsha().Sha1(l.extSHA).Numkeys(1).Key(r.key).Arg(r.token, ttl).Build()
	}
}

func (l *link) answer(r *request, res rueidis.RedisResult, err error) {
	o := OK
	switch {
	case err == nil && r.kind != opSet:
		if n, _ := res.AsInt64(); n != 1 {
			o = Taken
		}
	case err == nil:
	case rueidis.IsRedisNil(err):
		o = Taken
	case errors.Is(err, context.DeadlineExceeded) || !time.Now().Before(r.deadline):
		o = Timeout
	default:
		o = Error
	}
	r.call.deliver(reply{master: r.master, outcome: o, err: err})
}

func isNoScript(err error) bool {
	var re *rueidis.RedisError
	return errors.As(err, &re) && re.IsNoScript()
}
