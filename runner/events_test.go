package runner

import (
	"testing"
	"time"

	"lockbench/check"
	"lockbench/faults"
	"lockbench/plan"
	"lockbench/results"
)

// What broke is laid to the event whose window holds its moment (what
// broke before the first event to the first); a fault that takes no lock
// opens no event; events are judged when they exercised a hold, or met
// one in a cell expecting none handed on.
func TestFaultEventsWindows(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	ns := func(s float64) int64 { return at(s).UnixNano() }
	ms := []met{
		{exercised: -1, at: at(0.5)}, // a lag: no event
		{exercised: 2, held: 2, at: at(7)},
		{exercised: 1, held: 1, at: at(1)}, // the faults' order need not be time's
		{exercised: 0, held: 1, at: at(13)},
	}
	ck := check.Findings{ViolationStarts: []int64{ns(0.2), ns(3), ns(7.5), ns(8)}, InPromiseStarts: []int64{ns(8)}}
	ck.Writes.LostAt, ck.Writes.StaleAt = []int64{ns(14)}, []int64{0}
	evs := faultEvents(ms, ck, t0, false)
	type got struct {
		fault     int
		at        float64
		judged    bool
		ov, ip, l int64
	}
	// The last event exercised nothing, but a write was lost in its window:
	// judged (broken), never hidden as not exercised.
	want := []got{{2, 1, true, 2, 0, 1}, {1, 7, true, 2, 1, 0}, {3, 13, true, 0, 0, 1}}
	if len(evs) != len(want) {
		t.Fatalf("events %+v, want %d", evs, len(want))
	}
	for i, e := range evs {
		if g := (got{e.Fault, e.AtS, e.Judged, e.Violations, e.InPromise, e.DataLost}); g != want[i] {
			t.Errorf("event %d: %+v, want %+v", i, g, want[i])
		}
	}
	ck.Writes.LostAt = nil
	if evs := faultEvents(ms, ck, t0, false); evs[2].Judged {
		t.Errorf("an event that exercised nothing and broke nothing is judged")
	}
	if evs := faultEvents(ms, ck, t0, true); !evs[2].Judged {
		t.Errorf("a met hold in a cell expecting none handed on is not judged")
	}
	if evs := faultEvents([]met{{exercised: -1}}, ck, t0, false); evs != nil {
		t.Errorf("no lock-taking fault: events %+v", evs)
	}
}

// In a history of several events, a crash that met no lock key is one
// event not judged, not a cell that judged nothing; alone, it still is.
func TestEventNotJudgedLeavesTheOthers(t *testing.T) {
	empty := []faults.Event{{Kind: "crash", Target: "master 0", HeldKeys: 0}}
	r := &CellResult{}
	r.Run.Safety.FaultEvents = []results.FaultEvent{{Judged: true, Exercised: 1}, {Judged: false}}
	if why := notJudged(plan.Cell{}, r, check.Findings{}, nil, empty); len(why) != 0 {
		t.Errorf("two events, one judged: not judged %v", why)
	}
	r.Run.Safety.FaultEvents = r.Run.Safety.FaultEvents[1:]
	if why := notJudged(plan.Cell{}, r, check.Findings{}, nil, empty); len(why) != 1 {
		t.Errorf("one event that met no key: not judged %v, want its reason", why)
	}
}
