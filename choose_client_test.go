package main

import (
	"path/filepath"
	"strings"
	"testing"

	"lockbench/internal/redistest"
	"lockbench/redislock/shippedadapters"
)

// choose --quick --client NAME=CMD plans a row for each external client
// beside the quick designs: fault cells and price cells on the
// topology's servers, single-fixed-ttl's not applicable pairs. A dry run:
// nothing runs, the adapters are not started.
func TestChooseClientQuickPlan(t *testing.T) {
	redistest.Require(t)
	stdout, stderr, code := lockbench(t, "choose", "--quick", "--dry-run", "--out", filepath.Join(t.TempDir(), "which"),
		"--client", "node-redlock="+shippedadapters.NodeRedlockScript, "--client", "redis-py@single="+shippedadapters.RedisPyScript)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"node-redlock.none", "node-redlock.crash", "node-redlock.pause-holder", "node-redlock.price-64", "node-redlock.hot",
		"redis-py.none", "redis-py.crash", "redis-py.common",
		"node-redlock × leader-kill: not applicable: Redlock has no leader",
		"redis-py × partition-holder: not applicable: a lock of fixed TTL expires",
		"redis-py × lag-failover: not applicable: no replication: one master",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the plan lacks %q:\n%s", want, stdout)
		}
	}
}

// A bad --client is one line naming client, exit 2, nothing started.
func TestChooseClientBadInput(t *testing.T) {
	for spec, seen := range map[string]string{
		"node-redlock":                   `client: "node-redlock" is not accepted; use NAME=CMD or NAME@single=CMD`,
		"x=/nonexistent/adapter":         `client: "/nonexistent/adapter" is not an executable program`,
		"single=" + anyProgram():         `client: name "single" is a design of lockbench's own`,
		"x@replicated=" + anyProgram():   `client: topology "replicated" is not accepted`,
		"x=" + anyProgram() + " --a,b=c": `client: command`,
	} {
		_, stderr, code := lockbench(t, "choose", "--quick", "--dry-run", "--client", spec)
		if lines := strings.Split(strings.TrimSpace(stderr), "\n"); code != 2 || len(lines) != 1 || !strings.Contains(stderr, seen) {
			t.Errorf("--client %q: exit %d, stderr %q; want exit 2 and one line with %q", spec, code, stderr, seen)
		}
	}
	_, stderr, code := lockbench(t, "choose", "--dry-run", "--client", "a="+anyProgram(), "--client", "a="+anyProgram())
	if code != 2 || !strings.Contains(stderr, `client: name "a" is given twice`) {
		t.Errorf("a name twice: exit %d, %q", code, stderr)
	}
}

// anyProgram is a program that exists: the lockbench binary under test.
func anyProgram() string { return binary }
