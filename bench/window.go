package bench

import (
	"context"
	"fmt"

	"lockbench/engine"
	"lockbench/localmasters"
	"lockbench/results"
	"lockbench/workloads"
)

// WindowReadings are what a cell reads around its measured window besides
// latencies: the machine's CPU split and the masters' command counters.
type WindowReadings struct {
	ctx           context.Context
	eng           *engine.Engine // nil: not Redis (no command counters)
	addrs         []string       // the servers, by the result's index
	probe         *machineProbe
	before, after []map[string]engine.CommandStat
	proxy         *proxyProfile // --net-latency: the in-process proxy's CPU
}

// NewWindowReadings reads the masters m through eng (proxied: through the
// cell's in-process proxies, whose CPU is then told apart).
func NewWindowReadings(ctx context.Context, eng *engine.Engine, m *Masters) *WindowReadings {
	proxied, rs := m.Net != nil, m.Redis()
	var localPids []int
	if rs.Local != nil {
		localPids = pidsOf(rs.Local.Masters())
	}
	if r := rs.Replicated; r != nil {
		localPids = []int{r.Master().Pid()}
	}
	addrs := rs.Upstreams()
	if len(addrs) != len(eng.Addrs()) {
		addrs = eng.Addrs() // an external replicated set: only the engine knows where its master is
	}
	w := &WindowReadings{ctx: ctx, eng: eng, addrs: eng.Addrs(), probe: newMachineProbe(addrs, localPids, eng.ServerPIDs(ctx))}
	if w.probe != nil {
		w.probe.clientCPUs, w.probe.localCPUs = rs.ClientCPUs, rs.LocalCPUs
		if r := rs.Replicated; r != nil {
			w.probe.replicas, w.probe.sentinels = pidsOf(r.Replicas()), pidsOf(r.Sentinels())
		}
	}
	if proxied {
		w.proxy = &proxyProfile{}
	}
	return w
}

// NewServiceWindowReadings reads the machine around a lock service's
// cell window: its local servers' processes (their trees, where a
// server's work is done by its children) are the servers' CPU.
func NewServiceWindowReadings(ctx context.Context, m *Masters) *WindowReadings {
	v := m.Service
	w := &WindowReadings{ctx: ctx, addrs: v.Display(), probe: newMachineProbe(v.Display(), v.Pids(), nil)}
	if w.probe != nil {
		w.probe.trees = v.Trees()
	}
	return w
}

// commandStats are the masters' command counters (nil: not Redis).
func (w *WindowReadings) commandStats(ctx context.Context) []map[string]engine.CommandStat {
	if w.eng == nil {
		return nil
	}
	return w.eng.CommandStats(ctx)
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

// Finish puts the machine split, the Redis cost and the limit verdict into
// the result.
func (w *WindowReadings) Finish(res *results.Run, st *workloads.Stats) {
	addrs := w.addrs
	if w.probe != nil && (w.before != nil || w.eng == nil) {
		w.probe.fallback = st.ServerCPU
		res.Machine = w.probe.split(addrs)
	}
	if w.probe != nil && res.Servers != nil && len(w.probe.replicas)+len(w.probe.sentinels) > 0 {
		w.probe.topologyCPU(res.Servers, st.Acquired)
	}
	if w.before != nil && w.after != nil {
		masters := make([]results.MasterWindow, len(addrs))
		for i, a := range addrs {
			masters[i] = results.MasterWindow{Addr: a, Before: counts(w.before[i]), After: counts(w.after[i]), CPUSeconds: -1}
			if i < len(st.ServerCPU) && st.ServerCPU[i] >= 0 {
				masters[i].CPUSeconds = st.ServerCPU[i].Seconds()
			}
		}
		res.RedisCost = results.NewRedisCost(masters, st.Acquired, st.Measured.Seconds())
	}
	l := results.LimitOf(res)
	res.Limit = &l
	switch l.By {
	case results.LimitGenerator, results.LimitMachine:
		res.Warnings = append(res.Warnings, fmt.Sprintf("limited by the %s (%s): the throughput is a lower bound of what the masters sustain", limitNoun(l.By), l.Evidence))
	}
}

func pidsOf(ms []*localmasters.Master) []int {
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = m.Pid()
	}
	return out
}

func limitNoun(by string) string {
	if by == results.LimitGenerator {
		return "load generator"
	}
	return "shared machine"
}

func counts(m map[string]engine.CommandStat) map[string]results.CommandCount {
	if m == nil {
		return nil
	}
	out := make(map[string]results.CommandCount, len(m))
	for k, v := range m {
		out[k] = results.CommandCount{Calls: v.Calls, Usec: v.Usec}
	}
	return out
}
