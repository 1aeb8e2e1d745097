//go:build linux

package localmasters_test

import (
	"context"
	"fmt"
	"lockbench/internal/cpulist"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lockbench/internal/affinity"
	"lockbench/internal/redistest"
	"lockbench/redislock/localmasters"
)

// cpusAllowed reads Cpus_allowed_list of a process or thread status file.
func cpusAllowed(t *testing.T, status string) string {
	t.Helper()
	b, err := os.ReadFile(status)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("%s: no Cpus_allowed_list", status)
	return ""
}

// --local-cpus: a started master (every thread of it, and a restarted one)
// runs only on the CPUs it was given, as the kernel reports.
func TestMastersPinnedToCPUs(t *testing.T) {
	bin := redistest.Require(t)
	allowed, err := affinity.AllowedCPUs(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(allowed) < 2 {
		t.Skipf("this process may use %d CPU(s); pinning apart needs 2", len(allowed))
	}
	want := allowed[len(allowed)-1:]
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	set, err := localmasters.Start(ctx, localmasters.Options{N: 1, RedisServer: bin, Embedded: "never", CPUs: want, Log: t.Output()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set.Stop() })
	m := set.Masters()[0]
	check := func(when string) {
		pid := m.Pid()
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
		if len(tasks) < 2 {
			t.Errorf("%s: %d threads of redis-server, want its background threads too", when, len(tasks))
		}
		for _, st := range append([]string{fmt.Sprintf("/proc/%d/status", pid)}, tasks...) {
			if got := cpusAllowed(t, st); got != cpulist.Format(want) {
				t.Errorf("%s: %s Cpus_allowed_list %q, want %q", when, st, got, cpulist.Format(want))
			}
		}
	}
	check("started")
	if err := m.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := m.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	check("restarted")
}
