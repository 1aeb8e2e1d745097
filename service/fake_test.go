package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lockbench/internal/redistest"
	"lockbench/lock"
	"lockbench/plan"
	"lockbench/runner"
	"lockbench/service"
)

// A new lock service is its package and nothing else: this one, an
// in-process lock table that writes only the contract's required
// methods, is registered here only, and a benchmark cell and a fault cell
// (a pause of one of its two clients, the resource checked) run on it end
// to end through plan, pool, runner and chaos.
func TestFakeServiceRunsBothCells(t *testing.T) {
	service.Register(fake{})
	t.Run("benchmark", func(t *testing.T) {
		c := runOne(t, `settings: {topology: fake, workers: 4, keys: 8, duration: 500ms, warmup: 0s, hold: 1ms}`, false)
		r := c.Combined
		switch {
		case r.Outcomes.Acquired == 0:
			t.Fatal("no acquisitions: the cell measured nothing")
		case r.Config.Topology != "fake" || r.Config.Service == nil:
			t.Errorf("config: topology %q, service part %v; want the fake's", r.Config.Topology, r.Config.Service)
		case r.BaselineParallel != nil:
			t.Error("a baseline of plain writes the fake does not have")
		}
	})
	t.Run("fault", func(t *testing.T) {
		redistest.Require(t) // the protected resource is a redis-server
		c := runOne(t, `
settings: {topology: fake, clients: 2, workers: 3, keys: 4, hold: 2ms, duration: 1500ms, min_acquisitions: 10}
faults: [{at: 500ms, kind: pause, client_index: [0], for: 400ms}]
`, true)
		r := c.Combined
		paused := false
		for _, e := range r.Events {
			paused = paused || e.Kind == "pause"
		}
		switch {
		case r.Outcomes.Acquired < 10:
			t.Fatalf("%d acquisitions: the cell judged too little", r.Outcomes.Acquired)
		case !r.Safety.ResourceChecked:
			t.Error("the resource was not checked")
		case !paused:
			t.Errorf("the pause did not happen: events %+v", r.Events)
		case r.Config.Clients != 2:
			t.Errorf("%d clients; want 2", r.Config.Clients)
		case r.Safety.Violations != 0:
			// The table's locks never expire: a paused holder keeps its
			// lock, so no one else may hold it meanwhile.
			t.Errorf("%d violations on a lock that never expires", r.Safety.Violations)
		}
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

// fake is a lock service of one in-process table. It writes only the
// contract's required methods (TestContractRequiredMethods counts them);
// the embedded defaults give the rest.
type fake struct{ plan.ServiceBase }

func (fake) Name() string              { return "fake" }
func (fake) About() string             { return "an in-process table" }
func (fake) Check(plan.Settings) error { return nil }

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

// table is the fake's one server.
type table struct {
	service.ServersBase
	id    string
	mu    sync.Mutex
	held  map[string]string
	fence int64
}

func (tb *table) take(key, token string) int64 {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if tb.held[key] != "" {
		return 0
	}
	tb.held[key], tb.fence = token, tb.fence+1
	return tb.fence
}

func (tb *table) give(key, token string) bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if tb.held[key] != token {
		return false
	}
	delete(tb.held, key)
	return true
}

func (tb *table) Display() []string { return []string{"fake:" + tb.id} }
func (tb *table) Stop() error       { tables.Delete(tb.id); return nil }

func (tb *table) ClientConfig(plan.Cell, []string) (json.RawMessage, error) {
	return json.Marshal(tb.id)
}

// client is the fake's lock client.
type client struct {
	service.ClientBase
	tb    *table
	token atomic.Int64
}

func (c *client) Acquire(ctx context.Context, key string) (*lock.Lock, lock.Result) {
	start := time.Now()
	token := strconv.FormatInt(c.token.Add(1), 10) + "@" + fmt.Sprintf("%p", c)
	fence := c.tb.take(key, token)
	res := lock.Result{Attempts: 1, Elapsed: time.Since(start), Sent: 1, Validity: time.Hour}
	if fence == 0 {
		res.Taken = true
		return nil, res
	}
	res.Acquired = true
	return &lock.Lock{Key: key, Token: token, Start: start, ValidUntil: start.Add(time.Hour), Fence: fence}, res
}

func (c *client) Release(_ context.Context, l *lock.Lock) lock.OpResult {
	start := time.Now()
	ok := c.tb.give(l.Key, l.Token)
	return lock.OpResult{OK: ok, Count: b2i(ok), Elapsed: time.Since(start), Sent: 1}
}

func (c *client) Close() {}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
