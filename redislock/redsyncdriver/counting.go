package redsyncdriver

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	redsyncredis "github.com/go-redsync/redsync/v4/redis"

	"lockbench/redislock/engine"
)

// redsync tells which masters failed, but not which said OK, nor anything
// about replies after it decided. A pool wrapper sees every master's reply
// and files it with the attempt carried in the command's context.

type opKind uint8

const (
	opSetNX opKind = iota // acquire
	opEval                // release or extend (redsync's scripts)
)

// attempt collects one call's per-master outcomes of one kind of command.
type attempt struct {
	kind     opKind
	quorum   int
	failFast bool
	late     *lateCounts // SET replies after the decision (nil: dropped)

	mu      sync.Mutex
	outs    []engine.Outcome
	ok      int
	taken   int
	decided bool // redsync's fail-fast rule was met
	closed  bool // the call returned
}

func newAttempt(kind opKind, n int, failFast bool, late *lateCounts) *attempt {
	return &attempt{kind: kind, quorum: engine.Quorum(n), failFast: failFast, late: late, outs: make([]engine.Outcome, n)}
}

// record files one master's reply. redsync's fail-fast returns as soon as a
// quorum said OK or a quorum said taken; replies after that are late, as
// they are for the engine under wait=quorum. (Which replies made the quorum
// may differ from redsync's by arrival order, not the counts.)
func (a *attempt) record(kind opKind, node int, o engine.Outcome) {
	if kind != a.kind || o == engine.Pending {
		// Another command (the release redsync sends after a failed
		// acquire), or one redsync abandoned by cancelling its context
		// once it had decided: no reply to count.
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.decided || a.closed {
		if a.late != nil {
			a.late.add(node, o)
		}
		return
	}
	a.outs[node] = o
	switch o {
	case engine.OK:
		a.ok++
	case engine.Taken:
		a.taken++
	}
	if a.failFast && (a.ok >= a.quorum || a.taken >= a.quorum) {
		a.decided = true
	}
}

// close ends the attempt: the outcomes by master and how many were OK.
func (a *attempt) close() ([]engine.Outcome, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	return append([]engine.Outcome(nil), a.outs...), a.ok
}

type attemptKey struct{}

func withAttempt(ctx context.Context, a *attempt) context.Context {
	return context.WithValue(ctx, attemptKey{}, a)
}

// countingPool hands out connections that report to the context's attempt.
type countingPool struct {
	inner redsyncredis.Pool
	node  int
}

func (p countingPool) Get(ctx context.Context) (redsyncredis.Conn, error) {
	c, err := p.inner.Get(ctx)
	if err != nil {
		return nil, err
	}
	a, _ := ctx.Value(attemptKey{}).(*attempt)
	if a == nil {
		return c, nil
	}
	return countingConn{Conn: c, ctx: ctx, node: p.node, at: a}, nil
}

type countingConn struct {
	redsyncredis.Conn
	ctx  context.Context
	node int
	at   *attempt
}

func (c countingConn) SetNX(name, value string, expiry time.Duration) (bool, error) {
	ok, err := c.Conn.SetNX(name, value, expiry)
	c.at.record(opSetNX, c.node, c.outcome(ok, err))
	return ok, err
}

func (c countingConn) Eval(script *redsyncredis.Script, keysAndArgs ...any) (any, error) {
	v, err := c.Conn.Eval(script, keysAndArgs...)
	n, _ := v.(int64)
	c.at.record(opEval, c.node, c.outcome(n == 1, err))
	return v, err
}

// outcome classifies a reply as the engine does: acted on our token (OK),
// lost to another token or none (Taken), no answer within the per-master
// timeout (go-redis reports the deadline as a socket i/o timeout), or an
// error; Pending when the command was abandoned (context cancelled).
func (c countingConn) outcome(ok bool, err error) engine.Outcome {
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(c.ctx.Err(), context.Canceled):
		return engine.Pending
	case err == nil && ok:
		return engine.OK
	case err == nil:
		return engine.Taken
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(c.ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return engine.Timeout
	default:
		return engine.Error
	}
}

// lateCounts are per-master outcomes of replies after the decision.
type lateCounts struct {
	c [][engine.NumOutcomes]atomic.Int64
}

func newLateCounts(n int) *lateCounts {
	return &lateCounts{c: make([][engine.NumOutcomes]atomic.Int64, n)}
}

func (l *lateCounts) add(node int, o engine.Outcome) { l.c[node][o].Add(1) }

func (l *lateCounts) snapshot() [][engine.NumOutcomes]int64 {
	out := make([][engine.NumOutcomes]int64, len(l.c))
	for i := range l.c {
		for o := range l.c[i] {
			out[i][o] = l.c[i][o].Load()
		}
	}
	return out
}
