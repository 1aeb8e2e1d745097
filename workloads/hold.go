package workloads

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// HoldTime draws how long a worker keeps a lock.
type HoldTime interface {
	Next(r *rand.Rand) time.Duration
	Mean() time.Duration
}

// FixedHold always holds for D.
type FixedHold struct{ D time.Duration }

func (f FixedHold) Next(*rand.Rand) time.Duration { return f.D }
func (f FixedHold) Mean() time.Duration           { return f.D }

// UniformHold holds for a uniform time in [0, 2·mean].
type UniformHold struct{ M time.Duration }

func (u UniformHold) Next(r *rand.Rand) time.Duration {
	if u.M <= 0 {
		return 0
	}
	return time.Duration(r.Int64N(int64(2*u.M) + 1))
}
func (u UniformHold) Mean() time.Duration { return u.M }

// ExpHold holds for an exponentially distributed time with mean M (a
// memoryless critical section: mostly short, sometimes long).
type ExpHold struct{ M time.Duration }

func (e ExpHold) Next(r *rand.Rand) time.Duration {
	return time.Duration(r.ExpFloat64() * float64(e.M))
}
func (e ExpHold) Mean() time.Duration { return e.M }

// NewHoldTime builds a hold-time distribution by name with the given mean.
func NewHoldTime(dist string, mean time.Duration) (HoldTime, error) {
	if mean < 0 {
		return nil, fmt.Errorf("hold: %v is not accepted; use 0 or a positive duration", mean)
	}
	switch dist {
	case "", "fixed":
		return FixedHold{D: mean}, nil
	case "uniform":
		return UniformHold{M: mean}, nil
	case "exponential", "exp":
		return ExpHold{M: mean}, nil
	}
	return nil, fmt.Errorf("hold-distribution: %q is not accepted; use fixed, uniform or exponential", dist)
}
