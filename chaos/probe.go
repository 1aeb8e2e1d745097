package chaos

import (
	"sync"
	"sync/atomic"
	"time"
)

// windowProbe is the live mutual-exclusion check inside one process, judged
// like the hold log on validity windows: a holder counts until it stops
// using the lock or its validity ends, whichever is first, so a holder
// stalled past its validity (a paused client) is not an overlap, while two
// holders inside their windows are. (workloads.Probe counts holders until
// they leave, which a stalled holder does late.)
type windowProbe struct {
	shards        [64]probeShard
	seq           atomic.Uint64
	violations    atomic.Int64
	maxConcurrent atomic.Int64
	// onViolation, when set, hears of each overlap as it happens (live
	// metrics); set before the clients start.
	onViolation func()
}

type probeShard struct {
	mu      sync.Mutex
	holders map[uint64][]probeHold
}

type probeHold struct {
	id    uint64
	until time.Time
}

// enter marks a holder of key valid until until; it returns a handle for exit.
func (p *windowProbe) enter(key uint64, until time.Time) uint64 {
	now := time.Now()
	id := p.seq.Add(1)
	if !until.After(now) {
		return id // stalled past its validity before it could use the lock: no window to judge
	}
	s := &p.shards[key%uint64(len(p.shards))]
	s.mu.Lock()
	if s.holders == nil {
		s.holders = map[uint64][]probeHold{}
	}
	live := s.holders[key][:0]
	for _, h := range s.holders[key] {
		if h.until.After(now) {
			live = append(live, h)
		}
	}
	if len(live) > 0 {
		p.violations.Add(1)
		if p.onViolation != nil {
			p.onViolation()
		}
	}
	live = append(live, probeHold{id: id, until: until})
	s.holders[key] = live
	n := int64(len(live))
	s.mu.Unlock()
	for {
		m := p.maxConcurrent.Load()
		if n <= m || p.maxConcurrent.CompareAndSwap(m, n) {
			break
		}
	}
	return id
}

// exit ends a hold early (the holder stopped using the lock).
func (p *windowProbe) exit(key, id uint64) {
	s := &p.shards[key%uint64(len(p.shards))]
	s.mu.Lock()
	hs := s.holders[key]
	for i, h := range hs {
		if h.id == id {
			hs = append(hs[:i], hs[i+1:]...)
			break
		}
	}
	if len(hs) == 0 {
		delete(s.holders, key)
	} else {
		s.holders[key] = hs
	}
	s.mu.Unlock()
}
