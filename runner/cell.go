package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"lockbench/chaos"
	"lockbench/faults"
	"lockbench/plan"
	"lockbench/pool"
	"lockbench/service"
	"lockbench/workloads"
)

// runCell is the one cell path: the cell's clients, each running the
// worker loop (workloads.Run) from t0, with the parts the cell plugs in.
// A benchmark cell is one client on this process's goroutines, on the
// cell's lock service (its baselines and window readings), with the plain
// hold; a fault cell is N clients (goroutines or processes) with the
// resource cycle, plus its fault schedule, the resource's checker, the
// history's judge and the failover and lock-loss analyses. What it started
// is stopped before it returns, also when ctx is cancelled (then the
// result is partial and marked interrupted); the servers are the pool's.
func runCell(ctx context.Context, env cellEnv) (*CellResult, error) {
	r := newCellRun(env)
	defer r.cleanup()
	if err := r.openService(ctx); err != nil {
		return nil, err
	}
	if r.obs = r.observer(); r.obs != nil {
		defer r.obs.SetWorkers(0)
	}
	startCtx, cancelStart := context.WithTimeout(ctx, 30*time.Second)
	defer cancelStart()
	if err := r.startClients(startCtx); err != nil {
		return nil, err
	}
	if err := r.startFaults(ctx); err != nil {
		return nil, err
	}
	waitSegmentStart(ctx, r.s)
	// Go. Faults due at 0 are in place before the first acquire.
	t0 := time.Now().Add(100 * time.Millisecond)
	r.sched.Start(t0, r.cell.Faults)
	run, err := r.runClients(ctx, t0)
	if err != nil {
		return r.partial(t0, run, err)
	}
	return r.collect(t0, run)
}

// partial is a cell whose clients reported an error mid-run (an external
// client's adapter that exited, hung or broke the protocol): what they
// measured until then is collected and kept, interrupted and saying why
// (Broken), and the cell still fails with err. Clients that did not all
// report (nothing measured, or one that never started) keep nothing.
func (r *cellRun) partial(t0 time.Time, run clientsRun, err error) (*CellResult, error) {
	if !run.reported || run.interrupted {
		return nil, err
	}
	res, cerr := r.collect(t0, run)
	if cerr != nil {
		return nil, err
	}
	res.Run.Interrupted, res.Run.Broken = true, err.Error()
	return res, err
}

// cellRun is one cell on its way through runCell's steps.
type cellRun struct {
	cellEnv
	s   plan.Settings
	res *CellResult

	cleanups []func() // run in reverse order when the cell ends
	// svc is the cell's lock service when its one client uses it (a
	// benchmark cell: baselines, readings, clean-up); nil: every client
	// opens its own lock (a fault cell's, through its own links).
	svc     pool.Cell
	probe   *workloads.Probe // shared by the clients in this process
	obs     chaos.Observer
	clients []chaos.Client

	// A fault cell's parts (zero without faults and a resource).
	targets       faults.Targets
	sched         *faults.Scheduler // nil: no faults (its Start does nothing)
	stopScheduler func()

	// cpu reads a fault cell's servers' CPU over its run (nil: none).
	cpu *serverCPU
	// The lock service's session ends on its servers (lockLoss).
	ends        service.SessionEnds
	endsStopped bool
	endsSeen    map[string]time.Time
	endsSource  string
}

// clientsRun is what the clients' run left: their results, the errors they
// reported and whether the cell was interrupted.
type clientsRun struct {
	results     []chaos.ClientResult
	errs        []string
	interrupted bool
	reported    bool // every client handed its result (errors or not)
}

func newCellRun(env cellEnv) *cellRun {
	r := &cellRun{cellEnv: env, s: env.cell.Settings, res: &CellResult{}, probe: &workloads.Probe{}, stopScheduler: func() {}}
	if r.checksResource() {
		r.findTargets()
	}
	return r
}

// checksResource says the cell's clients read and write a protected
// resource (a fault cell's), which its checkers judge.
func (r *cellRun) checksResource() bool { return r.servers.Resource != "" }

// openService opens the cell's lock service for its one client, unless
// the clients bring their own (each through its own links).
func (r *cellRun) openService(ctx context.Context) (err error) {
	if r.checksResource() {
		return nil
	}
	if r.svc, err = openService(ctx, r.cellEnv); err != nil {
		return err
	}
	r.cleanups = append(r.cleanups, r.svc.Close)
	return nil
}

// cleanup stops what the cell started, in reverse order.
func (r *cellRun) cleanup() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// observer is the cell's live-metrics observer (or the tests'), nil
// without one.
func (r *cellRun) observer() chaos.Observer {
	var obs chaos.Observer
	if r.opt.observe != nil {
		obs = r.opt.observe(r.cell)
	} else if mc := r.metricsCell(); mc != nil {
		mc.SetRate(r.cell.Load.Rate)
		obs = mc
	} else {
		return nil
	}
	obs.SetWorkers(r.cell.Recorded.Workers) // every client's, as the result records them
	return obs
}

// clientCount is how many clients run the cell.
func (r *cellRun) clientCount() int { return max(r.cell.Recorded.Clients, 1) }

// clientConfigs is each client's share of the cell: the cell's loop as
// plan resolved it (its quota split), its masters (through its proxies
// when there are any), keys and seed.
func (r *cellRun) clientConfigs() ([]chaos.ClientConfig, error) {
	s, n := r.s, r.clientCount()
	cfgs := make([]chaos.ClientConfig, n)
	for c := range cfgs {
		cfgs[c] = chaos.ClientConfig{Index: c, Retry: r.cell.Terms.Retry, TTL: r.cell.Terms.TTL, DriftFactor: r.cell.Terms.DriftFactor, Load: r.cell.Spec.Share(n), Prefix: r.prefix,
			Seed: r.seed + uint64(c)*7919}
		if r.checksResource() {
			cfgs[c].Resource, cfgs[c].Fencing, cfgs[c].CheckValidity, cfgs[c].GuardedWrite = r.servers.Resource, s.Fencing, s.CheckValidity, s.GuardedWrite
			cfgs[c].LogDir, cfgs[c].FailureTimes = r.servers.TempDir, r.hasFailover()
		}
		if err := r.serviceConfig(&cfgs[c]); err != nil {
			return nil, err
		}
	}
	return cfgs, nil
}

// serviceConfig is a client's lock service's config, as the server pool builds it
// for every client (its addresses).
func (r *cellRun) serviceConfig(cfg *chaos.ClientConfig) (err error) {
	cfg.Service = string(r.cell.Settings.TopologyOf())
	cfg.ServiceConfig, err = r.servers.ServiceConfig(r.cell, cfg.Index)
	return err
}

// startClients starts the clients and waits until each is ready to begin
// at the start time.
func (r *cellRun) startClients(ctx context.Context) error {
	r.cleanups = append(r.cleanups, func() {
		for _, c := range r.clients {
			c.Close()
		}
	})
	cfgs, err := r.clientConfigs()
	if err != nil {
		return err
	}
	for _, cfg := range cfgs {
		c, err := r.newClient(ctx, cfg)
		if err != nil {
			return err
		}
		r.clients = append(r.clients, c)
		r.targets.Clients = append(r.targets.Clients, c)
		if pid := c.Pid(); pid != 0 {
			r.res.Pids = append(r.res.Pids, pid)
		}
	}
	for _, c := range r.clients {
		if err := c.WaitReady(ctx); err != nil {
			return err
		}
	}
	return nil
}

// newClient starts a client of the cell's client mode: on this process's
// goroutines (with the cell's lock service, logs and hooks when it has
// one), or as a process of its own.
func (r *cellRun) newClient(ctx context.Context, cfg chaos.ClientConfig) (chaos.Client, error) {
	if r.cell.Recorded.ClientMode == "processes" {
		argv := r.opt.ClientCommand
		if len(argv) == 0 {
			exe, err := os.Executable()
			if err != nil {
				return nil, err
			}
			argv = []string{exe, "chaos", chaos.ClientArg}
		}
		return chaos.StartProcess(argv, r.opt.ClientEnv, cfg, r.obs)
	}
	local := chaos.Local{Probe: r.probe, Observer: r.obs}
	if r.svc != nil {
		local.Locker, local.Logs = r.svc.Locker(), r.logs.writers()
		local.Hooks = func(rc *workloads.RunConfig) {
			r.svc.Window(rc)
			rc.OnInterval = r.onInterval
		}
	}
	return chaos.NewClient(ctx, cfg, local)
}

// startFaults starts a fault cell's parts that run beside its clients:
// the watch of the servers' session ends and the fault schedule.
func (r *cellRun) startFaults(ctx context.Context) error {
	if !r.checksResource() {
		return nil
	}
	r.logStarted()
	r.watchSessionEnds()
	sched, err := faults.NewScheduler(ctx, r.cell.Faults, r.targets)
	if err != nil {
		return err
	}
	r.sched, r.stopScheduler = sched, sync.OnceFunc(sched.Stop)
	r.cleanups = append(r.cleanups, r.stopScheduler)
	return nil
}

// runClients starts the clients at t0 and waits for them to finish, for
// the cell's end or for an interrupt; then it gathers their results.
func (r *cellRun) runClients(ctx context.Context, t0 time.Time) (clientsRun, error) {
	run := clientsRun{results: make([]chaos.ClientResult, len(r.clients))}
	if r.checksResource() {
		r.cpu = r.startServerCPU()
	}
	allDone, err := r.startAt(t0)
	if err != nil {
		return run, err
	}
	stopClients := func() {
		for _, c := range r.clients {
			c.Stop()
		}
	}
	endTimer := time.NewTimer(time.Until(t0.Add(r.cell.Load.Warmup + r.cell.Load.Duration)))
	defer endTimer.Stop()
	// However the cell ends, paused clients are resumed and partitions
	// healed first, so that every client can finish its last cycle and
	// report.
	select {
	case <-allDone:
		r.stopScheduler()
	case <-endTimer.C:
		r.stopScheduler()
	case <-ctx.Done():
		run.interrupted = true
		r.stopScheduler()
		stopClients()
	}
	limit := 30*time.Second + time.Duration(r.s.Hold)
	select {
	case <-allDone:
	case <-ctx.Done():
		run.interrupted = true
		stopClients()
	case <-time.After(limit):
	}
	return run, r.gather(&run, limit)
}

// startAt lets every client begin at t0; the channel closes when all have
// finished.
func (r *cellRun) startAt(t0 time.Time) (<-chan struct{}, error) {
	for i, c := range r.clients {
		if err := c.Start(t0); err != nil {
			return nil, fmt.Errorf("client %d: %w", i, err)
		}
	}
	allDone := make(chan struct{})
	go func() {
		for _, c := range r.clients {
			<-c.Done()
		}
		close(allDone)
	}()
	return allDone, nil
}

// gather takes the clients' results, collecting their errors; a client
// error fails a cell that was not interrupted.
func (r *cellRun) gather(run *clientsRun, limit time.Duration) error {
	run.reported = true
	for i, c := range r.clients {
		cr, err := c.Result(limit)
		if err != nil {
			run.errs = append(run.errs, err.Error())
			run.reported = false
		}
		run.results[i] = cr
	}
	for _, cr := range run.results {
		if cr.Err != "" {
			run.errs = append(run.errs, r.clientErr(cr))
		}
	}
	if len(run.errs) > 0 && !run.interrupted {
		return errors.New(strings.Join(run.errs, "; "))
	}
	return nil
}

// clientErr is a client's error as the cell says it: a one-client cell's
// is the cell's own.
func (r *cellRun) clientErr(cr chaos.ClientResult) string {
	if len(r.clients) == 1 && r.svc != nil {
		return cr.Err
	}
	return fmt.Sprintf("client %d: %s", cr.Index, cr.Err)
}
