package runner

import (
	"testing"
	"time"

	"lockbench/chaos"
	"lockbench/engine"
	"lockbench/workloads"
)

// Clients that share a process (client_mode goroutines) each report the
// process's CPU and shared probe: a cell counts those once; clients in
// processes of their own add up. Their counts always add up.
func TestSumClientsCountsSharedFiguresOncePerProcess(t *testing.T) {
	t0 := time.Now()
	counts := func(acq int64) workloads.Counts {
		return workloads.Counts{Acquired: acq, NotAcquired: 1, Errors: 2, PerMaster: [][engine.NumOutcomes]int64{{engine.OK: acq}}}
	}
	goroutines := []chaos.ClientResult{
		{Index: 0, Pid: 100, Counts: counts(10), CPUSeconds: 2, ProbeViolations: 3, End: t0.Add(time.Second)},
		{Index: 1, Pid: 100, Counts: counts(20), CPUSeconds: 2.5, ProbeViolations: 4, End: t0.Add(2 * time.Second)},
	}
	s := sumClients(goroutines, t0, 1)
	if s.clientCPU != 2.5 || s.probeViol != 4 {
		t.Errorf("one process: cpu %v, probe violations %d; want its largest readings 2.5 and 4", s.clientCPU, s.probeViol)
	}
	if s.Acquired != 30 || s.Attempts() != 36 || s.PerMaster[0][engine.OK] != 30 || !s.end.Equal(t0.Add(2*time.Second)) {
		t.Errorf("acquired %d attempts %d per master %v end %v; want 30, 36, 30, t0+2s", s.Acquired, s.Attempts(), s.PerMaster, s.end.Sub(t0))
	}
	goroutines[1].Pid = 101 // now two processes
	s = sumClients(goroutines, t0, 1)
	if s.clientCPU != 4.5 || s.probeViol != 7 {
		t.Errorf("two processes: cpu %v, probe violations %d; want 4.5 and 7", s.clientCPU, s.probeViol)
	}
}
