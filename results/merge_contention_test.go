package results

import (
	"math"
	"testing"
)

// Merged segments keep what waiting callers saw: Jain's index over every
// segment's workers (exactly what the workers' counts give together),
// gave-ups and starved workers added, attempts per lock weighted by the
// locks each segment took.
func TestMergeKeepsContentionAndFairness(t *testing.T) {
	a, b := []int64{10, 12, 9}, []int64{30, 2}
	run := func(acq []int64, attempts float64, gaveUp int64) Run {
		var sum int64
		for _, x := range acq {
			sum += x
		}
		return Run{Outcomes: Outcomes{Tally: Tally{Acquired: sum}}, Fairness: NewFairness(acq),
			Contention: &Contention{AttemptsPerLock: attempts, GaveUp: gaveUp, Starved: 1, TimeToLock: Latency{Count: sum, Max: float64(sum)}}}
	}
	m := MergeRuns([]Run{run(a, 1, 2), run(b, 3, 5)}, []string{"s1", "s2"})
	want := NewFairness(append(append([]int64{}, a...), b...))
	if m.Fairness == nil || math.Abs(m.Fairness.JainIndex-want.JainIndex) > 1e-12 || m.Fairness.Workers != 5 ||
		m.Fairness.MinAcquired != 2 || m.Fairness.MaxAcquired != 30 {
		t.Fatalf("fairness %+v, want %+v", m.Fairness, want)
	}
	c := m.Contention
	wantAttempts := (1*31 + 3*32) / 63.0
	if c == nil || c.GaveUp != 7 || c.Starved != 2 || math.Abs(c.AttemptsPerLock-wantAttempts) > 1e-12 || c.TimeToLock.Count != 63 {
		t.Fatalf("contention %+v, want gave up 7, starved 2, attempts/lock %.4f, 63 times to lock", c, wantAttempts)
	}
	// A segment without contention figures (an older result): none merged.
	old := run(b, 3, 5)
	old.Contention, old.Fairness = nil, nil
	if m := MergeRuns([]Run{run(a, 1, 2), old}, []string{"s1", "s2"}); m.Contention != nil || m.Fairness != nil {
		t.Fatalf("merged with a segment that has none: %+v %+v", m.Contention, m.Fairness)
	}
}
