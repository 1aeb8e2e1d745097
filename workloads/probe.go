package workloads

import (
	"sync"
	"sync/atomic"
	"time"
)

// Probe is the run's live mutual-exclusion check, judged on validity
// windows as the chaos checker judges its hold log: a holder counts from
// the start of its use until it stops using the lock or its validity ends,
// whichever is first. A hold that starts while another holder of the same
// key is inside its window is a violation. A hold whose validity had run
// out before its use began has no window: it is counted as not judged,
// never as safe. Only keys currently held take memory, so a 10M keyspace
// costs nothing up front.
type Probe struct {
	shards        [64]probeShard
	seq           atomic.Uint64
	judged        atomic.Int64
	notJudged     atomic.Int64
	violations    atomic.Int64
	maxConcurrent atomic.Int64
}

type probeShard struct {
	mu      sync.Mutex
	holders map[uint64][]probeHolder
	_       [48]byte // 64 bytes each: no two shards' mutexes share a cache line
}

type probeHolder struct {
	id    uint64
	until time.Time
}

// Hold is one use of a lock inside the probe, for Extend and Exit.
type Hold struct {
	key, id uint64
	// Judged: the hold had a validity window when its use began.
	Judged bool
	// Clear: no other holder of the key was inside its window.
	Clear bool
}

// Enter marks the start of a use of key whose lock is valid until until.
func (p *Probe) Enter(key uint64, until time.Time) Hold {
	now := time.Now()
	h := Hold{key: key, id: p.seq.Add(1)}
	if !until.After(now) {
		p.notJudged.Add(1)
		return h
	}
	h.Judged = true
	p.judged.Add(1)
	s := p.shard(key)
	s.mu.Lock()
	if s.holders == nil {
		s.holders = map[uint64][]probeHolder{}
	}
	live := s.holders[key][:0]
	for _, o := range s.holders[key] {
		if o.until.After(now) {
			live = append(live, o)
		}
	}
	h.Clear = len(live) == 0
	live = append(live, probeHolder{id: h.id, until: until})
	s.holders[key] = live
	n := int64(len(live))
	s.mu.Unlock()
	if !h.Clear {
		p.violations.Add(1)
	}
	for {
		m := p.maxConcurrent.Load()
		if n <= m || p.maxConcurrent.CompareAndSwap(m, n) {
			break
		}
	}
	return h
}

// Extend moves a judged hold's window end (the lock was extended).
func (p *Probe) Extend(h Hold, until time.Time) {
	if !h.Judged {
		return
	}
	s := p.shard(h.key)
	s.mu.Lock()
	for i, o := range s.holders[h.key] {
		if o.id == h.id {
			s.holders[h.key][i].until = until
		}
	}
	s.mu.Unlock()
}

// Exit marks the end of the use; call it before the release is sent.
func (p *Probe) Exit(h Hold) {
	if !h.Judged {
		return
	}
	s := p.shard(h.key)
	s.mu.Lock()
	hs := s.holders[h.key]
	for i, o := range hs {
		if o.id == h.id {
			hs = append(hs[:i], hs[i+1:]...)
			break
		}
	}
	if len(hs) == 0 {
		delete(s.holders, h.key)
	} else {
		s.holders[h.key] = hs
	}
	s.mu.Unlock()
}

func (p *Probe) shard(key uint64) *probeShard { return &p.shards[key%uint64(len(p.shards))] }

// Violations counts holds that began inside another hold's window.
func (p *Probe) Violations() int64 { return p.violations.Load() }

// MaxConcurrent is the most holders of one key seen inside their windows at once.
func (p *Probe) MaxConcurrent() int64 { return p.maxConcurrent.Load() }

// Judged counts holds judged on a validity window.
func (p *Probe) Judged() int64 { return p.judged.Load() }

// NotJudged counts holds whose validity ran out before their use began.
func (p *Probe) NotJudged() int64 { return p.notJudged.Load() }
