package results

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLoadPathDrawsNothing: the packages that generate load (and chaos,
// which walks the same path, and plan and results, which they build on)
// reach neither gonum nor report, so a load generator's binary and build
// carry no plotting. results sits below them all: it reaches none of the
// packages that use it. The report package is listed as a control: it does
// import gonum, so the check can fail.
func TestLoadPathDrawsNothing(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	deps := func(pkgs ...string) []string {
		t.Helper()
		out, err := exec.Command(goTool, append([]string{"list", "-deps"}, pkgs...)...).Output()
		if err != nil {
			t.Fatalf("go list -deps %v: %v", pkgs, err)
		}
		return strings.Fields(string(out))
	}
	drawing := func(p string) bool { return strings.HasPrefix(p, "gonum.org/") || p == "lockbench/report" }
	for _, p := range deps("lockbench/redislock/engine", "lockbench/workloads", "lockbench/pool", "lockbench/chaos", "lockbench/plan", "lockbench/results", "lockbench/runner", "lockbench/check") {
		if drawing(p) {
			t.Errorf("the load path imports %s", p)
		}
	}
	above := []string{"lockbench/redislock/engine", "lockbench/workloads", "lockbench/plan"}
	for _, p := range deps("lockbench/results") {
		if slices.Contains(above, p) {
			t.Errorf("results imports %s, a package that builds on it", p)
		}
	}
	// Settings are checked from settings, not from the machine: plan
	// reaches neither the servers' packages nor the runner.
	for _, p := range deps("lockbench/plan") {
		if p == "lockbench/redislock/localmasters" || p == "lockbench/pool" || p == "lockbench/faults" || p == "lockbench/runner" {
			t.Errorf("plan imports %s", p)
		}
	}
	// The checker judges from outside the lock: it knows no lock client.
	for _, p := range deps("lockbench/check") {
		if p == "lockbench/redislock/engine" {
			t.Error("check imports engine")
		}
	}
	control := false
	for _, p := range deps("lockbench/report") {
		control = control || strings.HasPrefix(p, "gonum.org/")
	}
	if !control {
		t.Error("control: report lists no gonum package, so this check judges nothing")
	}
}
