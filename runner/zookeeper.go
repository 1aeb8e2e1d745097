package runner

import (
	"context"
	"fmt"
	"time"

	"lockbench/bench"
	"lockbench/lock"
	"lockbench/results"
	"lockbench/workloads"
	"lockbench/zklock"
)

// zookeeperService is a zookeeper cell's lock: the recipe on go-zookeeper,
// one session per worker, with a baseline of plain Sets.
type zookeeperService struct {
	env  cellEnv
	lk   *zklock.Locker
	base []time.Duration
	win  *bench.WindowReadings
	rpcs callWindow
}

func openZookeeper(ctx context.Context, env cellEnv) (_ lockService, err error) {
	m := env.masters
	lk, err := zklock.New(ctx, m.ZookeeperConfig(env.cell, 0))
	if err != nil {
		return nil, err
	}
	z := &zookeeperService{env: env, lk: lk, rpcs: callWindow{calls: lk.RPCs}}
	defer func() {
		if err != nil {
			z.close()
		}
	}()
	if err := z.checkPrefixFree(ctx); err != nil {
		return nil, err
	}
	if z.base, err = z.setBaseline(ctx, env.prefix+"rtt"); err != nil {
		return nil, err
	}
	z.win = bench.NewZookeeperWindowReadings(ctx, m)
	return z, nil
}

// checkPrefixFree refuses lock znodes of another live run under the
// cell's prefix, unless forced.
func (z *zookeeperService) checkPrefixFree(ctx context.Context) error {
	n, err := z.lk.CountKeys(ctx, z.env.prefix)
	if err != nil {
		return fmt.Errorf("zookeeper: %w", err)
	}
	if n > 0 && !z.env.cell.Settings.Force {
		return fmt.Errorf("key-prefix: %d lock znodes under %s/%s already exist (another live run?); use another --key-prefix, or --force", n, zklock.Root, z.env.prefix)
	}
	return nil
}

// setBaseline is the floor to compare acquires with: plain Set round
// trips (a quorum write, as a lock's create is), measured in this run.
func (z *zookeeperService) setBaseline(ctx context.Context, key string) ([]time.Duration, error) {
	defer func() { _ = z.lk.Delete(context.Background(), key) }()
	out, err := roundTrips(ctx, func(ctx context.Context) error { return z.lk.Put(ctx, key) })
	if err != nil {
		return nil, fmt.Errorf("zookeeper baseline set: %w", err)
	}
	return out, nil
}

func (z *zookeeperService) locker() lock.Locker { return z.lk }

func (z *zookeeperService) window(rc *workloads.RunConfig) {
	if cl := z.env.masters.Zookeeper.Local; cl != nil {
		rc.ServerCPU = func() []time.Duration { return bench.ProcessCPU(cl.Pids(), false) }
	}
	rc.OnWindow = z.rpcs.mark(z.win.Mark)
}

// finish records the servers, the granted session timeout, the fence's
// source and the Set baseline.
func (z *zookeeperService) finish(res *results.Run, st *workloads.Stats) {
	m := z.env.masters
	zs := &results.ZookeeperSettings{SessionTimeout: results.Duration(z.lk.GrantedTTL()), FenceSource: zklock.FenceSource,
		LostSessions: z.lk.LostSessions(), RPCsPerCycle: z.rpcs.perCycle(st.Acquired)}
	if cl := m.Zookeeper.Local; cl != nil {
		zs.TickTime = results.Duration(cl.TickTime())
		res.Servers = st.ServersOf(m.Zookeeper.Addrs)
	}
	res.Config.Zookeeper = zs
	pl := summarizeDurations(z.base)
	res.BaselineParallel = &pl
	z.win.Finish(res, st)
}

// close ends every session: their ephemeral znodes (held locks, waiting
// places) go with them, and the key containers are deleted.
func (z *zookeeperService) close() { z.lk.Close() }
