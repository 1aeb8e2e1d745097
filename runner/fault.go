package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"lockbench/chaos"
	"lockbench/check"
	"lockbench/faults"
	"lockbench/localmasters"
	"lockbench/plan"
	"lockbench/results"
	"lockbench/workloads"
)

// runFaultCell is one measurement of a fault cell on its servers: it
// starts the clients, applies the faults on schedule, checks the protected
// resource and returns the result. What it started is stopped before it
// returns, also when ctx is cancelled (then the result is partial and
// marked interrupted); the servers are the pool's.
func runFaultCell(ctx context.Context, env cellEnv) (*CellResult, error) {
	r := newFaultRun(env)
	defer r.cleanup()
	if r.obs = r.observer(); r.obs != nil {
		defer r.obs.SetWorkers(0)
	}
	startCtx, cancelStart := context.WithTimeout(ctx, 30*time.Second)
	defer cancelStart()
	if err := r.startClients(startCtx); err != nil {
		return nil, err
	}
	r.logStarted()
	r.watchSessionEnds()
	sched, err := faults.NewScheduler(ctx, env.cell.Faults, r.targets)
	if err != nil {
		return nil, err
	}
	stopScheduler := sync.OnceFunc(sched.Stop)
	r.cleanups = append(r.cleanups, stopScheduler)
	// Go. Faults due at 0 are in place before the first acquire.
	t0 := time.Now().Add(100 * time.Millisecond)
	sched.Start(t0, env.cell.Faults)
	run, err := r.runClients(ctx, t0, stopScheduler)
	if err != nil {
		return nil, err
	}
	return r.collect(t0, run, sched)
}

// faultRun is one fault cell on its way through runFaultCell's steps:
// start the clients, run the schedule, collect and check.
type faultRun struct {
	cellEnv
	s   plan.Settings
	res *CellResult

	cleanups []func() // run in reverse order when the cell ends
	targets  faults.Targets
	probe    *workloads.Probe // shared by the clients in this process
	obs      chaos.Observer
	clients  []chaos.Client

	// The lock service's session ends on its servers (lockLoss).
	ends        sessionEnds
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
}

func newFaultRun(env cellEnv) *faultRun {
	m := env.masters
	r := &faultRun{cellEnv: env, s: env.cell.Settings, res: &CellResult{}, probe: &workloads.Probe{}}
	r.targets = faults.Targets{Clocks: m.Clocks, Net: m.Net}
	for _, sm := range m.Servers {
		r.targets.Masters = append(r.targets.Masters, sm)
	}
	r.res.Addrs = append(slices.Clone(m.Addrs), m.Resource)
	if e := m.Etcd; e != nil && e.Local != nil {
		for _, mb := range e.Local.Members() {
			r.targets.Masters = append(r.targets.Masters, mb)
			r.res.Addrs = append(r.res.Addrs, mb.ClientURL, mb.PeerURL)
		}
		r.targets.Leader = e.Local.Leader
		if g := e.Local.Links(); g != nil && r.cell.NeedsMemberLinks() { // a nil *PeerGates is no Links
			r.targets.Links = g
		}
		if e.PeerNet != nil && r.cell.NeedsMemberDelay() {
			r.targets.MemberDelay = faults.NetworkDelay(e.PeerNet)
		}
	}
	if pg := m.Postgres; pg != nil && pg.Local != nil {
		r.targets.Masters = append(r.targets.Masters, pg.Local)
		r.res.Addrs = append(r.res.Addrs, pg.Local.Addr())
	}
	if z := m.Zookeeper; z != nil && z.Local != nil {
		for _, mb := range z.Local.Members() {
			r.targets.Masters = append(r.targets.Masters, mb)
			r.res.Addrs = append(r.res.Addrs, mb.Addr())
		}
		r.targets.Leader = z.Local.Leader
		if l := z.Local.Links(); l != nil && r.cell.NeedsMemberLinks() { // a nil *PeerLinks is no Links
			r.targets.Links = l
		}
		if z.PeerNet != nil && r.cell.NeedsMemberDelay() {
			r.targets.MemberDelay = z.PeerNet
		}
	}
	if set := m.Replicated; set != nil {
		r.targets.Set, r.targets.Replicas, r.targets.Sentinels = set, set.Replicas(), set.Sentinels()
		r.res.Addrs = append(r.res.Addrs, append(set.ReplicaAddrs(), set.SentinelAddrs()...)...)
	}
	for c := range r.s.Clients {
		if m.Net != nil {
			r.res.Addrs = append(r.res.Addrs, m.Net.Addrs(c)...)
		}
	}
	return r
}

// cleanup stops what the cell started, in reverse order.
func (r *faultRun) cleanup() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// observer is the cell's live-metrics observer (or the tests'), nil
// without one.
func (r *faultRun) observer() chaos.Observer {
	var obs chaos.Observer
	if r.opt.observe != nil {
		obs = r.opt.observe(r.cell)
	} else if mc := r.metricsCell(); mc != nil {
		obs = liveFaultCell{mc}
	} else {
		return nil
	}
	obs.SetWorkers(r.s.Workers * r.s.Clients)
	return obs
}

// clientConfigs is each client's share of the cell: its masters (through
// its proxies when there are any), keys, quota and seed.
func (r *faultRun) clientConfigs() []chaos.ClientConfig {
	s := r.s
	cfgs := make([]chaos.ClientConfig, s.Clients)
	for c := range cfgs {
		ec := r.masters.LockConfig(r.cell.Engine, c)
		var quota int64
		if s.Acquisitions > 0 {
			quota = (s.Acquisitions + int64(s.Clients) - 1) / int64(s.Clients)
		}
		cfgs[c] = chaos.ClientConfig{Index: c, Engine: ec, Resource: r.masters.Resource, Prefix: r.prefix, Keys: s.Keys, Workers: s.Workers,
			Hold: time.Duration(s.Hold), HoldDist: s.HoldDist, RetryMin: time.Duration(s.RetryMin), RetryMax: time.Duration(s.RetryMax),
			Fencing: s.Fencing, CheckValidity: s.CheckValidity, GuardedWrite: s.GuardedWrite, Duration: time.Duration(s.Duration), Quota: quota, Calls: s.Calls,
			Seed: r.seed + uint64(c)*7919, LogDir: r.masters.TempDir, FailureTimes: r.hasFailover()}
		if e := r.masters.Etcd; e != nil {
			cfgs[c].Etcd = &chaos.EtcdClient{Endpoints: r.masters.EtcdEndpoints(c), Username: e.Username, Password: e.Password}
		}
		if r.masters.Zookeeper != nil {
			cfgs[c].Zookeeper = &chaos.ZookeeperClient{Servers: r.masters.ZookeeperServers(c)}
		}
		if r.masters.Postgres != nil {
			cfgs[c].Postgres = &chaos.PostgresClient{URL: r.masters.PostgresURL(c)}
		}
	}
	return cfgs
}

// hasFailover says the cell kills a replicated set's master.
func (r *faultRun) hasFailover() bool {
	return slices.ContainsFunc(r.cell.Faults, func(f results.Fault) bool {
		return f.Kind == results.FaultFailover || f.Role == "leader"
	})
}

// startClients starts the clients and waits until each is ready to begin
// at the start time.
func (r *faultRun) startClients(ctx context.Context) error {
	r.cleanups = append(r.cleanups, func() {
		for _, c := range r.clients {
			c.Close()
		}
	})
	for _, cfg := range r.clientConfigs() {
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

// newClient starts a client of the cell's client_mode.
func (r *faultRun) newClient(ctx context.Context, cfg chaos.ClientConfig) (chaos.Client, error) {
	if r.s.ClientMode == "processes" {
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
	return chaos.NewClient(ctx, cfg, r.probe, r.obs)
}

// logStarted records the servers' pids and says what runs where.
func (r *faultRun) logStarted() {
	m := r.masters
	r.res.Pids = append(r.res.Pids, m.Pids()...)
	servers := fmt.Sprintf("masters %s (pids %s)", strings.Join(m.Addrs, " "), pidList(pidsOf(m.Servers)))
	if e := m.Etcd; e != nil && e.Local != nil {
		servers = fmt.Sprintf("%s members %s (%s, pids %s)", m.Version, strings.Join(e.Endpoints, " "), e.Local.FsyncText(), pidList(e.Local.Pids()))
	}
	if pg := m.Postgres; pg != nil && pg.Local != nil {
		servers = fmt.Sprintf("%s server %s (pid %d)", m.Version, pg.Local.Addr(), pg.Local.Pid())
	}
	if z := m.Zookeeper; z != nil && z.Local != nil {
		servers = fmt.Sprintf("%s servers %s (%s, tickTime %v, pids %s)", m.Version, strings.Join(z.Addrs, " "), z.Local.FsyncText(), z.Local.TickTime(), pidList(z.Local.Pids()))
	}
	if set := m.Replicated; set != nil {
		all := append(append([]*localmasters.Master{set.Master()}, set.Replicas()...), set.Sentinels()...)
		servers = fmt.Sprintf("master %s, replicas %s, sentinels %s (pids %s)", set.MasterAddr(), strings.Join(set.ReplicaAddrs(), " "),
			strings.Join(set.SentinelAddrs(), " "), pidList(pidsOf(all)))
	}
	logf(r.opt.Log, "chaos: cell %s: %s, resource %s (pid %d), %d %s clients%s",
		r.cell.Name, servers, m.Resource, m.ResourcePid(), r.s.Clients, r.s.ClientMode, clientPids(r.clients))
}

func pidsOf(ms []*localmasters.Master) []int {
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = m.Pid()
	}
	return out
}

// runClients starts the clients at t0 and waits for them to finish, for
// the cell's end or for an interrupt; then it gathers their results.
func (r *faultRun) runClients(ctx context.Context, t0 time.Time, stopScheduler func()) (clientsRun, error) {
	run := clientsRun{results: make([]chaos.ClientResult, r.s.Clients)}
	allDone, err := r.startAt(t0)
	if err != nil {
		return run, err
	}
	stopClients := func() {
		for _, c := range r.clients {
			c.Stop()
		}
	}
	endTimer := time.NewTimer(time.Until(t0.Add(time.Duration(r.s.Duration))))
	defer endTimer.Stop()
	// However the cell ends, paused clients are resumed and partitions
	// healed first, so that every client can finish its last cycle and
	// report.
	select {
	case <-allDone:
		stopScheduler()
	case <-endTimer.C:
		stopScheduler()
	case <-ctx.Done():
		run.interrupted = true
		stopScheduler()
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
func (r *faultRun) startAt(t0 time.Time) (<-chan struct{}, error) {
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
func (r *faultRun) gather(run *clientsRun, limit time.Duration) error {
	for i, c := range r.clients {
		cr, err := c.Result(limit)
		if err != nil {
			run.errs = append(run.errs, err.Error())
		}
		run.results[i] = cr
	}
	for _, cr := range run.results {
		if cr.Err != "" {
			run.errs = append(run.errs, fmt.Sprintf("client %d: %s", cr.Index, cr.Err))
		}
	}
	if len(run.errs) > 0 && !run.interrupted {
		return errors.New(strings.Join(run.errs, "; "))
	}
	return nil
}

// collect checks the resource, merges the clients' logs into the cell's
// and builds the result with its expectations, verdict and warnings.
func (r *faultRun) collect(t0 time.Time, run clientsRun, sched *faults.Scheduler) (*CellResult, error) {
	// Check the resource with a fresh context: an interrupted cell still
	// gets its partial result checked.
	cctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	ck, err := check.Judge(cctx, r.masters.Resource, r.prefix, r.s.Keys)
	cancel()
	if err != nil {
		return nil, err
	}
	iv, err := mergeLogs(run.results, t0)
	if err != nil {
		return nil, err
	}
	if err := r.logs.write(iv); err != nil {
		return nil, err
	}
	res := r.res
	events := sched.Events()
	res.Run = buildRun(r, t0, run.results, ck, iv, events)
	r.addFailovers(&res.Run, t0, events, ck, run.results)
	res.Run.Safety.LockLoss = r.lockLoss(run.results)
	r.judgeHistory(&res.Run, ck, run.interrupted)
	if ferr := sched.Err(); ferr != nil {
		res.Run.Warnings = append(res.Run.Warnings, "faults: "+strings.ReplaceAll(ferr.Error(), "\n", "; "))
	}
	res.Run.Warnings = append(res.Run.Warnings, run.errs...)
	res.Run.Warnings = append(res.Run.Warnings, r.cell.Warnings()...)
	res.judge(r.cell, run.interrupted, notJudged(r.cell, res, ck, sched.Missed(), events))
	for _, pid := range r.masters.Pids() { // a server restarted after a crash has a new pid
		if pid != 0 && !slices.Contains(res.Pids, pid) {
			res.Pids = append(res.Pids, pid)
		}
	}
	logf(r.opt.Log, "chaos: cell %s: %d acquired, %d violations, %d lost updates, %d stale writes rejected, availability %.1f%% of attempts %.1f%% of time, history %s%s",
		r.cell.Label, res.Run.Outcomes.Acquired, ck.Violations, ck.LostUpdates, ck.RejectedWrites,
		100*res.Run.Safety.AvailabilityOps, 100*res.Run.Safety.AvailabilityTime, res.Run.Safety.Linearizability.Verdict,
		map[bool]string{true: " (INTERRUPTED)"}[run.interrupted])
	for _, f := range res.Run.Failovers {
		logf(r.opt.Log, "chaos: cell %s: %s", r.cell.Label, f.Text())
	}
	if ll := res.Run.Safety.LockLoss; ll != nil {
		logf(r.opt.Log, "chaos: cell %s: %s", r.cell.Label, ll.Text())
	}
	if left := res.Run.Safety.StockLeft; left != nil {
		logf(r.opt.Log, "chaos: cell %s: stock left %d of %d", r.cell.Label, *left, r.s.Stock)
	}
	if c := res.Run.Contention; c != nil {
		logf(r.opt.Log, "chaos: cell %s: %s", r.cell.Label, c.Summary())
	}
	return res, nil
}

// judgeHistory asks the outside judge (porcupine) whether the resource's
// history is linearizable, writes the failing key's history beside the
// cell's result, and says where the judge and the resource's counters
// disagree. An interrupted cell's history is partial: it is not judged.
func (r *faultRun) judgeHistory(run *results.Run, ck check.Findings, interrupted bool) {
	lin := &results.Linearizability{Verdict: check.UnknownVerdict, Operations: len(ck.History), Reason: "the cell was interrupted: its history is partial"}
	if !interrupted {
		// The budget: the cell's own length, 10 s at least.
		j := check.CheckLinearizable(ck.History, max(10*time.Second, time.Duration(r.s.Duration)))
		if err := r.visualize(j); err != nil {
			run.Warnings = append(run.Warnings, "linearizability: the failing key's history could not be drawn: "+err.Error())
		}
		lin = &j.Linearizability
	}
	run.Safety.Linearizability = lin
	if mc := r.metricsCell(); mc != nil {
		mc.SetLinearizable(lin.Verdict)
	}
	switch {
	case lin.Verdict == check.NotLinearizable:
		run.Warnings = append(run.Warnings, fmt.Sprintf("safety: the history of key %d is not linearizable (porcupine)%s", *lin.Key, seeFile(lin.Visualization)))
	case lin.Verdict == check.UnknownVerdict && !interrupted:
		run.Warnings = append(run.Warnings, "safety: linearizability unknown: "+lin.Reason)
	}
	run.Safety.Disagreement = disagreement(lin, ck.LostUpdates)
}

// visualize writes porcupine's page of the failing key's history as
// cells/STEM.linearizability.html (nothing without a results directory,
// or when no key failed).
func (r *faultRun) visualize(j *check.Judgement) error {
	if r.dir == "" || !j.Failing() {
		return nil
	}
	rel := filepath.Join("cells", r.stem+".linearizability.html")
	if err := results.WriteFileShared(filepath.Join(r.dir, rel), func(w io.Writer) error {
		_, err := j.Visualize(w)
		return err
	}); err != nil {
		return err
	}
	j.Visualization = rel
	return nil
}

// disagreement is how the resource's lost-update count and the history's
// verdict contradict each other ("" : they agree, or the judge could not
// say): a lost update is an increment no order of the sections explains.
func disagreement(lin *results.Linearizability, lost int64) string {
	switch {
	case lin.Verdict == check.Linearizable && lost > 0 && lin.Unanswered > 0:
		return fmt.Sprintf("the resource counted %d lost updates, but porcupine found its history linearizable: "+
			"%d writes got no answer, and one the server ran late is a lost update the history cannot show", lost, lin.Unanswered)
	case lin.Verdict == check.Linearizable && lost > 0:
		return fmt.Sprintf("the resource counted %d lost updates, but porcupine found its history linearizable", lost)
	case lin.Verdict == check.NotLinearizable && lost == 0:
		return fmt.Sprintf("porcupine found key %d's history not linearizable, but the resource counted no lost update", *lin.Key)
	}
	return ""
}

func seeFile(rel string) string {
	if rel == "" {
		return ""
	}
	return ": see " + rel
}

// notJudged lists why a finished fault cell showed nothing whatever its
// figures say: a scheduled fault that did not happen, too few acquisitions
// or acknowledged writes to judge, holds the checker did not see, or a
// crash of a master that held no lock (nothing for it to forget).
func notJudged(cell plan.Cell, r *CellResult, ck check.Findings, missed []faults.Spec, events []faults.Event) []string {
	var out []string
	for _, f := range missed {
		out = append(out, fmt.Sprintf("scheduled fault %q did not happen", f))
	}
	if lin := r.Run.Safety.Linearizability; lin != nil && lin.Verdict == check.UnknownVerdict {
		out = append(out, "linearizability unknown: "+lin.Reason)
	}
	minimum, acquired := cell.Settings.MinAcquisitions, r.Run.Outcomes.Acquired
	if acquired < minimum {
		out = append(out, fmt.Sprintf("%d acquisitions, fewer than min_acquisitions %d", acquired, minimum))
	}
	if ck.Acks < minimum {
		out = append(out, fmt.Sprintf("%d acknowledged writes, fewer than min_acquisitions %d", ck.Acks, minimum))
	}
	if ck.Holds != acquired {
		out = append(out, fmt.Sprintf("the checker saw %d holds for %d acquisitions", ck.Holds, acquired))
	}
	for _, e := range events {
		switch {
		case e.Kind != "crash" && e.Kind != "failover":
		case strings.HasPrefix(e.Target, "sentinel "): // a Sentinel holds no keys
		case e.HeldKeys == 0:
			out = append(out, fmt.Sprintf("the crash of %s hit a master that held no lock key", e.Target))
		case e.HeldKeys < 0:
			out = append(out, fmt.Sprintf("the crash of %s: the lock keys it held could not be counted", e.Target))
		case e.Kind == "failover" && ck.HeldAt(e.At.UnixNano()) == 0:
			out = append(out, fmt.Sprintf("no granted lock was still valid at the failover of %s: nothing for it to lose", e.Target))
		}
	}
	for _, f := range r.Run.Failovers {
		switch {
		case f.Kind == "" && f.SwitchAt == nil:
			out = append(out, fmt.Sprintf("the failover of %s: Sentinel promoted no replica", f.Master))
		case f.FirstAcquireAt == nil:
			out = append(out, fmt.Sprintf("the %s of %s: no acquire won after it", orFailover(f.Kind), f.Master))
		}
	}
	return out
}

func orFailover(kind string) string {
	if kind == "" {
		return "failover"
	}
	return kind
}

func pidList(p []int) string {
	s := make([]string, len(p))
	for i, x := range p {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " ")
}

// clientPids lists the client processes the cell started, if any.
func clientPids(cs []chaos.Client) string {
	var p []int
	for _, c := range cs {
		if pid := c.Pid(); pid != 0 {
			p = append(p, pid)
		}
	}
	if len(p) == 0 {
		return ""
	}
	return " (pids " + pidList(p) + ")"
}
