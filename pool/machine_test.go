package pool

import (
	"math"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

// The split of a window: shares of the whole machine, masters elsewhere
// left out of it but their INFO core share kept.
func TestMachineSplit(t *testing.T) {
	t0 := time.Unix(1000, 0)
	p := &machineProbe{
		here:     []bool{true, true, false},
		fallback: []time.Duration{-1, 1500 * time.Millisecond, 4 * time.Second},
		start:    cpuSample{at: t0, cores: 2, total: 100, busy: 50, steal: 1, client: 10, masters: []float64{5, -1, -1}},
		// 10 s on 2 cores: 20 CPU s, 18 busy, 0.4 stolen; lockbench 6 s;
		// master a 2 s by /proc, master b 1.5 s by INFO (no pid).
		end: cpuSample{at: t0.Add(10 * time.Second), cores: 2, total: 120, busy: 68, steal: 1.4, client: 16, masters: []float64{7, -1, -1}},
	}
	m := p.split([]string{"127.0.0.1:1", "127.0.0.1:2", "10.0.0.9:6379"})
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if m == nil || m.Cores != 2 || !near(m.BusyShare, 0.9) || !near(m.StealShare, 0.02) || !near(m.ClientShare, 0.3) ||
		!near(m.ServersShare, 3.5/20) || !near(m.OtherShare, 0.9-0.3-3.5/20) || !m.MastersShareMachine {
		t.Fatalf("split %+v", m)
	}
	if !near(m.MasterCoreShare["127.0.0.1:1"], 0.2) || !near(m.MasterCoreShare["127.0.0.1:2"], 0.15) || !near(m.MasterCoreShare["10.0.0.9:6379"], 0.4) {
		t.Errorf("master core shares %v", m.MasterCoreShare)
	}
	if m.ProxyShare != nil {
		t.Error("no proxy, yet a proxy share")
	}
	p.end.total = p.start.total
	if p.split(nil) != nil {
		t.Error("an empty window gave a split")
	}
}

func TestMastersHere(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:6379": true, "localhost:1": true, "[::1]:7000": true,
		"redis://user:pw@127.0.0.1:6380/0": true, "10.1.2.3:6379": false, "redis.example:6379": false} {
		_, here := mastersHere(newMachineProbeFS(t), []string{addr}, nil, nil, "redis-server")
		if here[0] != want {
			t.Errorf("%s: on this machine %v, want %v", addr, here[0], want)
		}
	}
	// A pid from INFO that is not a redis-server on that port is not taken.
	pids, _ := mastersHere(newMachineProbeFS(t), []string{"127.0.0.1:6399"}, nil, []int{1}, "redis-server")
	if pids[0] != 0 {
		t.Errorf("pid 1 taken for a master: %v", pids)
	}
	pids, here := mastersHere(newMachineProbeFS(t), []string{"127.0.0.1:6399"}, []int{4242}, nil, "redis-server")
	if pids[0] != 4242 || !here[0] {
		t.Errorf("local pid: %v %v", pids, here)
	}
}

func newMachineProbeFS(t *testing.T) procfs.FS {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		t.Skip("no /proc")
	}
	return fs
}
