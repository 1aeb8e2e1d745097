package plan

import (
	"fmt"
	"time"

	"lockbench/engine"
	"lockbench/results"
	"lockbench/workloads"
)

// Resolved is everything the runner takes from a cell's settings, derived
// once when the cell is made: nothing downstream derives it again.
type Resolved struct {
	// Engine is the lock client's configuration (masters not set: the
	// runner knows them once the servers are up). A fault cell's has no
	// retries (a fault scenario does not take the setting, and its
	// defaults have none): its client loop retries itself, so every
	// attempt counts.
	Engine engine.Config
	// Load is the worker loop's configuration for this segment's share of
	// the load; the runner sets the key prefix, seed, logs and observers.
	Load workloads.RunConfig
	// Recorded are the settings a result shows (this segment's share,
	// secrets redacted; a fault cell's workers are the total over its
	// clients); the runner fills in masters, seed and key prefix.
	Recorded results.Settings
}

// resolve derives the cell's Resolved.
func (c Cell) resolve() (Resolved, error) {
	s := c.Settings
	var r Resolved
	var err error
	if r.Engine, err = s.EngineConfig(); err != nil {
		return r, err
	}
	r.Engine.Masters, r.Engine.SentinelAddrs = nil, nil
	seg, offset, err := s.ForSegment()
	if err != nil {
		return r, err
	}
	if r.Load, err = seg.loadConfig(offset); err != nil {
		return r, err
	}
	r.Recorded = results.Settings(seg.Redacted())
	r.Recorded.Persistence = orNone(s.Persistence, len(s.Masters) == 0 && !s.ExternalSentinels())
	s.recordTopology(&r.Recorded)
	if c.Faulty {
		r.Recorded.Workers = s.Workers * s.Clients
	} else {
		r.Recorded.Clients, r.Recorded.ClientMode = 1, "goroutines"
	}
	return r, nil
}

// loadConfig is the worker loop's part of a segment's settings.
func (s Settings) loadConfig(offset uint64) (workloads.RunConfig, error) {
	ch, err := s.Chooser()
	if err != nil {
		return workloads.RunConfig{}, err
	}
	h, err := workloads.NewHoldTime(s.HoldDist, time.Duration(s.Hold))
	if err != nil {
		return workloads.RunConfig{}, err
	}
	rc := workloads.RunConfig{
		Workers: s.Workers, Duration: time.Duration(s.Duration), Warmup: time.Duration(s.Warmup),
		Keys: workloads.Keys{Count: s.Keys, Offset: offset}, Chooser: ch, Hold: h,
		TTL: time.Duration(s.TTL), AutoExtend: s.AutoExtend,
		// With a wait time the caller gives up when it runs out.
		GiveUp: s.WaitTime > 0,
	}
	if s.Load == "open" {
		rc.Rate = s.Rate
	}
	return rc, nil
}

// orNone is the persistence a result shows: local masters without a mode
// run with none; external ones keep the server's own ("").
func orNone(p string, local bool) string {
	if p == "" && local {
		return "none"
	}
	return p
}

// Validate checks the cell's settings and, in a fault cell, its faults
// against them.
func (c Cell) Validate() error {
	if !c.Faulty {
		_, err := c.Settings.validate(c.Load.Chooser != nil)
		return err
	}
	if err := c.Settings.validateFaulty(); err != nil {
		return err
	}
	return c.checkFaultTargets()
}

// checkFaultTargets: every fault within the cell's time and its targets.
func (c Cell) checkFaultTargets() error {
	s := c.Settings
	d := time.Duration(s.Duration)
	for j, f := range c.Faults {
		where := fmt.Sprintf("faults[%d]", j)
		if f.At >= d {
			return fmt.Errorf("%s.at: %v is not accepted; use a time before the end of the cell (duration %v)", where, f.At, d)
		}
		for _, m := range f.Masters {
			if m < 0 || m >= s.Local {
				return fmt.Errorf("%s.master_index: %d is not accepted; use 0..%d (%d local masters)", where, m, s.Local-1, s.Local)
			}
		}
		for _, cl := range f.Clients {
			if cl < 0 || cl >= s.Clients {
				return fmt.Errorf("%s.client_index: %d is not accepted; use 0..%d (%d clients)", where, cl, s.Clients-1, s.Clients)
			}
		}
	}
	return nil
}

// Warnings are the cell's settings that work but are probably a mistake.
func (c Cell) Warnings() []string {
	if c.Faulty {
		return c.Settings.faultWarnings()
	}
	return c.Settings.warnings()
}

// NeedsNetwork reports whether the cell has network faults (its clients
// then reach the masters through proxies).
func (c Cell) NeedsNetwork() bool {
	for _, f := range c.Faults {
		if f.Kind == results.FaultPartition || f.Kind == results.FaultLatency || f.Kind == results.FaultReset {
			return true
		}
	}
	return false
}

// ClockMasters are the masters that run under a fake clock.
func (c Cell) ClockMasters() map[int]bool {
	out := map[int]bool{}
	for _, f := range c.Faults {
		if f.Kind == results.FaultClockJump {
			for _, m := range f.Masters {
				out[m] = true
			}
		}
	}
	return out
}
