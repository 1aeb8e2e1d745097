package results

import (
	"math"
	"testing"
)

// Jain's index: 1 for equal counts, falling as one worker is starved,
// 1/n when one takes all; nothing to judge without acquisitions.
func TestJainIndex(t *testing.T) {
	for _, tc := range []struct {
		counts []int64
		want   float64
		idle   int
	}{
		{[]int64{10, 10, 10, 10}, 1, 0},
		{[]int64{10, 10, 10, 0}, 0.75, 1},
		{[]int64{40, 0, 0, 0}, 0.25, 3},
		{[]int64{12, 10, 8, 10}, 1600.0 / (4 * 408), 0},
	} {
		f := NewFairness(tc.counts)
		if f == nil || math.Abs(f.JainIndex-tc.want) > 1e-9 || f.Idle != tc.idle || f.Workers != len(tc.counts) {
			t.Errorf("%v: %+v, want index %v, %d idle", tc.counts, f, tc.want, tc.idle)
		}
	}
	if f := NewFairness([]int64{0, 0}); f != nil {
		t.Errorf("no acquisitions judged: %+v", f)
	}
}
