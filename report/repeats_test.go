package report

import (
	"lockbench/results"
	"math"
	"testing"
)

// repeatRun is one repeat on 2 cores, five local masters sharing them.
func repeatRun(busy, client, servers float64, masterCore ...float64) *results.Run {
	r := &results.Run{
		Outcomes:         results.Outcomes{Acquired: 100_000},
		AcquireLatency:   results.Latency{P50: 800, P99: 2000, Count: 100_000},
		BaselineParallel: &results.Latency{P50: 100},
		Client:           results.Client{Cores: 2, CPUShare: client},
		Machine: &results.CPUSplit{Cores: 2, BusyShare: busy, ClientShare: client, ServersShare: servers,
			OtherShare: max(0, busy-client-servers), MastersShareMachine: true, MasterCoreShare: map[string]float64{}},
	}
	for i, s := range masterCore {
		r.Machine.MasterCoreShare[string(rune('a'+i))] = s
	}
	return r
}

func TestFsyncShare(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if got := FsyncShare(4000, 1000); !near(got, 0.75) {
		t.Errorf("fsync share %v, want 0.75", got)
	}
	if FsyncShare(900, 1000) != 0 || FsyncShare(0, 0) != 0 {
		t.Error("fsync share must be 0 when persistence was not slower")
	}
}

// Repeats: the machine shares average over the repeats' time and the
// verdict is worked out on the combined cell.
func TestCombinedRepeatsKeepReadings(t *testing.T) {
	a := *repeatRun(0.95, 0.5, 0.4, 0.2, 0.1)
	b := *repeatRun(0.85, 0.4, 0.3, 0.4, 0.1)
	a.MeasuredSeconds, b.MeasuredSeconds = 1, 3
	a.RedisCost = &results.RedisCost{CPUMicrosCycle: 10}
	b.RedisCost = &results.RedisCost{CPUMicrosCycle: 30}
	m := CombineRepeats([]results.Run{a, b})
	if m.Machine == nil || math.Abs(m.Machine.BusyShare-0.875) > 1e-9 || math.Abs(m.Machine.MasterCoreShare["a"]-0.35) > 1e-9 {
		t.Fatalf("combined machine %+v, want busy 0.875 and master a 0.35 (time-weighted)", m.Machine)
	}
	if m.Limit == nil || m.Limit.By != results.LimitLatency || m.RedisCost == nil || m.RedisCost.CPUMicrosCycle != 30 {
		t.Errorf("combined limit %+v cost %+v, want latency (87.5%% busy is not saturated) and the median cost", m.Limit, m.RedisCost)
	}
	// Fresh masters per repeat: different addresses are not averaged.
	b.Machine.MasterCoreShare = map[string]float64{"x": 0.6}
	m = CombineRepeats([]results.Run{a, b, a})
	if got := m.Machine.MasterCoreShare; len(got) != 2 || got["a"] != 0.2 {
		t.Errorf("fresh masters: %v, want the median repeat's own shares", got)
	}
}
