package workloads

import (
	"sync"
	"sync/atomic"
)

// Probe tracks who holds which key while the load runs, like the seed's
// LockProbe: a hold that starts while another holder of the same key is
// inside is a mutual-exclusion violation. Only keys currently held take
// memory, so a 10M keyspace costs nothing up front.
type Probe struct {
	shards        [64]probeShard
	violations    atomic.Int64
	maxConcurrent atomic.Int64
}

type probeShard struct {
	mu      sync.Mutex
	holders map[uint64]int64
}

// Enter marks a holder of key; it returns false when someone else is inside.
func (p *Probe) Enter(key uint64) bool {
	s := &p.shards[key%uint64(len(p.shards))]
	s.mu.Lock()
	if s.holders == nil {
		s.holders = make(map[uint64]int64)
	}
	s.holders[key]++
	n := s.holders[key]
	s.mu.Unlock()
	for {
		m := p.maxConcurrent.Load()
		if n <= m || p.maxConcurrent.CompareAndSwap(m, n) {
			break
		}
	}
	if n > 1 {
		p.violations.Add(1)
		return false
	}
	return true
}

// Exit marks the end of a hold; call it before the release is sent.
func (p *Probe) Exit(key uint64) {
	s := &p.shards[key%uint64(len(p.shards))]
	s.mu.Lock()
	if s.holders[key]--; s.holders[key] <= 0 {
		delete(s.holders, key)
	}
	s.mu.Unlock()
}

// Violations counts holds that overlapped another hold of the same key.
func (p *Probe) Violations() int64 { return p.violations.Load() }

// MaxConcurrent is the most holders of one key seen at once.
func (p *Probe) MaxConcurrent() int64 { return p.maxConcurrent.Load() }
