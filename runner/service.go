package runner

import (
	"context"
	"time"
)

// roundTrips times BaselineSamples calls of one: a lock service's floor
// to compare acquires with, measured in this run.
func roundTrips(ctx context.Context, one func(context.Context) error) ([]time.Duration, error) {
	out := make([]time.Duration, 0, BaselineSamples)
	for range BaselineSamples {
		t := time.Now()
		if err := one(ctx); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t))
	}
	return out, nil
}

// callWindow counts a locker's calls over the measured window.
type callWindow struct {
	calls func() int64
	at    [2]int64 // as the window opened and closed
}

// mark is the worker loop's OnWindow around next (the window readings').
func (w *callWindow) mark(next func(bool)) func(bool) {
	return func(opened bool) {
		w.at[b2i(!opened)] = w.calls()
		next(opened)
	}
}

// perCycle is the window's calls per lock cycle (0 without cycles).
func (w *callWindow) perCycle(cycles int64) float64 {
	if cycles == 0 {
		return 0
	}
	return float64(w.at[1]-w.at[0]) / float64(cycles)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
