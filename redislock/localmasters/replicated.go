package localmasters

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"lockbench/internal/redisserver"
	"lockbench/redislock/engine"
)

// ReplicatedOptions configure StartReplicated: one master, its replicas
// and the Sentinels that watch them and promote a replica when it fails.
type ReplicatedOptions struct {
	Replicas  int    // R replicas of the master, at least 1 (Sentinel needs one to promote)
	Sentinels int    // S Sentinels, at least 1; the quorum is S/2+1
	MasterSet string // the name Sentinel monitors the master by; "" = "lockbench"
	// DownAfter is Sentinel's down-after-milliseconds (0 = 1s): how long a
	// master may not answer before it is judged down. FailoverTimeout is
	// failover-timeout (0 = 2s): a failed election is retried after twice it.
	DownAfter       time.Duration
	FailoverTimeout time.Duration
	// ReplicaPriority[i] is replica i's replica-priority (Sentinel promotes
	// the lowest non-zero one; 0 never); replicas past its end keep 100.
	ReplicaPriority []int
	// MinReplicasToWrite is min-replicas-to-write on every data node (0 = off).
	MinReplicasToWrite int

	Persistence Persistence // of the master and replicas; "" = none
	RedisServer string      // "" = "redis-server" in PATH
	Log         io.Writer
	Env         []string // extra environment of every process (see Options.Env)
	CPUs        []int    // pin every process to these CPUs
}

const (
	defaultMasterSet  = "lockbench"
	syncTimeout       = 20 * time.Second // replicas in sync, Sentinels agreeing
	pollEvery         = 20 * time.Millisecond
	sentinelAskBudget = time.Second // one Sentinel's answer to CurrentMaster
)

var masterSetRE = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// withDefaults checks opt and fills in its defaults.
func (opt ReplicatedOptions) withDefaults() (ReplicatedOptions, error) {
	if opt.MasterSet == "" {
		opt.MasterSet = defaultMasterSet
	}
	opt.DownAfter = cmpDur(opt.DownAfter, time.Second)
	opt.FailoverTimeout = cmpDur(opt.FailoverTimeout, 2*time.Second)
	if opt.Persistence == "" {
		opt.Persistence = PersistNone
	}
	p, err := ParsePersistence(string(opt.Persistence))
	opt.Persistence = p
	switch {
	case err != nil:
		return opt, fmt.Errorf("localmasters: %w", err)
	case opt.Replicas < 1:
		return opt, fmt.Errorf("localmasters: replicas: %d is not accepted; a replicated set needs at least 1 replica for Sentinel to promote", opt.Replicas)
	case opt.Sentinels < 1:
		return opt, fmt.Errorf("localmasters: sentinels: %d is not accepted; use at least 1", opt.Sentinels)
	case !masterSetRE.MatchString(opt.MasterSet):
		return opt, fmt.Errorf("localmasters: master set: %q is not accepted; use letters, digits, '.', '_' or '-'", opt.MasterSet)
	case opt.DownAfter < time.Millisecond || opt.FailoverTimeout < time.Millisecond:
		return opt, fmt.Errorf("localmasters: down-after %v and failover-timeout %v must be at least 1ms", opt.DownAfter, opt.FailoverTimeout)
	case len(opt.ReplicaPriority) > opt.Replicas:
		return opt, fmt.Errorf("localmasters: replica priority: %d priorities for %d replicas", len(opt.ReplicaPriority), opt.Replicas)
	case opt.MinReplicasToWrite < 0 || opt.MinReplicasToWrite > opt.Replicas:
		return opt, fmt.Errorf("localmasters: min-replicas-to-write: %d is not accepted; use 0..%d (the replicas)", opt.MinReplicasToWrite, opt.Replicas)
	}
	for i, pr := range opt.ReplicaPriority {
		if pr < 0 {
			return opt, fmt.Errorf("localmasters: replica priority of replica %d: %d is not accepted; use 0 (never promoted) or more", i, pr)
		}
	}
	return opt, nil
}

func cmpDur(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// Replicated is one master with replicas and Sentinels, all real
// redis-server processes on 127.0.0.1. Roles move on a failover: Master()
// is the process started as master, CurrentMaster asks Sentinel.
type Replicated struct {
	set       *Set // every process, for the spawning, stopping and temp dirs
	opt       ReplicatedOptions
	quorum    int
	master    *Master
	replicas  []*Master
	sentinels []*Master
	watch     *switchWatch

	mu    sync.Mutex
	kills []Kill

	stopOnce sync.Once
	stopErr  error
}

// Kill is one KillMaster.
type Kill struct {
	Addr, Name string    // the master killed, e.g. "127.0.0.1:PORT", "replica 0"
	Pid        int       // its process
	At         time.Time // SIGKILL sent
	Reaped     time.Time // the process gone
}

// StartReplicated starts the master, then the replicas, waits until they
// are in sync, starts the Sentinels and returns once every Sentinel knows
// the master, every replica and every other Sentinel, and this process
// is subscribed to +switch-master on each of them. On failure everything
// started is stopped.
func StartReplicated(ctx context.Context, opt ReplicatedOptions) (*Replicated, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	bin, err := replicatedBinary(opt.RedisServer)
	if err != nil {
		return nil, err
	}
	s := &Set{bin: bin, persist: opt.Persistence, env: opt.Env, cpus: opt.CPUs, stopping: make(chan struct{})}
	s.version, err = redisserver.Version(bin)
	if err != nil {
		s.version = "unknown" // announcements only; startup reports real problems
	}
	r := &Replicated{set: s, opt: opt, quorum: opt.Sentinels/2 + 1}
	if err := r.start(ctx); err != nil {
		if serr := r.Stop(); serr != nil {
			err = errors.Join(err, fmt.Errorf("cleanup: %w", serr))
		}
		return nil, err
	}
	r.announce()
	return r, nil
}

// replicatedBinary is the redis-server to run: there is no embedded
// fallback, miniredis has neither replication nor Sentinel.
func replicatedBinary(path string) (string, error) {
	const why = "a replicated set runs real redis-server replicas and Sentinels (there is no embedded fallback)"
	if path != "" {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("localmasters: redis-server %q is not usable: %v; %s", path, err, why)
		}
		return p, nil
	}
	if p, ok := redisserver.Path(); ok {
		return p, nil
	}
	return "", fmt.Errorf("localmasters: redis-server not found in PATH; %s: install it (apt-get install redis-server) or pass its path", why)
}

func (r *Replicated) start(ctx context.Context) error {
	m, err := r.startOne(ctx, spec{name: "master", extra: r.dataFlags()}, "")
	if err != nil {
		return err
	}
	r.master = m
	for i := range r.opt.Replicas {
		m, err := r.startOne(ctx, spec{name: fmt.Sprintf("replica %d", i), extra: r.replicaFlags(i)}, "")
		if err != nil {
			return err
		}
		r.replicas = append(r.replicas, m)
	}
	if err := r.waitSynced(ctx); err != nil {
		return err
	}
	for i := range r.opt.Sentinels {
		m, err := r.startOne(ctx, spec{name: fmt.Sprintf("sentinel %d", i)}, r.sentinelConf())
		if err != nil {
			return err
		}
		r.sentinels = append(r.sentinels, m)
	}
	if err := r.waitSentinels(ctx); err != nil {
		return err
	}
	r.watch, err = watchSwitches(r.opt.MasterSet, r.master.Addr(), r.SentinelAddrs())
	if err != nil {
		return fmt.Errorf("localmasters: master set %s: %w", r.opt.MasterSet, err)
	}
	return nil
}

func (r *Replicated) startOne(ctx context.Context, role spec, conf string) (*Master, error) {
	m, err := r.set.startProcess(ctx, role, conf)
	if err != nil {
		return nil, fmt.Errorf("localmasters: %s: %w", role.name, err)
	}
	return m, nil
}

// dataFlags are the master's and every replica's (any may become master).
// Full syncs go through disk: after a diskless one the master streams to
// a replica only from its first REPLCONF ACK, and the replica's immediate
// ACK can come before the master is ready for it, leaving the replica up
// to a second behind (WAIT does not count it). A stop does not wait for
// replicas to catch up.
func (r *Replicated) dataFlags() []string {
	f := []string{"--repl-diskless-sync", "no", "--shutdown-timeout", "0"}
	if n := r.opt.MinReplicasToWrite; n > 0 {
		f = append(f, "--min-replicas-to-write", strconv.Itoa(n))
	}
	return f
}

func (r *Replicated) replicaFlags(i int) []string {
	f := append(r.dataFlags(), "--replicaof", "127.0.0.1", strconv.Itoa(r.master.Port()))
	if i < len(r.opt.ReplicaPriority) {
		f = append(f, "--replica-priority", strconv.Itoa(r.opt.ReplicaPriority[i]))
	}
	return f
}

// sentinelConf is a Sentinel's config file. parallel-syncs R lets every
// replica resync with the new master at once, so a failover ends (and
// +switch-master is published) without waiting for them one by one.
func (r *Replicated) sentinelConf() string {
	n := r.opt.MasterSet
	return fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d %d\n"+
		"sentinel down-after-milliseconds %s %d\n"+
		"sentinel failover-timeout %s %d\n"+
		"sentinel parallel-syncs %s %d\n",
		n, r.master.Port(), r.quorum,
		n, r.opt.DownAfter.Milliseconds(),
		n, r.opt.FailoverTimeout.Milliseconds(),
		n, r.opt.Replicas)
}

// poll runs check until it passes, ctx ends or syncTimeout passes, and
// then names what was not ready and why.
func (r *Replicated) poll(ctx context.Context, what string, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	for {
		cctx, ccancel := context.WithTimeout(ctx, time.Second)
		err := check(cctx)
		ccancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("localmasters: %s: not ready after %v: %w", what, syncTimeout, err)
		case <-r.set.stopping:
			return ErrStopped
		case <-time.After(pollEvery):
		}
	}
}

// waitSynced waits until every replica's link to the master is up and
// the master has it online: after a diskless sync the master puts a
// replica online only at its first REPLCONF ACK (up to a second later),
// and until then WAIT does not count it.
func (r *Replicated) waitSynced(ctx context.Context) error {
	for _, m := range r.replicas {
		what := fmt.Sprintf("%s (%s) of master %s", m.role.name, m.Addr(), r.master.Addr())
		err := r.poll(ctx, what, func(ctx context.Context) error {
			if err := linkStatus(ctx, m.Addr()); err != nil {
				return err
			}
			return r.online(ctx, m.Port())
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// online says whether the master lists the replica on port as online.
func (r *Replicated) online(ctx context.Context, port int) error {
	s, err := redisserver.Do(ctx, r.master.Addr(), "INFO", "replication")
	if err != nil {
		return fmt.Errorf("master: %w", err)
	}
	want := ",port=" + strconv.Itoa(port) + ",state=online,"
	for k, v := range engine.ParseInfo(s) {
		if strings.HasPrefix(k, "slave") && strings.Contains(","+v+",", want) {
			return nil
		}
	}
	return fmt.Errorf("the master does not list it online yet")
}

func linkStatus(ctx context.Context, addr string) error {
	s, err := redisserver.Do(ctx, addr, "INFO", "replication")
	if err != nil {
		return err
	}
	if st := engine.ParseInfo(s)["master_link_status"]; st != "up" {
		return fmt.Errorf("master_link_status %q", st)
	}
	return nil
}

// waitSentinels waits until every Sentinel knows the set in full.
func (r *Replicated) waitSentinels(ctx context.Context) error {
	for _, m := range r.sentinels {
		what := fmt.Sprintf("%s (%s) watching master set %s", m.role.name, m.Addr(), r.opt.MasterSet)
		if err := r.poll(ctx, what, func(ctx context.Context) error { return r.sentinelKnows(ctx, m.Addr()) }); err != nil {
			return err
		}
	}
	return nil
}

// sentinelKnows says what the Sentinel at addr does not know yet: the
// master, a replica up, another Sentinel.
func (r *Replicated) sentinelKnows(ctx context.Context, addr string) error {
	name := r.opt.MasterSet
	m, err := sentinelMap(ctx, addr, "SENTINEL", "MASTER", name)
	if err != nil {
		return err
	}
	if m["flags"] != "master" || m["ip"]+":"+m["port"] != r.master.Addr() {
		return fmt.Errorf("sees master %s:%s with flags %q", m["ip"], m["port"], m["flags"])
	}
	reps, err := sentinelMaps(ctx, addr, "SENTINEL", "REPLICAS", name)
	if err != nil {
		return err
	}
	if n := countUp(reps, func(e map[string]string) bool { return e["master-link-status"] == "ok" }); n != len(r.replicas) {
		return fmt.Errorf("sees %d of %d replicas in sync", n, len(r.replicas))
	}
	others, err := sentinelMaps(ctx, addr, "SENTINEL", "SENTINELS", name)
	if err != nil {
		return err
	}
	if n := countUp(others, nil); n != len(r.sentinels)-1 {
		return fmt.Errorf("sees %d of %d other sentinels", n, len(r.sentinels)-1)
	}
	return nil
}

func countUp(entries []map[string]string, also func(map[string]string) bool) int {
	n := 0
	for _, e := range entries {
		if linkUp(e) && (also == nil || also(e)) {
			n++
		}
	}
	return n
}

func (r *Replicated) announce() {
	log := r.opt.Log
	if log == nil {
		return
	}
	var pids []string
	for _, m := range r.set.masters {
		pids = append(pids, strconv.Itoa(m.Pid()))
	}
	// The pids let a caller check that no process outlives the set.
	fmt.Fprintf(log, "localmasters: started master set %s (%s, version %s, persistence %s): master %s, replicas %s, sentinels %s (quorum %d, down-after %v, failover-timeout %v) (pids %s)\n",
		r.opt.MasterSet, r.set.bin, r.set.version, r.set.persist, r.master.Addr(),
		strings.Join(r.ReplicaAddrs(), " "), strings.Join(r.SentinelAddrs(), " "), r.quorum, r.opt.DownAfter, r.opt.FailoverTimeout, strings.Join(pids, " "))
}
