package results

import "math"

// LockCommands are the commands a lock cycle sends to a master: SET NX PX
// to acquire, the compare-and-delete (and extend) scripts by EVALSHA, EVAL
// when a script was missing. Commands called inside a script are counted
// by Redis under their own names too, so they are left out here.
var LockCommands = []string{"set", "evalsha", "eval"}

// CommandCost is what the masters themselves spent per lock cycle in a
// cell's window, and the rate that cost allows. Every master of a Redlock
// set sees every lock, so the costliest master sets the group's pace.
type CommandCost struct {
	PerMaster map[string]MasterCost `json:"per_master"`
	// CommandMicrosCycle is the costliest master's command execution time
	// per cycle (INFO commandstats usec: excludes socket reads and writes).
	CommandMicrosCycle float64 `json:"command_us_per_cycle"`
	// ProjectedRate is 1 s / CommandMicrosCycle: what one master core would
	// sustain if executing the commands were all it did, an upper bound.
	ProjectedRate float64 `json:"projected_rate"`
	// CPUMicrosCycle is the costliest master's whole process CPU per cycle
	// (commands, socket I/O, AOF writes) and ProjectedRateCPU = 1 s / it:
	// the rate one master core sustains at the batching this cell saw.
	CPUMicrosCycle   float64 `json:"cpu_us_per_cycle,omitempty"`
	ProjectedRateCPU float64 `json:"projected_rate_cpu,omitempty"`
	MeasuredRate     float64 `json:"measured_rate"` // cycles/s
}

// MasterCost is one master's share of CommandCost.
type MasterCost struct {
	Calls              map[string]int64 `json:"calls"` // lock commands run in the window
	Usec               int64            `json:"usec"`
	CommandMicrosCycle float64          `json:"command_us_per_cycle"`
	ProjectedRate      float64          `json:"projected_rate"`
	CPUMicrosCycle     float64          `json:"cpu_us_per_cycle,omitempty"`
}

// CommandCount is a command's calls and execution microseconds so far.
type CommandCount struct{ Calls, Usec int64 }

// MasterWindow is one master's counters at the window's start and end and
// its process CPU seconds in between (negative when unknown).
type MasterWindow struct {
	Addr       string
	Before     map[string]CommandCount
	After      map[string]CommandCount
	CPUSeconds float64
}

// NewCommandCost works out the cost of cycles lock cycles over seconds of
// window. Masters whose counters are missing are left out; nil when none
// is left or no cycle completed.
func NewCommandCost(masters []MasterWindow, cycles int64, seconds float64) *CommandCost {
	if cycles <= 0 || seconds <= 0 {
		return nil
	}
	rc := &CommandCost{PerMaster: map[string]MasterCost{}, MeasuredRate: float64(cycles) / seconds}
	for _, m := range masters {
		if m.Before == nil || m.After == nil {
			continue
		}
		mc := MasterCost{Calls: map[string]int64{}}
		for _, c := range LockCommands {
			// A counter that went down was reset (CONFIG RESETSTAT, a
			// restart): the after value is what was counted since.
			calls, usec := m.After[c].Calls-m.Before[c].Calls, m.After[c].Usec-m.Before[c].Usec
			if calls < 0 || usec < 0 {
				calls, usec = m.After[c].Calls, m.After[c].Usec
			}
			if calls > 0 {
				mc.Calls[c] = calls
			}
			mc.Usec += usec
		}
		mc.CommandMicrosCycle = float64(mc.Usec) / float64(cycles)
		mc.ProjectedRate = perSecond(mc.CommandMicrosCycle)
		if m.CPUSeconds >= 0 {
			mc.CPUMicrosCycle = m.CPUSeconds * 1e6 / float64(cycles)
		}
		rc.PerMaster[m.Addr] = mc
		rc.CommandMicrosCycle = max(rc.CommandMicrosCycle, mc.CommandMicrosCycle)
		rc.CPUMicrosCycle = max(rc.CPUMicrosCycle, mc.CPUMicrosCycle)
	}
	if len(rc.PerMaster) == 0 {
		return nil
	}
	rc.ProjectedRate = perSecond(rc.CommandMicrosCycle)
	rc.ProjectedRateCPU = perSecond(rc.CPUMicrosCycle)
	return rc
}

// perSecond is how many of something costing us µs fit in one second.
func perSecond(us float64) float64 {
	if us <= 0 || math.IsNaN(us) {
		return 0
	}
	return 1e6 / us
}
