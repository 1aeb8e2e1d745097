package results

import (
	"bytes"
	"strings"
	"testing"
)

// An external client's CPU is lockbench's and its adapter's: both kept
// apart when runs merge, and both said in the text.
func TestClientIncludesAdapter(t *testing.T) {
	run := func(own, adapter float64, cycles int64) Run {
		c := Client{CPUSeconds: own, Cores: 2}
		c.AddAdapter(adapter, cycles, 10)
		return Run{Outcomes: Outcomes{Tally: Tally{Acquired: cycles}}, Client: c, MeasuredSeconds: 10, Throughput: Throughput{CyclesPerSec: float64(cycles) / 10}}
	}
	r := run(1, 3, 1000)
	if c := r.Client; c.CPUSeconds != 4 || c.CPUMicrosCycle != 4000 || c.LockbenchCPUMicrosCycle != 1000 || c.AdapterCPUMicrosCycle != 3000 || c.CPUShare != 0.2 {
		t.Errorf("one run: %+v; want 4 s, 4000 = 1000 + 3000 µs/cycle, share 0.2", c)
	}
	m := MergeRuns([]Run{r, run(2, 2, 3000)}, nil)
	if c := m.Client; !c.IncludesAdapter || c.CPUSeconds != 8 || c.LockbenchCPUSeconds != 3 || c.AdapterCPUSeconds != 5 ||
		c.CPUMicrosCycle != 2000 || c.LockbenchCPUMicrosCycle != 750 || c.AdapterCPUMicrosCycle != 1250 {
		t.Errorf("merged: %+v; want 8 s = 3 + 5 over 4000 cycles", c)
	}
	var b bytes.Buffer
	printCosts(&b, &r)
	if want := "client: 4.00 CPU s, 4000.0 CPU µs/cycle (lockbench 1000.0 + adapter 3000.0), 20% of 2 cores"; !strings.Contains(b.String(), want) {
		t.Errorf("text %q; want %q", b.String(), want)
	}
	plain := Run{Client: Client{CPUSeconds: 1, CPUMicrosCycle: 1000, Cores: 2}}
	b.Reset()
	printCosts(&b, &plain)
	if strings.Contains(b.String(), "adapter") {
		t.Errorf("without an adapter: %q", b.String())
	}
}
