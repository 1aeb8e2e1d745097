package pool

import (
	"context"
	"fmt"

	"lockbench/results"
	"lockbench/workloads"
)

// WindowReadings are what a cell reads around its measured window besides
// latencies: the machine's CPU split and, where the servers count their
// commands, their counters (the command cost per cycle).
type WindowReadings struct {
	ctx           context.Context
	counters      func(context.Context) []map[string]results.CommandCount // nil: the servers count none
	addrs         []string                                                // the servers, by the result's index
	probe         *machineProbe
	before, after []map[string]results.CommandCount
	proxy         *proxyProfile // --net-latency: the in-process proxy's CPU
	shards        []results.ShardOf
}

// Window is what a cell's servers give its window readings.
type Window struct {
	Addrs []string // the servers, by the result's index
	// The machine's CPU split reads: the servers' addresses and
	// processes (local ones, and those the servers named themselves:
	// taken when a process named ProcessName whose title names the
	// server's port runs here),
	// their process trees where a server's work is done by its children,
	// a replicated set's replicas and monitors (the processes that watch
	// its primary: Redis' Sentinels), the CPUs --local-cpus pinned.
	ProbeAddrs            []string
	LocalPids, SelfPids   []int
	ProcessName           string
	Trees                 bool
	Replicas, Monitors    []int
	ClientCPUs, LocalCPUs []int
	// Counters, when the servers count their commands, reads them: each
	// server's calls and time by command (nil: that server's not read).
	Counters func(context.Context) []map[string]results.CommandCount
	// Proxied: through the cell's in-process proxies, whose CPU is told
	// apart.
	Proxied bool
	// AdapterPid is an external client's adapter process (0: none).
	AdapterPid int
	// Shards, when the servers are a sharded store's, are each shard's
	// server and the slots it holds: the result's per-shard rows.
	Shards []results.ShardOf
}

// NewWindowReadings reads the machine and the servers around a cell's
// window as w says.
func NewWindowReadings(ctx context.Context, w Window) *WindowReadings {
	r := &WindowReadings{ctx: ctx, counters: w.Counters, addrs: w.Addrs, probe: newMachineProbe(w.ProbeAddrs, w.LocalPids, w.SelfPids, w.ProcessName), shards: w.Shards}
	if r.probe != nil {
		r.probe.trees, r.probe.clientCPUs, r.probe.localCPUs = w.Trees, w.ClientCPUs, w.LocalCPUs
		r.probe.replicas, r.probe.monitors = w.Replicas, w.Monitors
		r.probe.adapter = w.AdapterPid
	}
	if w.Proxied {
		r.proxy = &proxyProfile{}
	}
	return r
}

// ServiceWindow is a lock service's window: its local servers' processes
// (their trees, where a server's work is done by its children) are the
// servers' CPU.
func ServiceWindow(m *CellServers) Window {
	v := m.Service
	return Window{Addrs: v.Display(), ProbeAddrs: v.Display(), LocalPids: v.Pids(), Trees: v.Trees()}
}

// commandStats are the servers' command counters (nil: none).
func (w *WindowReadings) commandStats(ctx context.Context) []map[string]results.CommandCount {
	if w.counters == nil {
		return nil
	}
	return w.counters(ctx)
}

// Mark is the worker loop's OnWindow: readings as the window opens and closes.
func (w *WindowReadings) Mark(opened bool) {
	if opened {
		w.before = w.commandStats(w.ctx)
		if w.probe != nil {
			w.probe.start = w.probe.sample()
		}
		if w.proxy != nil {
			w.proxy.start()
		}
		return
	}
	if w.probe != nil {
		w.probe.end = w.probe.sample()
	}
	if w.proxy != nil && w.probe != nil {
		w.probe.proxySeconds, w.probe.proxyKnown = w.proxy.stop()
	}
	w.after = w.commandStats(context.Background())
}

// Finish puts the machine split, the servers' command cost and the limit
// verdict into the result.
func (w *WindowReadings) Finish(res *results.Run, st *workloads.Stats) {
	addrs := w.addrs
	if w.probe != nil && (w.before != nil || w.counters == nil) {
		w.probe.fallback = st.ServerCPU
		res.Machine = w.probe.split(addrs)
	}
	if w.probe != nil && res.Servers != nil && len(w.probe.replicas)+len(w.probe.monitors) > 0 {
		w.probe.topologyCPU(res.Servers, st.Acquired)
	}
	if w.before != nil && w.after != nil {
		masters := make([]results.MasterWindow, len(addrs))
		for i, a := range addrs {
			masters[i] = results.MasterWindow{Addr: a, Before: w.before[i], After: w.after[i], CPUSeconds: -1}
			if i < len(st.ServerCPU) && st.ServerCPU[i] >= 0 {
				masters[i].CPUSeconds = st.ServerCPU[i].Seconds()
			}
		}
		res.CommandCost = results.NewCommandCost(masters, st.Acquired, st.Measured.Seconds())
	}
	res.Shards = results.NewShards(res, w.shards)
	l := results.LimitOf(res)
	res.Limit = &l
	switch l.By {
	case results.LimitGenerator, results.LimitMachine:
		res.Warnings = append(res.Warnings, fmt.Sprintf("limited by the %s (%s): the throughput is a lower bound of what the masters sustain", limitNoun(l.By), l.Evidence))
	}
}

func limitNoun(by string) string {
	if by == results.LimitGenerator {
		return "load generator"
	}
	return "shared machine"
}
