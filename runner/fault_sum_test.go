package runner

import (
	"testing"
	"time"

	"lockbench/chaos"
	"lockbench/redislock/engine"
	"lockbench/results"
	"lockbench/workloads"
)

// Clients that share a process (client_mode goroutines) each report the
// process's CPU and shared probe: a cell counts those once; clients in
// processes of their own add up. Their counts always add up, and the
// window runs from the first start to the last end.
func TestSumClientsCountsSharedFiguresOncePerProcess(t *testing.T) {
	t0 := time.Now()
	stats := func(acq int64, cpu float64, d time.Duration) *workloads.Stats {
		return &workloads.Stats{Folded: workloads.Folded{Counts: workloads.Counts{Tally: results.Tally{Acquired: acq, NotAcquired: 1, Errors: 2}, PerMaster: [][engine.NumOutcomes]int64{{engine.OK: acq}}},
			CPU: time.Duration(cpu * float64(time.Second)), WindowStart: t0, Measured: d, PerWorker: []int64{acq}}}
	}
	clients := []chaos.ClientResult{
		{Index: 0, Pid: 100, Stats: stats(10, 2, time.Second), ProbeViolations: 3},
		{Index: 1, Pid: 100, Stats: stats(20, 2.5, 2*time.Second), ProbeViolations: 4},
	}
	r := &cellRun{}
	s, err := r.sum(clients)
	if err != nil {
		t.Fatal(err)
	}
	if s.CPU != 2500*time.Millisecond || probeViolations(clients) != 4 {
		t.Errorf("one process: cpu %v, probe violations %d; want its largest readings 2.5s and 4", s.CPU, probeViolations(clients))
	}
	if s.Acquired != 30 || s.Attempts() != 36 || s.PerMaster[0][engine.OK] != 30 || s.Measured != 2*time.Second || len(s.PerWorker) != 2 {
		t.Errorf("acquired %d attempts %d per master %v window %v workers %v; want 30, 36, 30, 2s, 2 workers", s.Acquired, s.Attempts(), s.PerMaster, s.Measured, s.PerWorker)
	}
	clients[1].Pid = 101 // now two processes
	if s, _ = r.sum(clients); s.CPU != 4500*time.Millisecond || probeViolations(clients) != 7 {
		t.Errorf("two processes: cpu %v, probe violations %d; want 4.5s and 7", s.CPU, probeViolations(clients))
	}
}
