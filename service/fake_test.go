package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lockbench/faults"
	"lockbench/internal/redistest"
	"lockbench/lock"
	"lockbench/plan"
	"lockbench/results"
	"lockbench/runner"
	"lockbench/service"
)

// A new lock service is its package and nothing else: this one, an
// in-process lock table, is registered here only, and a benchmark cell
// and a fault cell (a crash of its server, two clients, the resource
// checked) run on it end to end through plan, bench, runner and chaos.
func TestFakeServiceRunsBothCells(t *testing.T) {
	service.Register(fake{})
	t.Run("benchmark", func(t *testing.T) {
		c := runOne(t, `settings: {topology: fake, workers: 4, keys: 8, duration: 500ms, warmup: 0s, hold: 1ms}`, false)
		r := c.Combined
		switch {
		case r.Outcomes.Acquired == 0:
			t.Fatal("no acquisitions: the cell measured nothing")
		case r.Config.Topology != "fake" || r.Config.ServerVersion != "fake 1":
			t.Errorf("config: topology %q, server %q; want the fake's", r.Config.Topology, r.Config.ServerVersion)
		case r.BaselineParallel == nil || r.BaselineParallel.Count == 0:
			t.Error("no baseline of the service's plain writes")
		case r.Config.Persistence != "memory":
			t.Errorf("persistence %q; want the one the service recorded", r.Config.Persistence)
		}
	})
	t.Run("fault", func(t *testing.T) {
		redistest.Require(t) // the protected resource is a redis-server
		c := runOne(t, `
settings: {topology: fake, clients: 2, workers: 3, keys: 4, hold: 2ms, duration: 1500ms, min_acquisitions: 10}
faults: [{at: 500ms, kind: crash, master_index: [0], restart: 200ms}]
`, true)
		r := c.Combined
		crashed := false
		for _, e := range r.Events {
			crashed = crashed || e.Kind == "crash"
		}
		switch {
		case r.Outcomes.Acquired < 10:
			t.Fatalf("%d acquisitions: the cell judged too little", r.Outcomes.Acquired)
		case !r.Safety.ResourceChecked:
			t.Error("the resource was not checked")
		case !crashed:
			t.Errorf("the crash did not happen: events %+v", r.Events)
		case r.Config.Clients != 2:
			t.Errorf("%d clients; want 2", r.Config.Clients)
		}
		// The table forgets its locks when it crashes: lost updates are
		// what the checker should find, not what this test requires.
		t.Logf("acquired %d, lost updates %d, violations %d", r.Outcomes.Acquired, r.Safety.LostUpdates, r.Safety.Violations)
	})
}

func runOne(t *testing.T, doc string, faulty bool) *runner.CellOutcome {
	t.Helper()
	sc, err := plan.Parse(t.Name()+".yaml", []byte(doc), faulty)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := sc.Cells()
	if err != nil || len(cells) != 1 {
		t.Fatalf("%d cells, %v; want 1", len(cells), err)
	}
	out, err := runner.Run(context.Background(), sc, cells, runner.Options{Scenario: t.Name(), Log: t.Output()})
	if err == nil {
		err = out.Err
	}
	if err != nil || len(out.Cells) != 1 {
		t.Fatalf("run: %v (%d cells)", err, len(out.Cells))
	}
	return out.Cells[0]
}

// fake is a lock service of one in-process table.
type fake struct{ plan.ServiceBase }

func (fake) About() string                                 { return "an in-process table" }
func (fake) Name() string                                  { return "fake" }
func (fake) ServersSetting() plan.ServersSetting           { return plan.ServersSetting{Name: "fake_servers"} }
func (fake) WaitStrategies() []string                      { return []string{"retry"} }
func (fake) Replicas() int                                 { return 0 }
func (fake) Roles() bool                                   { return false }
func (fake) Designs() []plan.Design                        { return nil }
func (fake) Check(plan.Settings) error                     { return nil }
func (fake) Members(plan.Settings) int                     { return 1 }
func (fake) ServersKey(plan.Settings) string               { return "fake" }
func (fake) Describe(plan.Settings) string                 { return "fake: 1 in-process table" }
func (fake) CanServe(plan.Cell) error                      { return nil }
func (fake) Record(_ plan.Settings, out *results.Settings) { out.Persistence = "memory" }
func (fake) CheckFault(where string, _ plan.Settings, f plan.Fault) error {
	if f.Kind != results.FaultCrash {
		return fmt.Errorf("%s.kind: %s is not available with topology fake; use crash", where, f.Kind)
	}
	return nil
}

var tables sync.Map // id → *table: the clients are this process's goroutines

func (fake) Start(_ context.Context, c plan.Cell, _ io.Writer) (service.Servers, error) {
	tb := &table{id: c.ID, held: map[string]string{}}
	tables.Store(tb.id, tb)
	return tb, nil
}

func (fake) NewClient(_ context.Context, raw json.RawMessage) (service.Client, error) {
	var id string
	if err := json.Unmarshal(raw, &id); err != nil {
		return nil, err
	}
	tb, ok := tables.Load(id)
	if !ok {
		return nil, fmt.Errorf("fake: no table %q", id)
	}
	return &client{tb: tb.(*table)}, nil
}

// table is the fake's one server: a crash forgets every lock.
type table struct {
	id     string
	mu     sync.Mutex
	down   bool
	held   map[string]string
	fence  int64
	writes int
}

var errDown = errors.New("fake: down")

func (tb *table) take(key, token string) (int64, error) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	switch {
	case tb.down:
		return 0, errDown
	case tb.held[key] != "":
		return 0, nil
	}
	tb.held[key], tb.fence = token, tb.fence+1
	return tb.fence, nil
}

func (tb *table) give(key, token string) bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if tb.down || tb.held[key] != token {
		return false
	}
	delete(tb.held, key)
	return true
}

func (tb *table) Display() []string   { return []string{"fake:" + tb.id} }
func (tb *table) Version() string     { return "fake 1" }
func (tb *table) Quorum() int         { return 1 }
func (tb *table) Pids() []int         { return nil }
func (tb *table) Trees() bool         { return false }
func (tb *table) Upstreams() []string { return nil }
func (tb *table) Record(cc *results.CellConfig, _ results.Settings) {
	v := service.InConfig(cc, tb)
	v.Servers, v.Server = "1 table", "table"
}
func (tb *table) Describe() string                               { return "fake table " + tb.id }
func (tb *table) WatchSessionEnds() (service.SessionEnds, error) { return nil, nil }
func (tb *table) Stop() error                                    { tables.Delete(tb.id); return nil }

func (tb *table) ClientConfig(plan.Cell, []string) (json.RawMessage, error) {
	return json.Marshal(tb.id)
}

func (tb *table) Targets(_ plan.Cell, t *faults.Targets) []string {
	t.Masters = append(t.Masters, tb)
	return nil
}

// The table as a crash's target.
func (tb *table) Addr() string { return "fake:" + tb.id }
func (tb *table) Pid() int     { return 0 }

func (tb *table) Kill() error {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.down, tb.held = true, map[string]string{}
	return nil
}

func (tb *table) Restart(context.Context) error {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.down = false
	return nil
}

// client is the fake's lock client.
type client struct {
	tb    *table
	rpcs  atomic.Int64
	token atomic.Int64
}

func (c *client) Acquire(ctx context.Context, key string) (*lock.Lock, lock.Result) {
	start := time.Now()
	c.rpcs.Add(1)
	token := strconv.FormatInt(c.token.Add(1), 10) + "@" + fmt.Sprintf("%p", c)
	fence, err := c.tb.take(key, token)
	res := lock.Result{Attempts: 1, Elapsed: time.Since(start), Sent: 1, Validity: time.Hour}
	switch {
	case err != nil:
		res.Err = err
		return nil, res
	case fence == 0:
		res.Taken = true
		return nil, res
	}
	res.Acquired = true
	return &lock.Lock{Key: key, Token: token, Start: start, ValidUntil: start.Add(time.Hour), Fence: fence}, res
}

func (c *client) Release(_ context.Context, l *lock.Lock) lock.OpResult {
	start := time.Now()
	c.rpcs.Add(1)
	ok := c.tb.give(l.Key, l.Token)
	return lock.OpResult{OK: ok, Count: b2i(ok), Elapsed: time.Since(start), Sent: 1}
}

func (c *client) Close()                                           {}
func (c *client) CountKeys(context.Context, string) (int64, error) { return 0, nil }
func (c *client) Put(context.Context, string) error                { c.rpcs.Add(1); return nil }
func (c *client) Delete(context.Context, string) error             { return nil }
func (c *client) RPCs() int64                                      { return c.rpcs.Load() }
func (c *client) Record(v *results.ServiceSettings)                { v.Calls, v.Baseline = "calls", "a no-op" }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
