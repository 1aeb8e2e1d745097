package lock

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// A lock service is its package: redislock, etcdlock, zklock and pglock
// register themselves (package service) and no other package reaches
// them, so the runner, plan, pool, chaos, the worker loop, results and report run
// every service through the registry; a program names them once, in a
// blank import. A service reaches neither the worker loop, nor the
// runner, nor chaos; the seam itself imports no lockbench package. The
// program is listed as a control: it does reach every service.
func TestServicesReachOnlyTheSeam(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	list := func(format, pkg string) []string {
		t.Helper()
		out, err := exec.Command(goTool, "list", "-f", format, pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	deps := func(pkg string) []string { return list("{{join .Deps \" \"}}", pkg) }
	imports := func(pkg string) []string { return list("{{join .Imports \" \"}}", pkg) }
	services := []string{"lockbench/etcdlock", "lockbench/zklock", "lockbench/pglock", "lockbench/redislock", "lockbench/redislock/redisplan"}
	for _, pkg := range []string{"lockbench/runner", "lockbench/plan", "lockbench/pool", "lockbench/chaos", "lockbench/workloads",
		"lockbench/results", "lockbench/report", "lockbench/service", "lockbench/faults", "lockbench/metrics"} {
		for _, d := range deps(pkg) {
			if slices.Contains(services, d) {
				t.Errorf("%s reaches %s: it should look the service up", pkg, d)
			}
		}
	}
	above := map[string]bool{"lockbench/workloads": true, "lockbench/runner": true, "lockbench/chaos": true}
	// Redis' client offers its cell pool's capabilities (its own record
	// of a cell takes the worker loop's Stats): that import is the one
	// allowed.
	opensCell := map[string]string{"lockbench/redislock": "lockbench/workloads"}
	for _, svc := range append(services, "lockbench/redislock/redsyncdriver") {
		for _, d := range imports(svc) {
			if above[d] && opensCell[svc] != d {
				t.Errorf("%s imports %s", svc, d)
			}
		}
	}
	// Redis is a service like the others: no core package reaches its
	// package, the Redlock engine or its local servers, even through
	// another package (issue 54; the protected resource's redis-server is
	// internal/redisserver's, which Redis' local masters are built on).
	for _, pkg := range []string{"lockbench/runner", "lockbench/plan", "lockbench/pool", "lockbench/chaos", "lockbench/workloads",
		"lockbench/results", "lockbench/report", "lockbench/faults", "lockbench/metrics", "lockbench/lock"} {
		for _, d := range deps(pkg) {
			if d == "lockbench/redislock" || strings.HasPrefix(d, "lockbench/redislock/") {
				t.Errorf("%s reaches %s: what only Redis has reaches the core as a capability", pkg, d)
			}
		}
	}
	// The runner drives every cell through the registry and pool.Cell:
	// Redis' client is no exception it names.
	for _, d := range imports("lockbench/runner") {
		if d == "lockbench/redislock/engine" || strings.HasPrefix(d, "lockbench/drivers/") {
			t.Errorf("runner imports %s: a cell's lock is its service's client", d)
		}
	}
	for _, d := range deps("lockbench/lock") {
		if strings.HasPrefix(d, "lockbench/") {
			t.Errorf("the seam imports %s", d)
		}
	}
	for _, svc := range services {
		if !slices.Contains(deps("lockbench"), svc) {
			t.Errorf("the control failed: the program does not reach %s (is go list working, is its blank import there?)", svc)
		}
	}
}
