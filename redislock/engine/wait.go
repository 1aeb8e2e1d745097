package engine

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
)

// waitSpec is WAIT K after the SETs on a replicated link, with its counts.
//
// One WAIT follows each batch that holds SETs (on a cluster, one per slot
// its SETs touched, sent on that slot), on the same connection, in the
// same pipelined write: WAIT blocks until every earlier write of its
// connection reached K replicas, so one covers all the batch's SETs (with
// one worker that is one WAIT per SET). rueidis sends a WAIT, a blocking
// command, with its batch on a connection of its own for the duration; a
// batch's releases and extends are sent apart (send), so that no WAIT
// holds them up.
type waitSpec struct {
	replicas  int64
	timeoutMs int64
	// sent counts WAITs; acks the replicas they reported, summed; short
	// those that reported fewer than K.
	sent, acks, short atomic.Int64
}

// WaitCounts are the WAITs an engine sent and what they answered.
type WaitCounts struct {
	Sent  int64 // WAIT commands sent (one per batch holding SETs)
	Acks  int64 // replica acknowledgements they reported, summed
	Short int64 // WAITs answered with fewer than WaitReplicas: their SETs were FewAcks
}

// waitTimeout is WAIT's own timeout: WaitTimeout, or the per-master
// timeout when 0 (WAIT 0 would block forever).
func (c Config) waitTimeout() time.Duration {
	if c.WaitReplicas <= 0 {
		return 0
	}
	if c.WaitTimeout > 0 {
		return max(c.WaitTimeout, time.Millisecond)
	}
	return max(c.Timeout, time.Millisecond)
}

func (c Config) waitSpec() *waitSpec {
	if c.WaitReplicas <= 0 {
		return nil
	}
	return &waitSpec{replicas: int64(c.WaitReplicas), timeoutMs: c.waitTimeout().Milliseconds()}
}

// waitSlack is how late a server may answer a WAIT that timed out: it
// checks blocked clients' timeouts at its hz, 10 times a second by default.
const waitSlack = 100 * time.Millisecond

// timeout is a command's per-master budget: an acquire followed by WAIT
// has WAIT's own timeout and its slack on top, since the master holds its
// reply that long (a deadline before it would count a short WAIT as a
// timeout, and close its connection).
func (e *Engine) timeout(kind opKind) time.Duration {
	if w := e.cfg.waitTimeout(); kind == opSet && w > 0 {
		return e.cfg.Timeout + w + waitSlack
	}
	return e.cfg.Timeout
}

// watchdog is the deadline queue for kind's waits: acquires with WAIT
// have a longer deadline and a queue of their own, as each queue must be
// in deadline order.
func (e *Engine) watchdog(kind opKind) *timeouts {
	if kind == opSet && e.setTimeouts != nil {
		return e.setTimeouts
	}
	return e.timeouts
}

// startWait readies the engine for WAIT (a no-op without it).
func (e *Engine) startWait() {
	if e.cfg.waitTimeout() > 0 {
		e.setTimeouts = startTimeouts(e.timeout(opSet))
	}
}

// WaitCounts adds up the WAITs of every link (zero without WaitReplicas).
func (e *Engine) WaitCounts() WaitCounts {
	var w WaitCounts
	for _, l := range e.links {
		if l.wait != nil {
			w.Sent += l.wait.sent.Load()
			w.Acks += l.wait.acks.Load()
			w.Short += l.wait.short.Load()
		}
	}
	return w
}

// splitSets parts a batch into its SETs and the rest, in order.
func splitSets(batch []*request) (sets, rest []*request) {
	for _, r := range batch {
		if r.call.kind == opSet {
			sets = append(sets, r)
		} else {
			rest = append(rest, r)
		}
	}
	return sets, rest
}

func hasSet(batch []*request) bool {
	for _, r := range batch {
		if r.call.kind == opSet {
			return true
		}
	}
	return false
}

// sendWaited is send for a batch holding SETs on a link with WAIT: the
// batch, then WAIT, in one write. A SET that won but whose WAIT saw fewer
// than K replicas is FewAcks (a failed acquire, released by its caller);
// a WAIT that timed out or failed makes the SETs that won Timeout or Error.
func (l *link) sendWaited(ctx context.Context, d *lane, live []*request) {
	for _, r := range live {
		d.cmds = append(d.cmds, r.call.cmd)
	}
	waits, of := l.waitCommands(live)
	d.cmds = append(d.cmds, waits...)
	l.wait.sent.Add(int64(len(waits)))
	res := l.client.DoMulti(ctx, d.cmds...)
	written := true
	for _, r := range res {
		written = written && r.NonRedisError() == nil
	}
	acked := make([]Outcome, len(waits))
	for j := range waits {
		acked[j] = l.wait.outcome(ctx, res[len(live)+j])
	}
	var retry []*request
	for i, r := range live {
		err := res[i].Error()
		switch {
		case err != nil && r.call.kind != opSet && isNoScript(err):
			retry = append(retry, r)
		case err == nil && r.call.kind == opSet && acked[of[i]] != OK:
			r.call.deliver(r.master, acked[of[i]])
		default:
			l.answer(r, res[i], err)
		}
	}
	if written {
		clear(d.cmds)
		d.cmds = d.cmds[:0]
	} else {
		d.cmds = nil // rueidis' writer may still read it: leave it alone
	}
	if len(retry) > 0 {
		l.sendEval(ctx, retry)
	}
}

// outcome is what WAIT's reply makes of the SETs before it.
func (w *waitSpec) outcome(ctx context.Context, res rueidis.RedisResult) Outcome {
	n, err := res.AsInt64()
	switch {
	case err == nil:
		w.acks.Add(n)
		if n < w.replicas {
			w.short.Add(1)
			return FewAcks
		}
		return OK
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		return Timeout
	}
	return Error
}
