package runner

import (
	"context"
	"fmt"
	"time"

	"lockbench/bench"
	"lockbench/etcdlock"
	"lockbench/lock"
	"lockbench/results"
	"lockbench/workloads"
)

// etcdService is an etcd cell's lock: etcd's concurrency.Mutex, one
// session per worker, with a baseline of plain Puts.
type etcdService struct {
	env  cellEnv
	lk   *etcdlock.Locker
	base []time.Duration
	win  *bench.WindowReadings
	rpcs callWindow
}

func openEtcd(ctx context.Context, env cellEnv) (_ lockService, err error) {
	m := env.masters
	cfg, err := m.EtcdConfig(env.cell, 0)
	if err != nil {
		return nil, err
	}
	lk, err := etcdlock.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	e := &etcdService{env: env, lk: lk, rpcs: callWindow{calls: lk.RPCs}}
	defer func() {
		if err != nil {
			e.close()
		}
	}()
	if err := e.checkPrefixFree(ctx); err != nil {
		return nil, err
	}
	if e.base, err = e.putBaseline(ctx, env.prefix+"rtt"); err != nil {
		return nil, err
	}
	e.win = bench.NewEtcdWindowReadings(ctx, m)
	return e, nil
}

// checkPrefixFree refuses keys of another live run under the cell's
// prefix, unless forced.
func (e *etcdService) checkPrefixFree(ctx context.Context) error {
	n, err := e.lk.CountKeys(ctx, e.env.prefix)
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	if n > 0 && !e.env.cell.Settings.Force {
		return fmt.Errorf("key-prefix: %d keys under %q already exist in etcd (another live run?); use another --key-prefix, or --force", n, e.env.prefix)
	}
	return nil
}

// putBaseline is the floor to compare acquires with: plain Put round trips
// (a consensus write, as a lock's is), measured in this run.
func (e *etcdService) putBaseline(ctx context.Context, key string) ([]time.Duration, error) {
	defer func() { _ = e.lk.Delete(context.Background(), key) }()
	out, err := roundTrips(ctx, func(ctx context.Context) error { return e.lk.Put(ctx, key) })
	if err != nil {
		return nil, fmt.Errorf("etcd baseline put: %w", err)
	}
	return out, nil
}

func (e *etcdService) locker() lock.Locker { return e.lk }

func (e *etcdService) window(rc *workloads.RunConfig) {
	if cl := e.env.masters.Etcd.Local; cl != nil {
		rc.ServerCPU = func() []time.Duration { return bench.ProcessCPU(memberPids(cl), false) }
	}
	rc.OnWindow = e.rpcs.mark(e.win.Mark)
}

// finish records the servers, the granted lease, the fence's source and
// the Put baseline.
func (e *etcdService) finish(res *results.Run, st *workloads.Stats) {
	m := e.env.masters
	res.Config.Etcd = &results.EtcdSettings{LeaseTTL: results.Duration(e.lk.GrantedTTL()), FenceSource: etcdlock.FenceSource,
		LostSessions: e.lk.LostSessions(), RPCsPerCycle: e.rpcs.perCycle(st.Acquired)}
	if m.Etcd.Local != nil {
		res.Servers = st.ServersOf(m.Etcd.Endpoints)
	}
	pl := summarizeDurations(e.base)
	res.BaselineParallel = &pl
	e.win.Finish(res, st)
}

// memberPids are a local cluster's member processes, by endpoint index (0:
// not running).
func memberPids(cl *etcdlock.Cluster) []int {
	var out []int
	for _, m := range cl.Members() {
		out = append(out, m.Pid())
	}
	return out
}

// close ends every session: revoking a lease deletes the lock keys it
// holds, so nothing of the cell's is left under its prefix.
func (e *etcdService) close() { e.lk.Close() }
