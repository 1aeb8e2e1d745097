package results

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"lockbench/lock"
)

// Contention is what waiting callers saw and what their waiting cost: the
// figures a lock library's user asks about (how long until I hold it, how
// long the lock sat free between holders, who starved, what the waiting
// put on the servers). Without contention time to lock is the acquire
// latency.
type Contention struct {
	// TimeToLock is from a caller's first attempt on a key to holding it,
	// across every retry and wait (coordinated-omission corrected in open
	// loop); callers that gave up are apart, in GaveUp and GaveUpWait.
	TimeToLock Latency  `json:"time_to_lock"`
	GaveUp     int64    `json:"gave_up"`
	GaveUpWait *Latency `json:"gave_up_wait,omitempty"`
	// AttemptsPerLock: the lock client's attempts (retries included) per
	// acquired lock.
	AttemptsPerLock float64 `json:"attempts_per_lock"`
	// CommandsPerLock: Redis commands sent to all servers per acquired
	// lock: the measured acquires' and releases' own, with the window's
	// SUBSCRIBE/UNSUBSCRIBE and WAITs. Commands: by kind, over the measured
	// window. Absent when the lock client does not count them (redsync).
	CommandsPerLock float64   `json:"commands_per_lock,omitempty"`
	Commands        *Commands `json:"commands,omitempty"`
	// HandoffGap is, on one key, from a holder's release to the next
	// holder's acquire while callers waited: the lock's idle time.
	HandoffGap *Latency `json:"handoff_gap,omitempty"`
	// HotKeys are the keys held longest, with their utilisation (held time
	// over the window); KeysFollowed says when not every key was followed.
	HotKeys      []KeyUse `json:"hot_keys,omitempty"`
	KeysFollowed string   `json:"keys_followed,omitempty"`
	// Starved counts workers that gave up or waited more than 10× the
	// median time to lock (and at least 10 ms); StarvedWaits the waits
	// over that bound.
	Starved      int          `json:"starved_workers"`
	StarvedWaits int64        `json:"starved_waits"`
	SlowestWaits []WorkerWait `json:"slowest_workers,omitempty"`
	// Wakeups are the notify strategy's: waiters woken by an unlock
	// message or by their timeout (a lost notification shows here).
	Wakeups *Wakeups `json:"wakeups,omitempty"`
}

// Commands are a lock client's commands by kind, summed over its
// servers, and Wakeups a notify waiter's wake-ups by cause: the lock
// seam's own types, recorded as read.
type (
	Commands = lock.Commands
	Wakeups  = lock.Wakeups
)

// KeyUse is one key's use in the window.
type KeyUse struct {
	Key         string  `json:"key"`
	Acquired    int64   `json:"acquired"`
	HeldSeconds float64 `json:"held_s"`
	Utilisation float64 `json:"utilisation"` // held time over the window
}

// WorkerWait is one worker's time to lock.
type WorkerWait struct {
	Worker   int     `json:"worker"`
	Acquired int64   `json:"acquired"`
	GaveUp   int64   `json:"gave_up,omitempty"`
	P99      float64 `json:"p99_us"`
	Max      float64 `json:"max_us"`
}

// HottestKeys are the n keys of all held longest, each with its share of
// a window of secs.
func HottestKeys(all []KeyUse, n int, secs float64) []KeyUse {
	slices.SortFunc(all, func(a, b KeyUse) int {
		return cmp.Or(cmp.Compare(b.HeldSeconds, a.HeldSeconds), strings.Compare(a.Key, b.Key))
	})
	all = all[:min(n, len(all))]
	for i := range all {
		if secs > 0 {
			all[i].Utilisation = all[i].HeldSeconds / secs
		}
	}
	return all
}

// Summary is the contention line of a run's text.
func (c *Contention) Summary() string {
	t := c.TimeToLock
	s := fmt.Sprintf("time to lock p50 %s p99 %s max %s, %.2f attempts/lock", FormatMicros(t.P50), FormatMicros(t.P99), FormatMicros(t.Max), c.AttemptsPerLock)
	if c.CommandsPerLock > 0 {
		s += fmt.Sprintf(", %.2f commands/lock", c.CommandsPerLock)
	}
	if g := c.HandoffGap; g != nil && g.Count > 0 {
		s += fmt.Sprintf(", handoff gap p50 %s p99 %s", FormatMicros(g.P50), FormatMicros(g.P99))
	}
	if len(c.HotKeys) > 0 && c.HotKeys[0].Utilisation >= 0.01 {
		s += fmt.Sprintf(", hottest key held %s of the time", Pct0(c.HotKeys[0].Utilisation))
	}
	if c.GaveUp > 0 {
		s += fmt.Sprintf(", %d gave up", c.GaveUp)
	}
	if c.Starved > 0 {
		s += fmt.Sprintf(", %d workers starved", c.Starved)
	}
	if w := c.Wakeups; w != nil {
		s += fmt.Sprintf(", wake-ups %d by message / %d by timeout", w.ByMessage, w.ByTimeout)
	}
	return s
}

// medianContention is the contention and fairness of the repeat whose time
// to lock p99 is the median, its figures replaced by the repeats' medians
// (spread already worked out in rep).
func medianContention(runs []Run, rep *Repeats) (*Contention, *Fairness) {
	order := make([]int, len(runs))
	for i := range order {
		order[i] = i
	}
	p99 := func(i int) float64 { return rep.Runs[i].TimeToLockP99 }
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(p99(a), p99(b)) })
	mid := runs[order[len(order)/2]]
	var c *Contention
	if mid.Contention != nil {
		cc := *mid.Contention
		cc.TimeToLock.P50, cc.TimeToLock.P99 = rep.Spread["time_to_lock_p50"].Median, rep.Spread["time_to_lock_p99"].Median
		cc.AttemptsPerLock, cc.CommandsPerLock = rep.Spread["attempts_per_lock"].Median, rep.Spread["commands_per_lock"].Median
		c = &cc
	}
	var f *Fairness
	if mid.Fairness != nil {
		ff := *mid.Fairness
		ff.JainIndex = rep.Spread["jain_index"].Median
		f = &ff
	}
	return c, f
}
