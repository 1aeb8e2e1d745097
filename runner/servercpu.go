package runner

import (
	"slices"
	"time"

	"lockbench/pool"
	"lockbench/results"
)

// serverCPU reads a fault cell's lock servers' CPU over its run (the
// resource's server left out), so that its quiet cell has a price: what
// a lock costs the servers. A server a fault restarted is a new process,
// whose CPU starts again: then nothing is said.
type serverCPU struct {
	pids  []int
	trees bool
	start []time.Duration
}

func (r *cellRun) startServerCPU() *serverCPU {
	m := r.servers
	pids := slices.DeleteFunc(m.Pids(), func(p int) bool { return p == 0 || p == m.ResourcePid() })
	w := &serverCPU{pids: pids, trees: m.Service.Trees()}
	w.start = pool.ProcessCPU(pids, w.trees)
	return w
}

// finish puts the servers' CPU per lock cycle into res, when every server
// ran the whole cell as the same process.
func (w *serverCPU) finish(res *results.Run, pidsNow []int) {
	if w == nil || len(w.pids) == 0 || res.Outcomes.Acquired == 0 {
		return
	}
	for _, p := range w.pids {
		if !slices.Contains(pidsNow, p) {
			return // restarted: its CPU began again
		}
	}
	var total time.Duration
	for i, d := range pool.ProcessCPU(w.pids, w.trees) {
		if d < 0 || w.start[i] < 0 {
			return
		}
		total += d - w.start[i]
	}
	res.Servers = &results.Servers{CPUSeconds: total.Seconds(), CPUMicrosCycle: total.Seconds() * 1e6 / float64(res.Outcomes.Acquired)}
}
