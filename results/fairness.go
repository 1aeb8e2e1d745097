package results

import "slices"

// Fairness is how evenly the workers of a cell got the lock: Jain's index
// over their acquisitions, (Σx)² / (n·Σx²), which is 1 when every worker
// acquired as often as the others and falls towards 1/n as one takes all.
type Fairness struct {
	JainIndex   float64 `json:"jain_index"`
	Workers     int     `json:"workers"`
	MinAcquired int64   `json:"min_acquired"`
	MaxAcquired int64   `json:"max_acquired"`
	// Idle are workers that acquired nothing in the window.
	Idle int `json:"idle_workers"`
}

// NewFairness is the fairness of acquisitions per worker; nil when no
// worker acquired anything (nothing to judge).
func NewFairness(acquired []int64) *Fairness {
	var sum, squares float64
	f := &Fairness{Workers: len(acquired)}
	for _, x := range acquired {
		sum += float64(x)
		squares += float64(x) * float64(x)
		if x == 0 {
			f.Idle++
		}
	}
	if sum == 0 {
		return nil
	}
	f.JainIndex = sum * sum / (float64(len(acquired)) * squares)
	f.MinAcquired, f.MaxAcquired = slices.Min(acquired), slices.Max(acquired)
	return f
}
