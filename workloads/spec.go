package workloads

import (
	"slices"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"lockbench/results"
)

// Spec is a worker loop's terms as plan resolved them for a cell, in a
// form that crosses to a client process (RunConfig holds interfaces and
// funcs): every client of a cell builds its loop from it, so none derives
// the cell's load a second way.
type Spec struct {
	Workers     int           `json:"workers"`
	Rate        float64       `json:"rate,omitempty"` // open loop; 0 = closed loop
	Duration    time.Duration `json:"duration"`
	Warmup      time.Duration `json:"warmup,omitempty"`
	Keys        ChooserConfig `json:"keys"`
	KeyOffset   uint64        `json:"key_offset,omitempty"`
	HoldDist    string        `json:"hold_distribution,omitempty"`
	Hold        time.Duration `json:"hold"`
	LongHold    time.Duration `json:"long_hold,omitempty"` // worker 0's hold in a fault cell's cycle (0: as the others)
	TTL         time.Duration `json:"ttl"`
	AutoExtend  bool          `json:"auto_extend,omitempty"`
	CallersWait bool          `json:"callers_wait,omitempty"`
	// Quota is the cell's acquisitions over all its clients (Share splits
	// it); Calls is per worker. 0: none.
	Quota int64 `json:"quota,omitempty"`
	Calls int   `json:"calls,omitempty"`
}

// RunConfig is the loop the spec describes; the caller adds the key
// prefix, seed, logs, observers and cycle.
func (s Spec) RunConfig() (RunConfig, error) {
	ch, err := NewChooser(s.Keys)
	if err != nil {
		return RunConfig{}, err
	}
	h, err := NewHoldTime(s.HoldDist, s.Hold)
	if err != nil {
		return RunConfig{}, err
	}
	return RunConfig{Workers: s.Workers, Rate: s.Rate, Duration: s.Duration, Warmup: s.Warmup,
		Keys: Keys{Count: s.Keys.Keys, Offset: s.KeyOffset}, Chooser: ch, Hold: h, TTL: s.TTL, AutoExtend: s.AutoExtend,
		CallersWait: s.CallersWait, Quota: s.Quota, Calls: s.Calls}, nil
}

// Share is client i's part of a cell run by n clients: the quota split
// (rounded up, so that the cell reaches it), the rest as it is.
func (s Spec) Share(n int) Spec {
	if s.Quota > 0 && n > 1 {
		s.Quota = (s.Quota + int64(n) - 1) / int64(n)
	}
	return s
}

// Sum adds the stats of a cell's clients into the cell's: counts and
// histograms added, workers numbered on from client to client, the window
// from the first start to the last end. One part is returned as it is.
// What clients of one process share (its CPU, its probe) is the caller's
// to count once.
func Sum(parts []*Stats) *Stats {
	if len(parts) == 1 {
		return parts[0]
	}
	out := &Stats{}
	var end time.Time
	for i, p := range parts {
		if i == 0 || p.WindowStart.Before(out.WindowStart) {
			out.WindowStart = p.WindowStart
		}
		if e := p.WindowStart.Add(p.Measured); e.After(end) {
			end = e
		}
		out.add(p)
	}
	out.Measured = end.Sub(out.WindowStart)
	// Each client times only its own holders' handoffs: a gap one saw may
	// hold another client's whole hold.
	out.HandoffGap = nil
	return out
}

// add folds one client's stats into s (the window is Sum's).
func (s *Stats) add(p *Stats) {
	s.Counts.Add(&p.Counts)
	for _, h := range []struct{ to, from **hdrhistogram.Histogram }{
		{&s.Acquire, &p.Acquire}, {&s.AcquireUncorrected, &p.AcquireUncorrected}, {&s.AcquireFailed, &p.AcquireFailed},
		{&s.Release, &p.Release}, {&s.PacerLag, &p.PacerLag}, {&s.TimeToLock, &p.TimeToLock}, {&s.GaveUpWait, &p.GaveUpWait},
	} {
		*h.to = addHistogram(*h.to, *h.from)
	}
	s.Rate += p.Rate
	s.Offered, s.Unserved, s.UnservedLate = s.Offered+p.Offered, s.Unserved+p.Unserved, s.UnservedLate || p.UnservedLate
	s.JudgedHolds, s.HoldsNotJudged = s.JudgedHolds+p.JudgedHolds, s.HoldsNotJudged+p.HoldsNotJudged
	s.MaxConcurrent = max(s.MaxConcurrent, p.MaxConcurrent)
	s.CPU += p.CPU
	s.AdapterPid = max(s.AdapterPid, p.AdapterPid)
	s.AdapterCPU = AddCPU(s.AdapterCPU, p.AdapterCPU)
	s.RSSStart, s.RSSEnd = max(s.RSSStart, p.RSSStart), max(s.RSSEnd, p.RSSEnd)
	s.Interrupted = s.Interrupted || p.Interrupted
	for _, w := range p.WorkerWaits {
		w.Worker += len(s.PerWorker)
		s.WorkerWaits = append(s.WorkerWaits, w)
	}
	s.PerWorker = append(s.PerWorker, p.PerWorker...)
	s.HotKeys = addKeyUses(s.HotKeys, p.HotKeys)
	if s.KeysFollowed == "" {
		s.KeysFollowed = p.KeysFollowed
	}
	s.Commands = results.AddCommands(s.Commands, p.Commands)
	for _, k := range p.SharedKinds {
		if !slices.Contains(s.SharedKinds, k) {
			s.SharedKinds = append(s.SharedKinds, k)
		}
	}
	s.Wakeups = results.AddWakeups(s.Wakeups, p.Wakeups)
}

// addHistogram is a + b (nil: not recorded), without changing either.
func addHistogram(a, b *hdrhistogram.Histogram) *hdrhistogram.Histogram {
	switch {
	case b == nil:
		return a
	case a == nil:
		a = hdrhistogram.New(b.LowestTrackableValue(), b.HighestTrackableValue(), int(b.SignificantFigures()))
	}
	a.Merge(b)
	return a
}

// addKeyUses adds two lists of the hottest keys, hottest first.
func addKeyUses(a, b []results.KeyUse) []results.KeyUse {
	if len(b) == 0 {
		return a
	}
	out := slices.Clone(a)
	for _, k := range b {
		if i := slices.IndexFunc(out, func(o results.KeyUse) bool { return o.Key == k.Key }); i >= 0 {
			// Every client's window is the cell's: held shares add up.
			out[i].Acquired, out[i].HeldSeconds, out[i].Utilisation = out[i].Acquired+k.Acquired, out[i].HeldSeconds+k.HeldSeconds, out[i].Utilisation+k.Utilisation
			continue
		}
		out = append(out, k)
	}
	slices.SortStableFunc(out, func(x, y results.KeyUse) int { return int(y.Acquired - x.Acquired) })
	return out
}

// AddCPU is a + b, CPU readings of which -1 is not read (and so is the sum).
func AddCPU(a, b time.Duration) time.Duration {
	if a < 0 || b < 0 {
		return -1
	}
	return a + b
}
