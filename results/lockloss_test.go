package results

import (
	"strings"
	"testing"
	"time"
)

// Each loss is matched to its session's end by id; the lags are learnt −
// ended; one the servers did not show is counted, not measured.
func TestLockLoss(t *testing.T) {
	t0 := time.Unix(100, 0)
	losses := []SessionLoss{{ID: "a", LearnedAt: t0.Add(2 * time.Second).UnixNano()},
		{ID: "b", LearnedAt: t0.Add(500 * time.Millisecond).UnixNano()}, {ID: "c", LearnedAt: t0.UnixNano()}}
	ll := NewLockLoss(losses, map[string]time.Time{"a": t0, "b": t0}, "test")
	if ll.Sessions != 3 || ll.Matched != 2 || ll.P50 != 1.25 || ll.Max != 2 {
		t.Fatalf("%+v", ll)
	}
	if !strings.Contains(ll.Text(), "p50 +1.250 s, max +2.000 s") {
		t.Error(ll.Text())
	}
	none := NewLockLoss(losses[2:], map[string]time.Time{"a": t0}, "test")
	if none.Matched != 0 || !strings.Contains(none.Text(), "not measured") {
		t.Errorf("%+v %s", none, none.Text())
	}
	if NewLockLoss(nil, nil, "test") != nil {
		t.Error("no loss: no figure")
	}
}
