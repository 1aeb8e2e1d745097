package workloads

import (
	"testing"
	"time"

	"lockbench/lock"
	"lockbench/redislock/engine"
	"lockbench/results"
)

// A failed acquire is counted once, by why it failed: a SET that won with
// too few replicas' acknowledgements is few acks, neither contention nor
// an error.
func TestFailureOf(t *testing.T) {
	cases := []struct {
		res  lock.Result
		want results.AcquireFailure
	}{
		{lock.Result{PerMaster: []engine.Outcome{engine.FewAcks}}, results.LostUnconfirmed},
		{lock.Result{PerMaster: []engine.Outcome{engine.Taken}}, results.LostToContention},
		{lock.Result{PerMaster: []engine.Outcome{engine.Timeout}}, results.LostToError},
		{lock.Result{PerMaster: []engine.Outcome{engine.OK, engine.OK, engine.Error}, Successes: 2}, results.LostToContention}, // validity ran out
		{lock.Result{PerMaster: []engine.Outcome{engine.OK, engine.Error, engine.Timeout}, Successes: 1}, results.LostToError},
	}
	for i, tc := range cases {
		if got := FailureOf(tc.res); got != tc.want {
			t.Errorf("case %d %v: %v, want %v", i, tc.res.PerMaster, got, tc.want)
		}
	}
	if IsContention(cases[0].res) {
		t.Error("few acks counted as contention")
	}
	c := Counts{PerMaster: make([][engine.NumOutcomes]int64, 1)}
	c.failed(cases[0].res)
	c.failed(cases[1].res)
	c.failed(cases[2].res)
	if c.Unconfirmed != 1 || c.NotAcquired != 1 || c.Errors != 1 || c.Attempts() != 3 || c.PerMaster[0][engine.FewAcks] != 1 {
		t.Errorf("counts %+v", c)
	}
	st := &Stats{Folded: Folded{Counts: c}, Acquire: results.NewHistogram(), AcquireFailed: results.NewHistogram(), Release: results.NewHistogram()}
	r := st.Result(Replies{Addrs: []string{"m"}}, nil, time.Time{})
	if r.Outcomes.Unconfirmed != 1 || r.Outcomes.PerMaster["m"].Unconfirmed != 1 || r.Outcomes.PerMaster["m"].Sent() != 3 || results.SuccessRatio(r.Outcomes) != 0 {
		t.Errorf("result outcomes %+v", r.Outcomes)
	}
}
