package lock

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// A lock service is its package and this seam: etcdlock, zklock, pglock
// and the redsync driver reach neither the worker loop, nor the runner,
// nor plan, nor bench; the seam itself imports no lockbench package. The
// runner is listed as a control: it does reach the worker loop.
func TestServicesReachOnlyTheSeam(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	deps := func(pkg string) []string {
		t.Helper()
		out, err := exec.Command(goTool, "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	above := map[string]bool{"lockbench/workloads": true, "lockbench/runner": true, "lockbench/plan": true, "lockbench/bench": true, "lockbench/chaos": true}
	for _, svc := range []string{"lockbench/etcdlock", "lockbench/zklock", "lockbench/pglock", "lockbench/drivers/redsyncdriver"} {
		for _, d := range deps(svc) {
			if above[d] {
				t.Errorf("%s imports %s", svc, d)
			}
		}
	}
	for _, d := range deps("lockbench/lock") {
		if strings.HasPrefix(d, "lockbench/") && d != "lockbench/lock" {
			t.Errorf("the seam imports %s", d)
		}
	}
	if !slices.Contains(deps("lockbench/runner"), "lockbench/workloads") {
		t.Error("the control failed: runner does not reach workloads (is go list working?)")
	}
}
