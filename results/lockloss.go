package results

import (
	"fmt"
	"slices"
	"time"
)

// SessionLoss is a lock session the service ended under its client (an
// etcd lease, a ZooKeeper session), as the client learnt it.
type SessionLoss struct {
	// ID is the session's own id as the server names it (an etcd lease, a
	// ZooKeeper session: hex).
	ID        string `json:"id"`
	LearnedAt int64  `json:"learned_unix_ns"` // when the client learnt (Session.Done, StateExpired)
}

// LockLoss is a fault cell's lock-loss lag: from the server ending a
// session (and the locks it held) to its client learning it; until then
// the client may act as a holder of a lock the server gave away.
type LockLoss struct {
	Sessions int `json:"sessions"` // lost, as the clients learnt
	// Matched are those whose end the server showed (Source); the lags are
	// theirs, in seconds.
	Matched int     `json:"matched"`
	P50     float64 `json:"lag_p50_s"`
	Max     float64 `json:"lag_max_s"`
	Source  string  `json:"source"` // how the server's end was seen
}

// NewLockLoss matches each loss to the server's end of its session (ends
// by ID; one missing: not matched).
func NewLockLoss(losses []SessionLoss, ends map[string]time.Time, source string) *LockLoss {
	if len(losses) == 0 {
		return nil
	}
	ll := &LockLoss{Sessions: len(losses), Source: source}
	var lags []float64
	for _, l := range losses {
		if end, ok := ends[l.ID]; ok {
			lags = append(lags, time.Unix(0, l.LearnedAt).Sub(end).Seconds())
		}
	}
	slices.Sort(lags)
	if ll.Matched = len(lags); ll.Matched > 0 {
		ll.P50, ll.Max = median(lags), lags[len(lags)-1]
	}
	return ll
}

// Text is the figure in one line.
func (ll *LockLoss) Text() string {
	if ll.Matched == 0 {
		return fmt.Sprintf("lock-loss lag: %d sessions lost, none of their ends seen on the servers (%s): not measured", ll.Sessions, ll.Source)
	}
	t := fmt.Sprintf("lock-loss lag: %d sessions lost (%d seen ending on the servers), server ended → client learnt p50 %+.3f s, max %+.3f s",
		ll.Sessions, ll.Matched, ll.P50, ll.Max)
	if ll.P50 < 0 || ll.Max < 0 {
		t += " (negative: the client gave its session up before the server ended it)"
	}
	return t + " (" + ll.Source + ")"
}
