// Package lock is the seam between the worker loop and a lock service. A
// service (Redlock's engine or redsync on Redis masters, etcd, ZooKeeper,
// PostgreSQL) is a package with a Locker and its servers: the loop knows
// nothing else of it. What only some services have is optional: a
// fencing token and a lost-lock signal on the held lock, per-server
// outcomes (PerServer), extension (Extender). Package engine's Lock,
// Result, OpResult and Outcome are these.
package lock

import (
	"context"
	"time"
)

// Lock is a lock a caller holds, as its service granted it.
type Lock struct {
	Key   string // the key, as the caller named it
	Token string // the holder's own value on the servers ("" : the service keeps none)
	Start time.Time
	// ValidUntil is when the holder must stop using the lock: a Redlock's
	// t1 + TTL − drift; a lock kept alive by its session has none (far
	// future), and Lost says when it ended instead.
	ValidUntil time.Time
	Handle     any // the service client's own lock object, when it has one
	// Fence is the service's own fencing token (etcd: the revision the
	// lock was granted at; ZooKeeper: the key container's pzxid in the
	// Children reply that granted it), 0 when it issues none (Redis);
	// each service's result settings say where it comes from
	// (fence_source).
	Fence int64
	// Lost, when not nil, is closed once the service ended the lock under
	// its holder (a session's lease or connection that ended, a watchdog's
	// renewal that failed).
	Lost <-chan struct{}
	// Until, when not nil, is when the lock's validity ends as last
	// renewed in the background (a Redis lease watchdog's): the holder's
	// promise, where ValidUntil is the far future.
	Until func() time.Time
	// Room is where a per-server Locker keeps its release's outcomes,
	// allocated with the lock (the engine: one allocation per cycle).
	Room []Outcome
}

// Outcome is what one server said to one command (a per-server Locker's).
type Outcome uint8

const (
	Pending Outcome = iota // sent, but the caller stopped waiting before it answered (wait=quorum)
	OK                     // SET NX won, or the script acted on our token
	Taken                  // SET NX lost, or the key holds another token (or none)
	Timeout                // no answer within the per-server timeout
	Error                  // connection or server error
	NotSent                // sequential with wait=quorum: decided before this server's turn
	// Unconfirmed: the server granted it, but fewer of its replicas
	// acknowledged the grant than the client asked for (Redis' WAIT after
	// the SET; any client that checks its grant's replication may say so):
	// the acquire failed and was released. Its name is "few_acks", as
	// results and metrics always spelt it.
	Unconfirmed
	NumOutcomes
)

var outcomeNames = [...]string{"pending", "ok", "taken", "timeout", "error", "not_sent", "few_acks"}

func (o Outcome) String() string { return outcomeNames[o] }

// Result is what an acquire came to.
type Result struct {
	Acquired  bool
	Attempts  int
	Successes int           // servers that accepted the last attempt (per-server Lockers)
	Elapsed   time.Duration // first attempt start to decision
	LastStart time.Duration // first attempt start to the last attempt's start (0 for one attempt)
	Validity  time.Duration // TTL − elapsed − drift of the last attempt: left from its end; not positive means too slow
	PerMaster []Outcome     // outcomes of the last attempt, by server (nil: a service without per-server outcomes)
	Err       error         // the context ended
	// Taken: another holder had the key (a service without per-server
	// outcomes says so here; PerMaster says it per server).
	Taken bool
	// Sent is the commands the acquire sent, every attempt's (0 from a
	// client that does not count them).
	Sent int
}

// OpResult is what a release or an extend saw.
type OpResult struct {
	OK        bool // release: the lock was freed; extend: kept within validity
	Count     int  // servers that acted on our token
	Elapsed   time.Duration
	Validity  time.Duration // extend: the new validity
	PerMaster []Outcome
	Sent      int // release: its commands
}

// Locker is a lock service's client, as the worker loop drives it.
type Locker interface {
	Acquire(ctx context.Context, key string) (*Lock, Result)
	Release(ctx context.Context, l *Lock) OpResult
}

// PerServer is a Locker that reports outcomes per server (Redis'
// masters): its addresses, by the index of Result.PerMaster, and the
// replies that came after their acquire was decided. A service without
// (etcd, ZooKeeper, PostgreSQL) leaves the result's per-server detail
// empty: it fakes no masters.
type PerServer interface {
	Addrs() []string
	LateOutcomes() [][NumOutcomes]int64
}

// Extender is a Locker that can extend a held lock (auto-extension).
type Extender interface {
	Extend(ctx context.Context, l *Lock, ttl time.Duration) OpResult
}

// Breaker is a Locker that can break for good mid-run (an adapter
// process that exited, hung or broke its protocol): Err says why, nil
// while it works. The client's run fails with it.
type Breaker interface {
	Err() error
}

// Quorum is the majority of n servers a per-server Locker needs.
func Quorum(n int) int { return n/2 + 1 }

// Commands are the commands a Locker sent its servers, by kind in its
// service's own words (Redis' engine: sets, releases, extends,
// publishes, subscribes, unsubscribes, waits), summed over them (a
// Counter's): what waiting and locking cost the servers. A result records
// a window's counts as they are (results.Commands); a kind absent counts
// 0.
type Commands map[string]int64

// Sub is c − o: the commands of a window between two readings (kinds
// whose count did not change are left out).
func (c Commands) Sub(o Commands) Commands {
	out := Commands{}
	for k, n := range c {
		if d := n - o[k]; d != 0 {
			out[k] = d
		}
	}
	for k, n := range o {
		if _, ok := c[k]; !ok && n != 0 {
			out[k] = -n
		}
	}
	return out
}

// Add adds o's commands to c.
func (c *Commands) Add(o Commands) {
	if *c == nil && len(o) > 0 {
		*c = Commands{}
	}
	for k, n := range o {
		(*c)[k] += n
	}
}

// Clone is a copy of c that changes apart from it.
func (c Commands) Clone() Commands {
	out := make(Commands, len(c))
	for k, n := range c {
		out[k] = n
	}
	return out
}

// Total is every command counted.
func (c Commands) Total() int64 {
	var t int64
	for _, n := range c {
		t += n
	}
	return t
}

// Counter is a Locker that counts the commands it sends. SharedKinds
// are the kinds no single acquire or release owns, sent for the window
// (Redis: pub/sub, WAIT), which a cell's commands per lock add to the
// acquires' and releases' own (Result.Sent, OpResult.Sent).
type Counter interface {
	Commands() Commands
	SharedKinds() []string
}

// Wakeups are a waiting Locker's wake-ups: by a release's message, or by
// its own timeout (a lost notification shows here).
type Wakeups struct {
	ByMessage int64 `json:"by_message"`
	ByTimeout int64 `json:"by_timeout"`
}

// Add adds o's wake-ups to w.
func (w *Wakeups) Add(o Wakeups) {
	w.ByMessage += o.ByMessage
	w.ByTimeout += o.ByTimeout
}

// Waker is a Locker whose waits are woken by messages (notify); false:
// it does not wait so.
type Waker interface {
	Wakeups() (Wakeups, bool)
}
