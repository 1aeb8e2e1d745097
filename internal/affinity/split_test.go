//go:build linux

package affinity

import (
	"fmt"
	"strings"
	"testing"

	"lockbench/internal/cpulist"
)

func TestCPUList(t *testing.T) {
	got, err := cpulist.Parse("3, 0-1,1")
	if err != nil || fmt.Sprint(got) != "[0 1 3]" || cpulist.Format(got) != "0-1,3" {
		t.Errorf("parse %v %v, format %q", got, err, cpulist.Format(got))
	}
	for _, bad := range []string{"", "a", "2-1", "-1", "1-"} {
		if _, err := cpulist.Parse(bad); err == nil || !strings.Contains(err.Error(), "local-cpus:") {
			t.Errorf("%q: %v, want a local-cpus error", bad, err)
		}
	}
	allowed, _ := AllowedCPUs(0)
	if _, _, err := SplitCPUs(cpulist.Format(allowed)); err == nil || !strings.Contains(err.Error(), "leaves lockbench no CPU") {
		t.Errorf("all CPUs to the masters: %v, want refused", err)
	}
	if _, _, err := SplitCPUs("4000"); err == nil || !strings.Contains(err.Error(), "CPU 4000") {
		t.Errorf("a CPU not here: %v, want refused", err)
	}
}
