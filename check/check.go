// Package check judges a fault cell from the outside of the lock: the
// protected resource the clients read and write under the lock (a counter
// per lock key on a redis-server of its own), the hold log they keep there,
// and what both show: overlapping holds, lost updates, stale writes
// refused. It knows no lock client.
package check

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/redis/rueidis"
)

const resourceTimeout = 2 * time.Second

// Findings are what the checkers found on the resource after a cell.
type Findings struct {
	Holds    int64 `json:"holds"`
	Unjudged int64 `json:"holds_not_judged"`
	// Violations: exclusion broken, one definition for every lock: a hold
	// that began while another holder of its key was still using its lock
	// (from the return of its acquire to its release call), whatever the
	// lock promised. ViolationsInPromise judges each hold only within what
	// its lock promised (Redis: its validity window; Unjudged: holds with
	// none left), the second figure.
	Violations          int64 `json:"violations"`
	ViolationsInPromise int64 `json:"violations_in_promise"`
	MaxConcurrent       int64 `json:"max_concurrent_holders"`
	// The protected writes, from the history check (Writes): acknowledged,
	// lost (acknowledged, missing from the final history), stale accepted,
	// fenced or guarded writes refused, and those in doubt (no answer).
	Acks           int64  `json:"acknowledged_writes"`
	FinalSum       int64  `json:"final_sum"` // the final histories' entries: every write that landed
	LostUpdates    int64  `json:"lost_updates"`
	StaleAccepted  int64  `json:"stale_writes_accepted"`
	RejectedWrites int64  `json:"stale_writes_rejected"`
	RejectedReads  int64  `json:"stale_reads_rejected"`
	Tokens         int64  `json:"fencing_tokens"`
	InDoubt        int64  `json:"writes_in_doubt,omitempty"`
	Writes         Writes `json:"writes"`
	// ViolationStarts are the starts (Unix ns) of the holds that overlapped
	// another; InPromiseStarts of those that did within their promise.
	ViolationStarts []int64 `json:"-"`
	InPromiseStarts []int64 `json:"-"`
	// Final is every key's history as the final read found it.
	Final map[uint64][]string `json:"-"`
	// History is every critical section, for the linearizability check.
	History []Op `json:"-"`
	// Acquired are the holds' acquires, each as its start and its return
	// (Unix ns), in order of start: when the lock could be had.
	Acquired []Acquire `json:"-"`
}

// Acquire is one logged hold's acquire: started at T1, returned at Done.
// ValidEnd is when the lock stopped being valid (Hold.ValidEnd), Used when
// its holder stopped using it (its release call).
type Acquire struct {
	Key                      uint64
	Client                   int
	T1, Done, ValidEnd, Used int64
}

// HeldAt counts the locks granted before t (Unix ns), still valid at t and
// not yet released by their holders: what a fault at t could take from
// them.
func (ck *Findings) HeldAt(t int64) int {
	n := 0
	for _, a := range ck.Acquired {
		if a.Done <= t && t < min(a.ValidEnd, a.Used) {
			n++
		}
	}
	return n
}

// FirstAcquireAfter is the acquire started at or after t (Unix ns) that
// won the lock first (the earliest to return); false when none did.
func (ck *Findings) FirstAcquireAfter(t int64) (Acquire, bool) {
	i := sort.Search(len(ck.Acquired), func(i int) bool { return ck.Acquired[i].T1 >= t })
	if i == len(ck.Acquired) {
		return Acquire{}, false
	}
	first := ck.Acquired[i]
	for _, a := range ck.Acquired[i+1:] {
		if a.T1 >= first.Done {
			break // started after it returned: cannot return before it
		}
		if a.Done < first.Done {
			first = a
		}
	}
	return first, true
}

// Unavailable is the longest span within [from, end] (Unix ns) in which no
// acquire returned holding a lock: from from to the first such return,
// between two, or from the last to end. toEnd: none returned in it, the
// span is from to end (at least that long). Measured on the acquires' own
// timestamps, so an outage reads the same wherever it falls in a second.
func (ck *Findings) Unavailable(from, end int64) (span int64, toEnd bool) {
	var dones []int64
	for _, a := range ck.Acquired {
		if a.Done >= from && a.Done <= end {
			dones = append(dones, a.Done)
		}
	}
	if len(dones) == 0 {
		return max(0, end-from), true
	}
	slices.Sort(dones)
	last := from
	for _, d := range dones {
		span, last = max(span, d-last), d
	}
	return max(span, end-last), false
}

// FinalRead reads the final history of keys 0 … keys−1 where it lives
// after the cell (a key with none may be left out).
type FinalRead func(ctx context.Context, keys uint64) (map[uint64][]string, error)

// Judge reads the resource after a cell: the hold log for overlapping
// holds, and the final histories (from final, or the resource's own when
// nil) against the logged writes for lost and stale ones.
func Judge(ctx context.Context, addr, prefix string, keys uint64, final FinalRead) (Findings, error) {
	r, err := Open(addr, prefix)
	if err != nil {
		return Findings{}, err
	}
	defer r.Close()
	var ck Findings
	if err := r.readCounters(ctx, &ck); err != nil {
		return ck, err
	}
	holds, err := r.readHolds(ctx)
	if err != nil {
		return ck, err
	}
	if final == nil {
		final = r.Histories
	}
	if ck.Final, err = final(ctx, keys); err != nil {
		return ck, fmt.Errorf("final read: %w", err)
	}
	ck.Holds = int64(len(holds))
	ck.Violations, ck.MaxConcurrent, _ = overlaps(holds, Hold.Use, func(start int64) { ck.ViolationStarts = append(ck.ViolationStarts, start) })
	ck.ViolationsInPromise, _, ck.Unjudged = overlaps(holds, Hold.Window, func(start int64) { ck.InPromiseStarts = append(ck.InPromiseStarts, start) })
	for _, h := range holds {
		if op, ok := h.Op(); ok {
			ck.History = append(ck.History, op)
		}
		ck.Acquired = append(ck.Acquired, Acquire{Key: h.Key, Client: h.Client, T1: h.T1, Done: h.T1 + h.Elapsed, ValidEnd: h.ValidEnd(), Used: h.Used})
	}
	sort.Slice(ck.Acquired, func(i, j int) bool { return ck.Acquired[i].T1 < ck.Acquired[j].T1 })
	ck.setWrites(CheckHistories(ck.History, ck.Final))
	return ck, nil
}

// setWrites puts the history check's figures in the findings.
func (ck *Findings) setWrites(w Writes) {
	ck.Writes = w
	ck.Acks, ck.FinalSum, ck.LostUpdates, ck.StaleAccepted = w.Acknowledged, w.FinalLength, w.Lost, w.StaleAccepted
	ck.RejectedWrites, ck.InDoubt = w.Refused, w.InDoubt
}

// readCounters reads the fenced reads refused and the fencing tokens
// handed out (0 when a counter was never set).
func (r *Resource) readCounters(ctx context.Context, ck *Findings) error {
	for _, f := range []struct {
		dst *int64
		key string
	}{{&ck.RejectedReads, r.key("rej", "r")}, {&ck.Tokens, r.key("fence")}} {
		v, err := r.c.Do(ctx, r.c.B().Get().Key(f.key).Build()).AsInt64()
		if rueidis.IsRedisNil(err) {
			v, err = 0, nil
		}
		*f.dst = v
		if err != nil {
			return fmt.Errorf("resource: GET %s: %w", f.key, err)
		}
	}
	return nil
}

// readHolds reads the whole hold log, in LRANGEs of 50,000 entries.
func (r *Resource) readHolds(ctx context.Context) ([]Hold, error) {
	var holds []Hold
	n, err := r.c.Do(ctx, r.c.B().Llen().Key(r.key("holds")).Build()).AsInt64()
	if err != nil {
		return nil, fmt.Errorf("resource: LLEN holds: %w", err)
	}
	for lo := int64(0); lo < n; lo += 50_000 {
		items, err := r.c.Do(ctx, r.c.B().Lrange().Key(r.key("holds")).Start(lo).Stop(lo+50_000-1).Build()).AsStrSlice()
		if err != nil {
			return nil, fmt.Errorf("resource: LRANGE holds: %w", err)
		}
		for _, it := range items {
			h, err := parseHold(it)
			if err != nil {
				return nil, err
			}
			holds = append(holds, h)
		}
	}
	return holds, nil
}

// Overlaps counts holds that began while another hold of the same key was
// still inside its validity window (as the live probe counts them: within
// what the lock promised), the most holders of one key at once, and the
// holds that could not be judged (no window). A hold that ends exactly
// when the next begins does not overlap it.
func Overlaps(holds []Hold) (violations, maxConcurrent, unjudged int64) {
	return overlaps(holds, Hold.Window, nil)
}

// UseOverlaps counts holds that began while another holder of the same key
// was still using its lock, validity or not: exclusion broken.
func UseOverlaps(holds []Hold) (violations, maxConcurrent int64) {
	v, m, _ := overlaps(holds, Hold.Use, nil)
	return v, m
}

// overlaps counts the holds whose span (as span gives it) began inside
// another's of the same key, and hands the start (Unix ns) of each to seen.
func overlaps(holds []Hold, span func(Hold) (start, end int64, ok bool), seen func(start int64)) (violations, maxConcurrent, unjudged int64) {
	type window struct{ start, end int64 }
	byKey := map[uint64][]window{}
	for _, h := range holds {
		start, end, ok := span(h)
		if !ok {
			unjudged++
			continue
		}
		byKey[h.Key] = append(byKey[h.Key], window{start, end})
	}
	for _, ws := range byKey {
		sort.Slice(ws, func(i, j int) bool { return ws[i].start < ws[j].start })
		var ends []int64 // ends of the windows still open, a small set
		for _, w := range ws {
			live := ends[:0]
			for _, e := range ends {
				if e > w.start {
					live = append(live, e)
				}
			}
			ends = live
			if len(ends) > 0 {
				violations++
				if seen != nil {
					seen(w.start)
				}
			}
			ends = append(ends, w.end)
			maxConcurrent = max(maxConcurrent, int64(len(ends)))
		}
	}
	return violations, maxConcurrent, unjudged
}
