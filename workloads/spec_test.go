package workloads

import (
	"encoding/json"
	"testing"
	"time"

	"lockbench/results"
)

// A cell's loop crosses to a client process as its Spec and comes back
// the same loop; a quota is split so that the clients together reach it.
func TestSpecCrossesToAClientUnchanged(t *testing.T) {
	sp := Spec{Workers: 4, Duration: 2 * time.Second, Warmup: time.Second, Keys: ChooserConfig{Distribution: "zipf", Keys: 100, ZipfExponent: 0.9},
		KeyOffset: 50, HoldDist: "exponential", Hold: 3 * time.Millisecond, TTL: time.Second, CallersWait: true, Quota: 101, Calls: 7}
	b, err := json.Marshal(sp)
	if err != nil {
		t.Fatal(err)
	}
	var back Spec
	if err := json.Unmarshal(b, &back); err != nil || back != sp {
		t.Fatalf("round trip: %+v, %v; want %+v", back, err, sp)
	}
	rc, err := back.Share(2).RunConfig()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rc.Chooser.(*Zipf); !ok || rc.Hold.Mean() != 3*time.Millisecond || rc.Keys.Offset != 50 || rc.Quota != 51 || rc.Calls != 7 || !rc.CallersWait {
		t.Errorf("loop %+v; want zipf keys from 50, exponential holds of 3ms, quota 51 of 101, 7 calls, callers waiting", rc)
	}
	if _, err := (Spec{Workers: 1, Keys: ChooserConfig{Keys: 0}}).RunConfig(); err == nil {
		t.Error("a spec of 0 keys made a loop")
	}
}

// The clients' stats add up into the cell's: counts and histograms added,
// workers numbered on, the window from the first start to the last end;
// a handoff gap only one client could time is not kept.
func TestSumAddsClients(t *testing.T) {
	t0 := time.Now()
	part := func(acq int64, start, d time.Duration, worker int) *Stats {
		h := results.NewHistogram()
		for range acq {
			_ = h.RecordValue(100)
		}
		return &Stats{Folded: Folded{Counts: Counts{Tally: results.Tally{Acquired: acq}, Violations: 1}, WindowStart: t0.Add(start), Measured: d,
			PerWorker: []int64{acq}, WorkerWaits: []results.WorkerWait{{Worker: worker}}, Commands: &results.Commands{}}, Acquire: h, TimeToLock: h, HandoffGap: h}
	}
	a, b := part(3, 0, time.Second, 0), part(5, 500*time.Millisecond, time.Second, 0)
	if one := Sum([]*Stats{a}); one != a {
		t.Error("one client's stats are not the cell's as they are")
	}
	s := Sum([]*Stats{a, b})
	switch {
	case s.Acquired != 8 || s.Violations != 2 || s.Acquire.TotalCount() != 8 || s.TimeToLock.TotalCount() != 8:
		t.Errorf("counts %+v, acquire %d; want 8 acquired, 2 violations, 8 in each histogram", s.Counts, s.Acquire.TotalCount())
	case s.HandoffGap != nil:
		t.Error("a handoff gap of several clients was kept")
	case s.Measured != 1500*time.Millisecond || !s.WindowStart.Equal(t0):
		t.Errorf("window %v from %v; want 1.5s from the first start", s.Measured, s.WindowStart.Sub(t0))
	case len(s.PerWorker) != 2 || s.WorkerWaits[1].Worker != 1 || s.Commands == nil:
		t.Errorf("workers %v, waits %+v; want the second client's worker numbered 1", s.PerWorker, s.WorkerWaits)
	case a.Acquire.TotalCount() != 3:
		t.Error("the sum changed a client's histogram")
	}
	if s.Release != nil { // none recorded: nil stays nil
		t.Error("a histogram no client recorded appeared")
	}
}
