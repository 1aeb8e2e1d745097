package redislock_test

import (
	"strings"
	"testing"
	"time"

	"lockbench/faults"
	"lockbench/internal/redistest"
	"lockbench/plan"
	"lockbench/pool"
	_ "lockbench/redislock" // the topologies CanServe asks about
	"lockbench/results"
)

// benchCell is a benchmark cell of the defaults changed by mod.
func benchCell(mod func(*plan.Settings)) plan.Cell {
	s := plan.Defaults()
	mod(&s)
	return plan.Cell{Settings: s}
}

// What this machine must have for a cell (the look-ups that were
// plan.Settings.Validate's and plan.Settings.CheckServers'): persistence
// and pinning need real redis-server masters, pinning needs CPUs this
// process may use.
func TestCanServe(t *testing.T) {
	redistest.Require(t)
	for _, c := range []struct {
		name string
		cell plan.Cell
		want string // "" = served
	}{
		{"persistence on embedded masters", benchCell(func(s *plan.Settings) { s.Persistence, s.Embedded = "aof-always", "always" }),
			`persistence: "aof-always" needs real redis-server masters`},
		{"persistence on redis-server", benchCell(func(s *plan.Settings) { s.Persistence = "aof-always" }), ""},
		{"no persistence on embedded masters", benchCell(func(s *plan.Settings) { s.Persistence, s.Embedded = "none", "always" }), ""},
		{"persistence on external masters", benchCell(func(s *plan.Settings) {
			s.Persistence, s.Embedded, s.Masters = "aof-always", "always", []string{"10.0.0.1:6379"}
		}), ""},
		{"pinning to CPUs this process lacks", benchCell(func(s *plan.Settings) { s.LocalCPUs = "0-4095" }), "local-cpus: CPU"},
		{"pinning embedded masters", benchCell(func(s *plan.Settings) { s.LocalCPUs = "0-4095"; s.Embedded = "always" }),
			"local-cpus: needs real redis-server masters"},
		{"a fault cell", plan.Cell{Faulty: true, Settings: plan.FaultDefaults()}, ""},
	} {
		err := pool.CanServe(c.cell)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// Without redis-server in PATH, embedded masters stand in (auto): they
// cannot persist, and a fault cell cannot run at all.
func TestCanServeWithoutRedisServer(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if err := pool.CanServe(benchCell(func(s *plan.Settings) { s.Persistence = "aof-everysec" })); err == nil ||
		!strings.Contains(err.Error(), `persistence: "aof-everysec" needs real redis-server masters`) {
		t.Errorf("persistence without redis-server: %v", err)
	}
	if err := pool.CanServe(benchCell(func(s *plan.Settings) { s.LocalCPUs = "0" })); err == nil ||
		!strings.Contains(err.Error(), "local-cpus: needs real redis-server masters") {
		t.Errorf("pinning without redis-server: %v", err)
	}
	if err := pool.CanServe(benchCell(func(*plan.Settings) {})); err != nil {
		t.Errorf("embedded masters serve the defaults: %v", err)
	}
	if err := pool.CanServe(plan.Cell{Faulty: true, Settings: plan.FaultDefaults()}); err == nil ||
		!strings.Contains(err.Error(), "redis-server not found") {
		t.Errorf("a fault cell without redis-server: %v", err)
	}
}

// A clock jump needs libfaketime.
func TestCanServeClockJump(t *testing.T) {
	redistest.Require(t)
	redistest.RequireTool(t, faults.FaketimeAvailable())
	c := plan.Cell{Faulty: true, Settings: plan.FaultDefaults(),
		Faults: []plan.Fault{{Kind: results.FaultClockJump, Masters: []int{1}, By: 5 * time.Second}}}
	if err := pool.CanServe(c); err != nil {
		t.Fatal(err)
	}
}
