package plan

import (
	"fmt"
	"slices"
	"time"

	"lockbench/internal/tlsfiles"
	"lockbench/lock"
	"lockbench/results"
	"lockbench/workloads"
)

// Resolved is everything the runner takes from a cell's settings, derived
// once when the cell is made: nothing downstream derives it again.
type Resolved struct {
	// Terms are the lock client's terms any service's client takes (a
	// service reads its own client settings from Settings). A fault
	// cell's retry policy has no retries (a fault scenario does not take
	// the setting, and its defaults have none): its client loop retries
	// itself, so every attempt counts.
	Terms ClientTerms
	// Spec is the worker loop's terms for this segment's share of the
	// load, as every client of the cell takes them; Load is the loop they
	// make (the runner sets the key prefix, seed, logs and observers).
	Spec workloads.Spec
	Load workloads.RunConfig
	// Recorded are the settings a result shows (this segment's share,
	// secrets redacted; a fault cell's workers are the total over its
	// clients); the runner fills in masters, seed and key prefix.
	Recorded results.Settings
}

// ClientTerms are what any lock service's client takes from a cell's
// settings, resolved once.
type ClientTerms struct {
	// TTL is the lock's lease (a session's, for a service that keeps its
	// lock alive by a session); Timeout a call's per-server timeout and
	// DriftFactor the clock drift allowed, as a share of the TTL (a lock
	// of fixed TTL's validity).
	TTL         time.Duration
	Timeout     time.Duration
	DriftFactor float64
	// Retry is how a caller tries again after a failed acquire (its wait
	// strategy, retries or wait time, delays).
	Retry lock.RetryPolicy
	// TLS are the client's files for TLS servers.
	TLS tlsfiles.Files
	// Watchdog renews every held lock in the background while its holder
	// lives (a client that has one).
	Watchdog bool
}

// clientTerms are the settings' ClientTerms; an error when the TLS files
// do not load.
func (s Settings) clientTerms() (ClientTerms, error) {
	t := ClientTerms{TTL: time.Duration(s.TTL), Timeout: time.Duration(s.Timeout), DriftFactor: s.DriftFactor,
		Retry: lock.RetryPolicy{Retries: s.Retries, Min: time.Duration(s.RetryMin), Max: time.Duration(s.RetryMax),
			Strategy: s.WaitStrategy, Base: time.Duration(s.BackoffBase), Cap: time.Duration(s.BackoffCap),
			WaitTime: time.Duration(s.WaitTime), NotifyTimeout: time.Duration(s.NotifyTimeout)},
		TLS:      tlsfiles.Files{CA: s.TLSCA, Cert: s.TLSCert, Key: s.TLSKey, Insecure: s.TLSInsecure},
		Watchdog: s.Watchdog}
	if s.NotifyTimeout == 0 {
		t.Retry.NotifyTimeout = t.TTL // unset: the lease, as Redisson
	}
	if !t.TLS.Empty() {
		if _, err := t.TLS.Config(""); err != nil {
			return t, err
		}
	}
	return t, nil
}

// resolve derives the cell's Resolved.
func (c Cell) resolve() (Resolved, error) {
	s := c.Settings
	var r Resolved
	var err error
	if r.Terms, err = s.clientTerms(); err != nil {
		return r, err
	}
	seg, offset, err := s.ForSegment()
	if err != nil {
		return r, err
	}
	r.Spec = seg.loadSpec(offset)
	if r.Load, err = r.Spec.RunConfig(); err != nil {
		return r, err
	}
	r.Recorded = results.Settings(seg.Redacted())
	r.Recorded.Persistence = orNone(s.Persistence, !s.serversGiven())
	s.recordTopology(&r.Recorded)
	// A benchmark cell is one client of its workers, in this process.
	r.Recorded.Clients = max(s.Clients, 1)
	if r.Recorded.ClientMode == "" {
		r.Recorded.ClientMode = "goroutines"
	}
	r.Recorded.Workers = seg.Workers * r.Recorded.Clients
	return r, nil
}

// loadSpec is the worker loop's part of a segment's settings.
func (s Settings) loadSpec(offset uint64) workloads.Spec {
	sp := workloads.Spec{
		Workers: s.Workers, Duration: time.Duration(s.Duration), Warmup: time.Duration(s.Warmup),
		Keys: workloads.ChooserConfig{Distribution: s.Distribution, Keys: s.Keys, ZipfExponent: s.ZipfExponent,
			HotspotOps: s.HotspotOps, HotspotKeys: s.HotspotKeys},
		KeyOffset: offset, HoldDist: s.HoldDist, Hold: time.Duration(s.Hold), LongHold: time.Duration(s.LongHold),
		TTL: time.Duration(s.TTL), AutoExtend: s.AutoExtend,
		CallersWait: s.WaitTime > 0 || s.Retries > 0, Quota: s.Acquisitions, Calls: s.Calls,
	}
	if s.Load == "open" {
		sp.Rate = s.Rate
	}
	return sp
}

// orNone is the persistence a result shows: local masters without a mode
// run with none; external ones keep the server's own ("").
func orNone(p string, local bool) string {
	if p == "" && local {
		return "none"
	}
	return p
}

// Validate checks the cell's settings, as its kind takes them, and its
// faults against them.
func (c Cell) Validate() error {
	if err := c.Settings.check(c.kind(), c.Load.Chooser != nil); err != nil {
		return err
	}
	return c.checkFaultTargets()
}

// checkFaultTargets: every fault within the cell's time, of its
// topology, and its targets.
func (c Cell) checkFaultTargets() error {
	s := c.Settings
	d := time.Duration(s.Duration)
	for j, f := range c.Faults {
		where := fmt.Sprintf("faults[%d]", j)
		if f.At >= d {
			return fmt.Errorf("%s.at: %v is not accepted; use a time before the end of the cell (duration %v)", where, f.At, d)
		}
		if f.AtUntil >= d {
			return fmt.Errorf("%s.at_until: %v is not accepted; use a time before the end of the cell (duration %v)", where, f.AtUntil, d)
		}
		if err := s.checkFaultTopology(where, f); err != nil {
			return err
		}
		for _, t := range []struct {
			field, what string
			v           []int
			n           int
		}{{"master_index", "masters", f.Masters, s.N()}, {"client_index", "clients", f.Clients, s.Clients},
			{"replica_index", "replicas", f.Replicas, s.Replicas}, {"sentinel_index", "sentinels", f.Sentinels, s.Sentinels}} {
			for _, i := range t.v {
				if i < 0 || i >= t.n {
					return fmt.Errorf("%s.%s: %d is not accepted; use 0..%d (%d %s)", where, t.field, i, t.n-1, t.n, t.what)
				}
			}
		}
	}
	return nil
}

// checkFaultTopology: a fault by role, by member link or by replica or
// monitor only where the topology has them, and none that its topology
// cannot take (its CheckFault).
func (s Settings) checkFaultTopology(where string, f Fault) error {
	switch {
	case !s.Roles() && f.Role != "":
		return fmt.Errorf("%s.role: needs topology %s (a member by its role); topology is %s (use master_index)", where, roleTopologies(), s.TopologyOf())
	case f.MemberLinks() && (s.Service() == nil || !cutsMemberLinks(s.Service())):
		return fmt.Errorf("%s.link: members needs topology %s (a cluster whose members talk to each other); topology is %s (use link: client)", where, memberLinkTopologies(), s.TopologyOf())
	case f.ByRole() && !hasRoleTargets(s.Service()):
		return fmt.Errorf("%s: replica_index and sentinel_index need topology %s; topology is %s (use master_index)", where, roleTargetTopologies(), s.TopologyOf())
	}
	return s.Service().CheckFault(where, s, f)
}

// IsNetwork: the kinds that act on the clients' proxied links.
func IsNetwork(k results.FaultKind) bool {
	return k == results.FaultPartition || k == results.FaultLatency || k == results.FaultReset
}

// Warnings are the cell's settings that work but are probably a mistake.
func (c Cell) Warnings() []string { return c.kind().warnings(c.Settings) }

// NeedsNetwork reports whether the cell has network faults (its clients
// then reach the masters through proxies).
func (c Cell) NeedsNetwork() bool {
	for _, f := range c.Faults {
		if IsNetwork(f.Kind) && !f.MemberLinks() {
			return true
		}
	}
	return false
}

// NeedsMemberLinks reports whether the cell cuts a consensus member off
// from the others (its members then reach each other through gates).
func (c Cell) NeedsMemberLinks() bool {
	return slices.ContainsFunc(c.Faults, func(f results.Fault) bool { return f.MemberLinks() && f.Kind == results.FaultPartition })
}

// NeedsMemberDelay reports whether the cell delays the links between a
// consensus cluster's members as a fault (they then reach each other
// through proxies).
func (c Cell) NeedsMemberDelay() bool {
	return slices.ContainsFunc(c.Faults, func(f results.Fault) bool { return f.MemberLinks() && f.Kind == results.FaultLatency })
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
