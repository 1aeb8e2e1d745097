package results

import (
	"math"
	"testing"
)

// Repeats: the machine shares average over the repeats' time and the
// verdict is worked out on the combined cell.
func TestCombinedRepeatsKeepReadings(t *testing.T) {
	a := *limitRun(0.95, 0.5, 0.4, 0.2, 0.1)
	b := *limitRun(0.85, 0.4, 0.3, 0.4, 0.1)
	a.MeasuredSeconds, b.MeasuredSeconds = 1, 3
	a.CommandCost = &CommandCost{CPUMicrosCycle: 10}
	b.CommandCost = &CommandCost{CPUMicrosCycle: 30}
	m := CombineRepeats([]Run{a, b})
	if m.Machine == nil || math.Abs(m.Machine.BusyShare-0.875) > 1e-9 || math.Abs(m.Machine.MasterCoreShare["a"]-0.35) > 1e-9 {
		t.Fatalf("combined machine %+v, want busy 0.875 and master a 0.35 (time-weighted)", m.Machine)
	}
	if m.Limit == nil || m.Limit.By != LimitLatency || m.CommandCost == nil || m.CommandCost.CPUMicrosCycle != 30 {
		t.Errorf("combined limit %+v cost %+v, want latency (87.5%% busy is not saturated) and the median cost", m.Limit, m.CommandCost)
	}
	// Fresh masters per repeat: different addresses are not averaged.
	b.Machine.MasterCoreShare = map[string]float64{"x": 0.6}
	m = CombineRepeats([]Run{a, b, a})
	if got := m.Machine.MasterCoreShare; len(got) != 2 || got["a"] != 0.2 {
		t.Errorf("fresh masters: %v, want the median repeat's own shares", got)
	}
}

func TestCombineRepeats(t *testing.T) {
	mk := func(cps, p99 float64, acq int64, cpu float64) Run {
		return Run{
			Throughput:     Throughput{CyclesPerSec: cps, AcquiresPerSec: cps},
			AcquireLatency: Latency{P50: p99 / 10, P99: p99, Max: p99 * 3, Mean: p99 / 5, Count: acq},
			ReleaseLatency: Latency{P50: 1, P99: 2, Count: acq},
			Outcomes: Outcomes{Tally: Tally{Acquired: acq}, PerMaster: map[string]MasterOutcomes{
				"127.0.0.1:1": {OK: acq}, "127.0.0.1:2": {OK: acq}}},
			Client:          Client{CPUSeconds: cpu, Cores: 2, CPUShare: 0.3},
			MeasuredSeconds: 1,
		}
	}
	second := mk(300, 900, 300, 2)
	second.Outcomes.PerMaster = map[string]MasterOutcomes{"127.0.0.1:7": {OK: 300}, "127.0.0.1:8": {OK: 300}} // restarted masters
	c := CombineRepeats([]Run{mk(100, 500, 100, 1), second, mk(200, 700, 200, 1)})
	if c.Repeats == nil || c.Repeats.Count != 3 || len(c.Repeats.Runs) != 3 {
		t.Fatalf("repeats block: %+v", c.Repeats)
	}
	if c.Throughput.CyclesPerSec != 200 || c.AcquireLatency.P99 != 700 {
		t.Errorf("headline is not the median: %v cycles/s, p99 %v", c.Throughput.CyclesPerSec, c.AcquireLatency.P99)
	}
	if c.Outcomes.Acquired != 600 || c.AcquireLatency.Count != 600 || c.AcquireLatency.Max != 2700 {
		t.Errorf("counts/max do not add: %+v", c.AcquireLatency)
	}
	if len(c.Outcomes.PerMaster) != 2 || c.Outcomes.PerMaster["127.0.0.1:1"].OK != 600 {
		t.Errorf("per master by position: %+v", c.Outcomes.PerMaster)
	}
	if c.Client.Cores != 2 || c.Client.CPUSeconds != 4 || c.MeasuredSeconds != 3 {
		t.Errorf("client %+v, measured %v", c.Client, c.MeasuredSeconds)
	}
	sp := c.Repeats.Spread["cycles_per_sec"]
	if sp.Min != 100 || sp.Max != 300 || sp.Median != 200 || sp.N != 3 {
		t.Errorf("spread %+v", sp)
	}
	if got := Samples(c, Figures[0]); len(got) != 3 || got[1] != 300 {
		t.Errorf("samples %v", got)
	}
	if one := CombineRepeats([]Run{mk(1, 1, 1, 1)}); one.Repeats != nil {
		t.Error("one repeat got a repeats block")
	}
}

// A replicated set's replicas and Sentinels stay counted when repeats are
// combined: every server's CPU per cycle, not the master's alone.
func TestRepeatsKeepTopologyCPU(t *testing.T) {
	run := func(cycles float64) Run {
		return Run{Throughput: Throughput{CyclesPerSec: cycles}, MeasuredSeconds: 1, Outcomes: Outcomes{Tally: Tally{Acquired: int64(cycles)}},
			Servers: &Servers{CPUSeconds: 0.1, ReplicaCPUSeconds: 0.05, MonitorCPUSeconds: 0.01, PerMaster: map[string]float64{"m": 0.1}}}
	}
	m := CombineRepeats([]Run{run(1000), run(1000)})
	if got := m.Servers.TopologyMicrosCycle(); got < 159 || got > 161 {
		t.Fatalf("every server's CPU per cycle %v µs, want 160 (0.32 s over 2,000 cycles)", got)
	}
}
