package results

import (
	"fmt"
	"strings"
)

// CPUSplit is where the machine's CPU went in a cell's measured window
// (from /proc), each share of the whole machine: cores × wall time.
type CPUSplit struct {
	Cores      int     `json:"cores"`
	BusyShare  float64 `json:"busy_share"`  // not idle, not waiting on I/O, not stolen
	StealShare float64 `json:"steal_share"` // taken by the hypervisor
	// ClientShare is lockbench's process; ProxyShare the part of it spent
	// in the --net-latency proxy (in-process). With an external client
	// (--client) it includes the adapter process, AdapterShare: the
	// library's work is the load generator's too.
	ClientShare  float64  `json:"client_share"`
	ProxyShare   *float64 `json:"proxy_share,omitempty"`
	AdapterShare *float64 `json:"adapter_share,omitempty"`
	// ServersShare is the masters that run on this machine (local ones, and
	// given ones on a loopback address).
	ServersShare float64 `json:"servers_share"`
	OtherShare   float64 `json:"other_share"` // everything else that ran
	// MastersShareMachine: the masters run on this machine, so the load
	// generator and the servers compete for the same cores.
	MastersShareMachine bool `json:"masters_share_machine"`
	// MasterCoreShare is each master's CPU over wall time (1 = one core),
	// from /proc when its process is here, else from INFO cpu.
	MasterCoreShare map[string]float64 `json:"master_core_share,omitempty"`
	// ClientCPUs and LocalCPUs are the CPU sets when --local-cpus pinned
	// the masters apart from lockbench.
	ClientCPUs []int `json:"client_cpus,omitempty"`
	LocalCPUs  []int `json:"local_cpus,omitempty"`
}

// Limit is what limited a cell's throughput.
type Limit struct {
	By       string `json:"by"` // generator, machine, server, latency, contention or none
	Evidence string `json:"evidence"`
}

// The verdicts, and the thresholds of the rules (README, "What limited a
// cell").
const (
	LimitGenerator  = "generator"
	LimitMachine    = "machine"
	LimitServer     = "server"
	LimitLatency    = "latency"
	LimitContention = "contention"
	LimitNone       = "none"

	// ContentionShare of attempts that found the lock taken.
	ContentionShare = 0.01
	// A master's main thread is one core: ServerFullCore of it is a
	// saturated server; on a saturated shared box the server is blamed
	// only from ServerSharedCore up.
	ServerFullCore   = 0.9
	ServerSharedCore = 0.7
	// GeneratorShare of the CPUs lockbench may use.
	GeneratorShare = 0.8
	// SaturatedShare of the machine busy (or stolen).
	SaturatedShare = 0.9
	// PacerLateMicros: the open-loop pacer's median lateness that makes the
	// generator the limit.
	PacerLateMicros = 1000
	// UnservedShare of the offered starts that makes an open loop "not
	// served".
	UnservedShare = 0.01
)

// LimitOf applies the rules, in order, to one cell's result. The first
// rule that holds is the verdict; each verdict carries the figures that
// made it.
func LimitOf(r *Run) Limit {
	attempts := r.Outcomes.Attempts()
	if attempts == 0 {
		return Limit{By: LimitNone, Evidence: "not judged: no acquire attempt was measured"}
	}
	busiest, busiestKnown := BusiestMaster(r)
	m := r.Machine
	saturated := m != nil && m.BusyShare+m.StealShare >= SaturatedShare
	clientCPUs := clientCPUCount(r)
	clientOwn := clientCoreShare(r) / float64(clientCPUs)

	if na := float64(r.Outcomes.NotAcquired) / float64(attempts); na >= ContentionShare {
		return Limit{LimitContention, fmt.Sprintf("%s of acquire attempts found the lock taken", Pct(na))}
	}
	// Redis runs commands on one thread, so a master near a full core is
	// the limit; a lock service's server is many threads (a Go program, a
	// JVM, a process per connection), whose limit the machine rule below
	// tells.
	oneThread := r.Config == nil || r.Config.Service == nil
	if oneThread && busiestKnown && (busiest >= ServerFullCore || (saturated && busiest >= ServerSharedCore)) {
		return Limit{LimitServer, fmt.Sprintf("the busiest master used %s of a core (a master runs commands on one thread)%s", Pct0(busiest), machineText(m))}
	}
	if clientOwn >= GeneratorShare {
		ev := fmt.Sprintf("lockbench used %s of the %d CPUs it may use", Pct0(clientOwn), clientCPUs)
		if m != nil && m.ProxyShare != nil {
			ev += fmt.Sprintf(", of which the --net-latency proxy %s", Pct0(*m.ProxyShare*float64(m.Cores)/float64(clientCPUs)))
		}
		if m != nil && m.AdapterShare != nil {
			ev += fmt.Sprintf(", of which the adapter %s", Pct0(*m.AdapterShare*float64(m.Cores)/float64(clientCPUs)))
		}
		return Limit{LimitGenerator, ev + busiestText(busiest, busiestKnown) + machineText(m)}
	}
	if saturated {
		return Limit{LimitMachine, "the machine was saturated" + machineText(m) + busiestText(busiest, busiestKnown) + errorsText(r, attempts)}
	}
	if o := r.OpenLoop; o != nil && o.PacerLag.Count > 0 && o.PacerLag.P50 >= PacerLateMicros {
		return Limit{LimitGenerator, fmt.Sprintf("the open-loop pacer issued starts a median %s late", FormatMicros(o.PacerLag.P50)) + machineText(m)}
	}
	idle := "CPUs idle"
	if m != nil {
		idle = fmt.Sprintf("machine %s busy", Pct0(m.BusyShare+m.StealShare))
	}
	if o := r.OpenLoop; o != nil && o.Offered > 0 && float64(o.Unserved)/float64(o.Offered) < UnservedShare {
		return Limit{LimitNone, fmt.Sprintf("the offered %s/s were served (%s unserved; %s)", Rate(o.OfferedRate), Pct(float64(o.Unserved)/float64(o.Offered)), idle)}
	}
	return Limit{LimitLatency, latencyText(r, idle)}
}

// latencyText: with spare CPU everywhere, the rate is concurrency over
// the time each acquire waits (round trips, fsync).
func latencyText(r *Run, idle string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s while each acquire waited a median %s", idle, FormatMicros(r.AcquireLatency.P50))
	if r.BaselineParallel != nil && r.BaselineParallel.P50 > 0 {
		floor := "the parallel SET round trip"
		if r.Config != nil && r.Config.Service != nil {
			floor = r.Config.Service.Baseline
		}
		fmt.Fprintf(&b, " (%.1f× %s, %s)", r.AcquireLatency.P50/r.BaselineParallel.P50, floor, FormatMicros(r.BaselineParallel.P50))
	}
	if o := r.OpenLoop; o != nil && o.Offered > 0 {
		fmt.Fprintf(&b, "; %s of the offered starts found no free worker", Pct(float64(o.Unserved)/float64(o.Offered)))
	}
	return b.String()
}

// BusiestMaster is the busiest master's CPU over wall time (1 = a core).
func BusiestMaster(r *Run) (float64, bool) {
	if r.Machine != nil && len(r.Machine.MasterCoreShare) > 0 {
		b := 0.0
		for _, s := range r.Machine.MasterCoreShare {
			b = max(b, s)
		}
		return b, true
	}
	if r.Servers != nil {
		return r.Servers.BusiestShare, true
	}
	return 0, false
}

// clientCPUCount is how many CPUs lockbench could run on.
func clientCPUCount(r *Run) int {
	if r.Machine != nil && len(r.Machine.ClientCPUs) > 0 {
		return len(r.Machine.ClientCPUs)
	}
	if r.Machine != nil && r.Machine.Cores > 0 {
		return r.Machine.Cores
	}
	return max(r.Client.Cores, 1)
}

// clientCoreShare is lockbench's CPU in cores (1 = one core busy).
func clientCoreShare(r *Run) float64 {
	if r.Machine != nil && r.Machine.Cores > 0 {
		return r.Machine.ClientShare * float64(r.Machine.Cores)
	}
	return r.Client.CPUShare * float64(max(r.Client.Cores, 1))
}

func machineText(m *CPUSplit) string {
	if m == nil {
		return ""
	}
	return fmt.Sprintf("; machine %s busy of %d cores: lockbench %s, servers %s, other %s, steal %s",
		Pct0(m.BusyShare+m.StealShare), m.Cores, ClientShareText(m), Pct0(m.ServersShare), Pct0(m.OtherShare), Pct0(m.StealShare))
}

// ClientShareText is lockbench's share with the parts told apart: the
// proxy's, an external client's adapter's.
func ClientShareText(m *CPUSplit) string {
	client := Pct0(m.ClientShare)
	if m.ProxyShare != nil {
		client += fmt.Sprintf(" (of which the proxy %s)", Pct0(*m.ProxyShare))
	}
	if m.AdapterShare != nil {
		client += fmt.Sprintf(" (of which the adapter %s)", Pct0(*m.AdapterShare))
	}
	return client
}

func busiestText(b float64, known bool) string {
	if !known {
		return ""
	}
	return fmt.Sprintf("; busiest master %s of a core", Pct0(b))
}

// errorsText names the acquires that failed on timeouts or errors, the
// first sign of a starved client or server.
func errorsText(r *Run, attempts int64) string {
	if e := float64(r.Outcomes.Errors) / float64(attempts); e >= ContentionShare {
		return fmt.Sprintf("; %s of acquire attempts timed out or errored", Pct(e))
	}
	return ""
}
