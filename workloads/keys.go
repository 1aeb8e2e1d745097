package workloads

import (
	"fmt"
	"math/rand/v2"
	"strconv"
)

// Keys names the keyspace of a run: K keys under a prefix, built on demand.
type Keys struct {
	Prefix string
	Count  uint64
}

// Name is the Redis key of index i.
func (k Keys) Name(i uint64) string {
	return k.Prefix + strconv.FormatUint(i, 10)
}

// KeyChooser picks the next key index for a worker.
type KeyChooser interface {
	Next(r *rand.Rand) uint64
}

// Uniform picks every key with the same probability.
type Uniform struct{ N uint64 }

func (u Uniform) Next(r *rand.Rand) uint64 { return r.Uint64N(u.N) }

// NewChooser builds a chooser by distribution name.
func NewChooser(dist string, n uint64) (KeyChooser, error) {
	if n < 1 {
		return nil, fmt.Errorf("keys: %d is not accepted; use at least 1", n)
	}
	switch dist {
	case "", "uniform":
		return Uniform{N: n}, nil
	}
	return nil, fmt.Errorf("distribution: %q is not accepted; use uniform", dist)
}
