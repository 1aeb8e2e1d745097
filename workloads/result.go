package workloads

import (
	"fmt"
	"runtime"
	"time"

	"lockbench/lock"
	"lockbench/results"
)

// ClientBoundShare is the share of the machine's CPU above which a figure is
// called client-bound: the load generator, not Redis, set the pace.
const ClientBoundShare = 0.8

// Replies are what a result takes from the lock client, or a fault
// cell's clients together: the masters' addresses, and per master the late
// replies seen (by outcome) and the late OKs released.
type Replies struct {
	Addrs        []string
	Late         [][lock.NumOutcomes]int64
	LateReleased []int64
}

// RepliesOf are the locker's replies.
func RepliesOf(lk lock.Locker) Replies {
	var r Replies
	if ps, ok := lk.(lock.PerServer); ok {
		r.Addrs, r.Late = ps.Addrs(), ps.LateOutcomes()
	}
	if lr, ok := lk.(interface{ LateReleased() []int64 }); ok {
		r.LateReleased = lr.LateReleased()
	}
	return r
}

// Result turns the stats into the result file shape: the one result
// builder, of a benchmark cell's worker loop and of a fault cell's clients
// (their stats added up) alike.
func (s *Stats) Result(rp Replies, config *results.CellConfig, started time.Time) results.Run {
	secs := s.Measured.Seconds()
	r := results.Run{
		Config:               config,
		AcquireLatency:       results.Summarize(s.Acquire),
		AcquireFailedLatency: results.Summarize(s.AcquireFailed),
		ReleaseLatency:       results.Summarize(s.Release),
		Outcomes: results.Outcomes{
			Tally: s.Tally, PerMaster: s.perMaster(rp),
		},
		Safety: results.Safety{Violations: s.Violations, MaxConcurrentHolder: s.MaxConcurrent,
			JudgedHolds: s.JudgedHolds, HoldsNotJudged: s.HoldsNotJudged, NotJudged: s.notJudged()},
		LockUse:         results.LockUse{Extends: s.Extends, ExtendFailures: s.ExtendFailures, HoldOverruns: s.HoldOverruns},
		MeasuredSeconds: secs,
		Interrupted:     s.Interrupted,
		StartedAt:       started.UTC(),
		Servers:         s.servers(rp.Addrs),
		Client:          s.client(),
	}
	if s.AcquireUncorrected != nil {
		l := results.Summarize(s.AcquireUncorrected)
		r.AcquireUncorrected = &l
	}
	r.Fairness = results.NewFairness(s.PerWorker)
	r.Contention = s.contention()
	if secs > 0 {
		r.Throughput.CyclesPerSec = float64(s.Acquired) / secs
		r.Throughput.AcquiresPerSec = float64(s.Attempts()) / secs
	}
	r.Warnings = s.warnings(r.Client)
	if s.Rate > 0 {
		r.OpenLoop = s.openLoop()
		r.Warnings = append(r.Warnings, s.openLoopWarnings(r.OpenLoop)...)
	}
	return r
}

// perMaster is each master's outcomes, by address, with its late replies.
func (s *Stats) perMaster(rp Replies) map[string]results.MasterOutcomes {
	out := map[string]results.MasterOutcomes{}
	for i, addr := range rp.Addrs {
		var nLate int64
		if i < len(rp.Late) {
			for _, v := range rp.Late[i] {
				nLate += v
			}
		}
		var pm [lock.NumOutcomes]int64
		if i < len(s.PerMaster) {
			pm = s.PerMaster[i]
		}
		mo := masterOutcomes(pm, nLate)
		if i < len(rp.LateReleased) {
			mo.LateReleased = rp.LateReleased[i]
		}
		out[addr] = mo
	}
	return out
}

// masterOutcomes is one master's row of Counts.PerMaster in the result's
// shape, with its late replies.
func masterOutcomes(pm [lock.NumOutcomes]int64, late int64) results.MasterOutcomes {
	return results.MasterOutcomes{OK: pm[lock.OK], Taken: pm[lock.Taken], Timeout: pm[lock.Timeout], Error: pm[lock.Error],
		Pending: pm[lock.Pending], NotSent: pm[lock.NotSent], Unconfirmed: pm[lock.Unconfirmed], Late: late}
}

// servers is the masters' CPU in the window; nil unless every master's
// is known.
// ServersOf is the servers' CPU in the window by address, for a service
// whose Locker reports no per-server outcomes (nil: not read).
func (s *Stats) ServersOf(addrs []string) *results.Servers { return s.servers(addrs) }

func (s *Stats) servers(addrs []string) *results.Servers {
	if len(s.ServerCPU) == 0 {
		return nil
	}
	secs := s.Measured.Seconds()
	sv := &results.Servers{PerMaster: map[string]float64{}}
	known := true
	for i, addr := range addrs {
		if i >= len(s.ServerCPU) || s.ServerCPU[i] < 0 {
			known = false
			continue
		}
		c := s.ServerCPU[i].Seconds()
		sv.PerMaster[addr] = c
		sv.CPUSeconds += c
		if secs > 0 {
			sv.BusiestShare = max(sv.BusiestShare, c/secs)
		}
	}
	if s.Acquired > 0 {
		sv.CPUMicrosCycle = sv.CPUSeconds * 1e6 / float64(s.Acquired)
	}
	if !known {
		return nil
	}
	return sv
}

// client is the client's cost in the window: lockbench's, and its
// adapter's when an external client's library works there.
func (s *Stats) client() results.Client {
	c := ClientCost(s.CPU.Seconds(), s.Acquired, s.Measured.Seconds())
	c.RSSStartMB, c.RSSEndMB = float64(s.RSSStart)/(1<<20), float64(s.RSSEnd)/(1<<20)
	if s.AdapterPid != 0 && s.AdapterCPU >= 0 {
		c.AddAdapter(s.AdapterCPU.Seconds(), s.Acquired, s.Measured.Seconds())
		c.ClientBound = c.CPUShare >= ClientBoundShare
	}
	return c
}

// ClientCost is lockbench's own CPU (cpuSeconds over secs of the window,
// for acquired cycles) on this machine's cores, client-bound from
// ClientBoundShare.
func ClientCost(cpuSeconds float64, acquired int64, secs float64) results.Client {
	cores := runtime.NumCPU()
	c := results.Client{Cores: cores, CPUSeconds: cpuSeconds}
	if acquired > 0 {
		c.CPUMicrosCycle = cpuSeconds * 1e6 / float64(acquired)
	}
	if secs > 0 {
		c.CPUShare = cpuSeconds / secs / float64(cores)
	}
	c.ClientBound = c.CPUShare >= ClientBoundShare
	return c
}

// warnings say in words when the client set the pace or the probe saw
// overlaps or could not judge.
func (s *Stats) warnings(c results.Client) []string {
	var w []string
	who := "lockbench"
	if c.IncludesAdapter {
		who = "lockbench and its adapter"
	}
	if c.ClientBound {
		w = append(w, fmt.Sprintf(
			"client-bound: %s used %.0f%% of %d cores; the figures measure this client as much as the servers",
			who, 100*c.CPUShare, c.Cores))
	}
	if s.AdapterPid != 0 && s.AdapterCPU < 0 {
		w = append(w, "the adapter's CPU could not be read (/proc): the client CPU is lockbench's alone")
	}
	if s.Violations > 0 {
		w = append(w, fmt.Sprintf("safety: %d overlapping holds of one key were seen", s.Violations))
	}
	if s.HoldsNotJudged > 0 {
		w = append(w, fmt.Sprintf("safety: %d of %d holds could not be judged: their validity ran out before their use began",
			s.HoldsNotJudged, s.HoldsNotJudged+s.JudgedHolds))
	}
	return w
}

// notJudged says why the probe judged no hold ("" when it judged some).
func (s *Stats) notJudged() string {
	switch {
	case s.JudgedHolds > 0:
		return ""
	case s.HoldsNotJudged > 0:
		return "every hold's validity ran out before its use"
	case s.Acquired == 0:
		return "no acquisitions"
	}
	return "hold 0"
}

func (s *Stats) openLoop() *results.OpenLoop {
	ol := &results.OpenLoop{OfferedRate: s.Rate, Offered: s.Offered, Served: s.Started, Unserved: s.Unserved,
		Overloaded: s.Unserved > 0 && !s.UnservedLate && !s.Interrupted}
	if s.PacerLag != nil {
		ol.PacerLag = results.Summarize(s.PacerLag)
	}
	if secs := s.Measured.Seconds(); secs > 0 {
		ol.ServedRate = float64(s.Started) / secs
	}
	return ol
}

// openLoopWarnings say loudly when the lock could not keep up with the
// offered rate, or lockbench could not keep the schedule.
func (s *Stats) openLoopWarnings(ol *results.OpenLoop) []string {
	var w []string
	pct := 100 * float64(ol.Unserved) / float64(max(ol.Offered, 1))
	switch {
	case ol.Overloaded:
		w = append(w, fmt.Sprintf("open loop OVERLOADED: %d of %d offered starts (%.1f%%) were never served; served %.0f/s of %.0f/s offered: "+
			"the lock could not keep up at this max-in-flight, and the corrected latency grows with the backlog (p99 %s)",
			ol.Unserved, ol.Offered, pct, ol.ServedRate, ol.OfferedRate, micros(results.Summarize(s.Acquire).P99)))
	case ol.Unserved > 0 && !s.Interrupted:
		w = append(w, fmt.Sprintf("open loop: %d of %d offered starts (%.1f%%) were never served although a worker was free for them: "+
			"lockbench itself was too late (pacer lag p99 %s), not the lock", ol.Unserved, ol.Offered, pct, micros(ol.PacerLag.P99)))
	}
	if lim := float64(PacerLagLimit.Microseconds()); ol.PacerLag.Count > 0 && ol.PacerLag.P99 > lim {
		w = append(w, fmt.Sprintf("open loop: pacer lag p99 %s exceeds %s: lockbench started acquires late that it could have started, "+
			"so part of the corrected latency is the generator's, not the lock's", micros(ol.PacerLag.P99), micros(lim)))
	}
	return w
}

// micros prints a µs figure in a readable unit.
func micros(us float64) string {
	return time.Duration(us * float64(time.Microsecond)).Round(time.Microsecond).String()
}
