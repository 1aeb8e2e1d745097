package runner

import (
	"testing"
	"time"

	"lockbench/chaos"
	"lockbench/results"
	"lockbench/workloads"
)

// An adapter shared by a process's clients (the cell's lock) counts once;
// the adapters of separate clients add up; one not read makes the sum
// unknown. The client CPU per cycle is lockbench's and the adapters'.
func TestSumClientsCountsEachAdapterOnce(t *testing.T) {
	t0 := time.Now()
	stats := func(adapterPid int, adapterCPU time.Duration) *workloads.Stats {
		return &workloads.Stats{Folded: workloads.Folded{Counts: workloads.Counts{Tally: results.Tally{Acquired: 1000}},
			CPU: time.Second, WindowStart: t0, Measured: 2 * time.Second, AdapterPid: adapterPid, AdapterCPU: adapterCPU}}
	}
	r := &cellRun{}
	for _, tc := range []struct {
		name    string
		clients []chaos.ClientResult
		want    time.Duration
	}{
		{"shared", []chaos.ClientResult{{Pid: 100, Stats: stats(7, 3*time.Second)}, {Pid: 100, Stats: stats(7, 2*time.Second)}}, 3 * time.Second},
		{"own", []chaos.ClientResult{{Pid: 100, Stats: stats(7, 3*time.Second)}, {Pid: 100, Stats: stats(8, 2*time.Second)}}, 5 * time.Second},
		{"processes", []chaos.ClientResult{{Pid: 100, Stats: stats(7, 3*time.Second)}, {Pid: 101, Stats: stats(7, 2*time.Second)}}, 5 * time.Second},
		{"not read", []chaos.ClientResult{{Pid: 100, Stats: stats(7, 3*time.Second)}, {Pid: 100, Stats: stats(7, -1)}}, -1},
	} {
		s, err := r.sum(tc.clients)
		if err != nil {
			t.Fatal(err)
		}
		if s.AdapterCPU != tc.want || s.AdapterPid == 0 {
			t.Errorf("%s: adapter CPU %v (pid %d), want %v", tc.name, s.AdapterCPU, s.AdapterPid, tc.want)
		}
		c := s.Result(workloads.Replies{}, nil, t0).Client
		if tc.want < 0 {
			if c.IncludesAdapter || c.CPUSeconds != s.CPU.Seconds() {
				t.Errorf("%s: client %+v; want lockbench's CPU alone", tc.name, c)
			}
			continue
		}
		own, ad := s.CPU.Seconds(), tc.want.Seconds()
		if !c.IncludesAdapter || c.CPUSeconds != own+ad || c.LockbenchCPUSeconds != own || c.AdapterCPUSeconds != ad ||
			c.CPUMicrosCycle != (own+ad)*1e6/2000 || c.AdapterCPUMicrosCycle != ad*1e6/2000 || c.LockbenchCPUMicrosCycle != own*1e6/2000 {
			t.Errorf("%s: client %+v; want lockbench %vs + adapter %vs over 2000 cycles", tc.name, c, own, ad)
		}
	}
}

// A fault cell's result names its clients' library (each client's
// adapter said the same), with what their adapters did added up; a cell
// of lockbench's own client names none.
func TestFaultCellRecordsAdapter(t *testing.T) {
	a := func(late int64) *results.AdapterSettings {
		return &results.AdapterSettings{Library: "node-redlock", Version: "4.2.0", LateGrants: late, Cancels: 1}
	}
	got := adapterOf([]chaos.ClientResult{{Adapter: a(2)}, {Adapter: a(3)}})
	if got == nil || got.Library != "node-redlock" || got.Version != "4.2.0" || got.LateGrants != 5 || got.Cancels != 2 {
		t.Errorf("two clients' adapters: %+v; want node-redlock 4.2.0, 5 late grants, 2 cancels", got)
	}
	if got := adapterOf([]chaos.ClientResult{{}, {}}); got != nil {
		t.Errorf("lockbench's own clients: %+v; want none", got)
	}
}
