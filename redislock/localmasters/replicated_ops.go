package localmasters

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"lockbench/internal/proc"
	"lockbench/internal/redisserver"
)

// MasterSet is the name Sentinel monitors the master by.
func (r *Replicated) MasterSet() string { return r.opt.MasterSet }

// Quorum is the Sentinels' quorum, S/2+1.
func (r *Replicated) Quorum() int { return r.quorum }

// Master is the process started as master (after a failover, a replica
// or down: CurrentMaster says which process is master now).
func (r *Replicated) Master() *Master { return r.master }

// Replicas are the processes started as replicas, in order.
func (r *Replicated) Replicas() []*Master { return append([]*Master(nil), r.replicas...) }

// Sentinels are the Sentinel processes, in order.
func (r *Replicated) Sentinels() []*Master { return append([]*Master(nil), r.sentinels...) }

// MasterAddr is the address of the process started as master.
func (r *Replicated) MasterAddr() string { return r.master.Addr() }

// ReplicaAddrs are the replicas' addresses, in order.
func (r *Replicated) ReplicaAddrs() []string { return addrsOf(r.replicas) }

// SentinelAddrs are the Sentinels' addresses, in order.
func (r *Replicated) SentinelAddrs() []string { return addrsOf(r.sentinels) }

func addrsOf(ms []*Master) []string {
	a := make([]string, len(ms))
	for i, m := range ms {
		a[i] = m.Addr()
	}
	return a
}

// Process is the master, replica or Sentinel at addr; nil when none is.
func (r *Replicated) Process(addr string) *Master {
	for _, m := range r.set.masters {
		if m.Addr() == addr {
			return m
		}
	}
	return nil
}

// Name is the process' role as started in a replicated set ("master",
// "replica 1", "sentinel 0"); "" for a Set's master.
func (m *Master) Name() string { return m.role.name }

// RedisServer is the redis-server path every process runs.
func (r *Replicated) RedisServer() string { return r.set.bin }

// Version is redis-server's version.
func (r *Replicated) Version() string { return r.set.version }

// Persistence is the master's and replicas' mode.
func (r *Replicated) Persistence() Persistence { return r.set.persist }

// CurrentMaster asks the Sentinels, in order, where the master is now
// (SENTINEL GET-MASTER-ADDR-BY-NAME); the first answer wins.
func (r *Replicated) CurrentMaster(ctx context.Context) (string, error) {
	var errs []error
	for _, s := range r.sentinels {
		if !s.Running() {
			continue
		}
		actx, cancel := context.WithTimeout(ctx, sentinelAskBudget)
		addr, err := MasterAddrByName(actx, s.Addr(), r.opt.MasterSet)
		cancel()
		if err == nil {
			return addr, nil
		}
		errs = append(errs, fmt.Errorf("%s (%s): %w", s.role.name, s.Addr(), err))
	}
	return "", fmt.Errorf("localmasters: no sentinel told where master set %s is: %w", r.opt.MasterSet, cmpErr(errors.Join(errs...), "none is running"))
}

// KillMaster SIGKILLs the current master's process (as the Sentinels
// see it) and returns once it is reaped, with the times recorded.
func (r *Replicated) KillMaster(ctx context.Context) (Kill, error) {
	addr, err := r.CurrentMaster(ctx)
	if err != nil {
		return Kill{}, err
	}
	m := r.Process(addr)
	if m == nil || m.role.conf != "" {
		return Kill{}, fmt.Errorf("localmasters: master set %s: current master %s is not a data node of this set", r.opt.MasterSet, addr)
	}
	k := Kill{Addr: addr, Name: m.role.name, Pid: m.Pid(), At: time.Now()}
	if k.Pid == 0 {
		return k, fmt.Errorf("localmasters: master set %s: current master, %s (%s), is not running", r.opt.MasterSet, m.role.name, addr)
	}
	if err := m.Kill(); err != nil {
		return k, fmt.Errorf("localmasters: %s: %w", m.role.name, err)
	}
	k.Reaped = time.Now()
	r.mu.Lock()
	r.kills = append(r.kills, k)
	r.mu.Unlock()
	return k, nil
}

// Kills are the KillMaster calls so far.
func (r *Replicated) Kills() []Kill {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Kill(nil), r.kills...)
}

// Switches are the +switch-master events seen since Start, in order,
// each once (every Sentinel announces it; the first message counts).
func (r *Replicated) Switches() []Switch { return r.watch.list() }

// WaitSwitch returns the n-th switch (1-based) once it happened, or ctx's
// error.
func (r *Replicated) WaitSwitch(ctx context.Context, n int) (Switch, error) {
	return r.watch.wait(ctx, n)
}

// Stop stops every process by pid, the Sentinels first so that they do
// not fail over while the data nodes go, and removes the temp dirs. It is
// idempotent; later callers get the first one's result.
func (r *Replicated) Stop() error {
	r.stopOnce.Do(func() {
		if r.watch != nil {
			r.watch.stop()
		}
		errs := stopAll(r.sentinels)
		r.stopErr = errors.Join(append(errs, r.set.Stop())...)
	})
	return r.stopErr
}

// stopAll stops ms in parallel, so stuck ones cost one grace period.
func stopAll(ms []*Master) []error {
	errs := proc.StopAll(ms)
	for i, err := range errs {
		if err != nil {
			errs[i] = fmt.Errorf("%s: %w", ms[i].role.name, err)
		}
	}
	return errs
}

// Failover kills -9 the current master (after counting the keys it
// holds) for Sentinel to promote a replica: a fault cell's failover
// (faults.Failoverer).
func (r *Replicated) Failover(ctx context.Context) (target, detail string, heldKeys int, err error) {
	addr, err := r.CurrentMaster(ctx)
	if err != nil {
		return "", "", 0, err
	}
	keys := dbsize(ctx, addr)
	k, err := r.KillMaster(ctx)
	if err != nil {
		return "", "", 0, err
	}
	held := "?"
	if keys >= 0 {
		held = strconv.Itoa(keys)
	}
	return fmt.Sprintf("%s (%s)", k.Name, k.Addr),
		fmt.Sprintf("kill -9 pid %d of the current master holding %s keys; Sentinel is to promote a replica", k.Pid, held), keys, nil
}

// CutReplicaLinks closes every replica's connection on the current
// master; the replicas still running reconnect and catch up at once
// (faults.Replication: replication_lag pauses them first).
func (r *Replicated) CutReplicaLinks(ctx context.Context) error {
	addr, err := r.CurrentMaster(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err = redisserver.Do(ctx, addr, "CLIENT", "KILL", "TYPE", "replica")
	return err
}

// HeldKeys counts the keys the master holds (DBSIZE); -1 when it cannot
// (faults.KeyCounter: a crash says how many locks it took down).
func (m *Master) HeldKeys(ctx context.Context) int { return dbsize(ctx, m.Addr()) }

// dbsize counts the keys on addr; -1 when it cannot.
func dbsize(ctx context.Context, addr string) int {
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	s, err := redisserver.Do(ctx, addr, "DBSIZE")
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}
