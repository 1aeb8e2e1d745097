package workloads

import (
	"fmt"
	"runtime"
	"time"

	"lockbench/engine"
	"lockbench/report"
)

// ClientBoundShare is the share of the machine's CPU above which a figure is
// called client-bound: the load generator, not Redis, set the pace.
const ClientBoundShare = 0.8

// Result turns the stats into the result file shape.
func (s *Stats) Result(eng Locker, config any, started time.Time) report.Run {
	secs := s.Measured.Seconds()
	r := report.Run{
		Config:               config,
		AcquireLatency:       report.Summarize(s.Acquire),
		AcquireFailedLatency: report.Summarize(s.AcquireFailed),
		ReleaseLatency:       report.Summarize(s.Release),
		Outcomes: report.Outcomes{
			Acquired: s.Acquired, NotAcquired: s.NotAcquired, Errors: s.Errors,
			PerMaster: map[string]report.MasterOutcomes{},
		},
		Safety:          report.Safety{Violations: s.Violations, MaxConcurrentHolder: s.MaxConcurrent},
		LockUse:         report.LockUse{Extends: s.Extends, ExtendFailures: s.ExtendFailures, HoldOverruns: s.HoldOverruns},
		MeasuredSeconds: secs,
		Interrupted:     s.Interrupted,
		StartedAt:       started.UTC(),
	}
	if s.AcquireUncorrected != nil {
		l := report.Summarize(s.AcquireUncorrected)
		r.AcquireUncorrected = &l
	}
	if secs > 0 {
		r.Throughput.CyclesPerSec = float64(s.Acquired) / secs
		r.Throughput.AcquiresPerSec = float64(s.Acquired+s.NotAcquired+s.Errors) / secs
	}
	late := eng.LateOutcomes()
	var released []int64
	if lr, ok := eng.(interface{ LateReleased() []int64 }); ok {
		released = lr.LateReleased()
	}
	for i, addr := range eng.Addrs() {
		pm := s.PerMaster[i]
		var nLate int64
		for _, v := range late[i] {
			nLate += v
		}
		mo := report.MasterOutcomes{
			OK: pm[engine.OK], Taken: pm[engine.Taken], Timeout: pm[engine.Timeout], Error: pm[engine.Error],
			Pending: pm[engine.Pending], NotSent: pm[engine.NotSent], Late: nLate,
		}
		if i < len(released) {
			mo.LateReleased = released[i]
		}
		r.Outcomes.PerMaster[addr] = mo
	}
	if len(s.ServerCPU) > 0 {
		sv := &report.Servers{PerMaster: map[string]float64{}}
		known := true
		for i, addr := range eng.Addrs() {
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
		if known {
			r.Servers = sv
		}
	}
	cores := runtime.NumCPU()
	r.Client.Cores = cores
	r.Client.CPUSeconds = s.CPU.Seconds()
	if s.Acquired > 0 {
		r.Client.CPUMicrosCycle = float64(s.CPU.Microseconds()) / float64(s.Acquired)
	}
	if secs > 0 {
		r.Client.CPUShare = s.CPU.Seconds() / secs / float64(cores)
	}
	r.Client.RSSStartMB = float64(s.RSSStart) / (1 << 20)
	r.Client.RSSEndMB = float64(s.RSSEnd) / (1 << 20)
	if r.Client.CPUShare >= ClientBoundShare {
		r.Client.ClientBound = true
		r.Warnings = append(r.Warnings, fmt.Sprintf(
			"client-bound: lockbench used %.0f%% of %d cores; the figures measure this client as much as Redis",
			100*r.Client.CPUShare, cores))
	}
	if s.Violations > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("safety: %d overlapping holds of one key were seen", s.Violations))
	}
	return r
}
