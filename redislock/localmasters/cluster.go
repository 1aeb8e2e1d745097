package localmasters

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"lockbench/internal/ports"
	"lockbench/internal/redisserver"
	"lockbench/redislock/engine"
)

// ClusterOptions configure StartCluster: a Redis Cluster of Masters
// shards, each a master with ReplicasPerMaster replicas, every node a
// real cluster-enabled redis-server on 127.0.0.1.
type ClusterOptions struct {
	Masters           int // shards, at least 3 (a majority of masters must see a master fail)
	ReplicasPerMaster int // replicas of each master, 0..3
	// NodeTimeout is cluster-node-timeout (0 = 1s): how long a master may
	// not answer before it is judged failing; its replica is promoted
	// about a second or two after it (the election's delay). The
	// default 15 s would outlast a cell.
	NodeTimeout time.Duration
	RedisServer string // "" = "redis-server" in PATH
	Log         io.Writer
	// CuttableBus runs the cluster bus through gates so that CutFromBus
	// can cut a master from the other nodes but not from clients (see
	// busNet); off, the nodes talk directly.
	CuttableBus bool
}

// Slots are a Redis Cluster's hash slots.
const Slots = 16384

const (
	defaultNodeTimeout = time.Second
	clusterFormTimeout = 30 * time.Second // MEET, REPLICATE and full syncs
	promotionWatch     = 30 * time.Second // how long a kill's promotion is looked for
	promotionPoll      = 10 * time.Millisecond
)

// Cluster is a running Redis Cluster. Shard i owns slots Shard(i) as
// formed; its master moves on a failover (ShardMaster asks the nodes).
type Cluster struct {
	set      *Set
	opt      ClusterOptions
	masters  []*Master   // as started, by shard
	replicas [][]*Master // as started, by shard
	ids      map[*Master]string
	bus      *busNet // nil without CuttableBus

	mu         sync.Mutex
	kills      []Kill
	cuts       []BusCut // not healed yet
	promotions []ClusterPromotion
	watchers   sync.WaitGroup
	stopOnce   sync.Once
	stopErr    error
}

// ClusterPromotion is a replica seen serving its shard as master after its
// master was killed: At is the first poll (every 10 ms) that saw it.
type ClusterPromotion struct {
	At       time.Time
	Shard    int
	From, To string // the killed master's address, the promoted node's
	ToName   string // "replica 0.0" (shard.replica as started)
}

// StartCluster starts every node, forms the cluster (slots split evenly
// over the masters, CLUSTER MEET, CLUSTER REPLICATE) and returns once
// every node sees cluster_state:ok with every node, every replica has
// finished its full sync and its master lists it online. On failure
// everything started is stopped.
func StartCluster(ctx context.Context, opt ClusterOptions) (*Cluster, error) {
	if opt.NodeTimeout == 0 {
		opt.NodeTimeout = defaultNodeTimeout
	}
	switch {
	case opt.Masters < 3 || opt.Masters > 15:
		return nil, fmt.Errorf("localmasters: cluster masters: %d is not accepted; use 3..15 (a failure is judged by a majority of masters)", opt.Masters)
	case opt.ReplicasPerMaster < 0 || opt.ReplicasPerMaster > 3:
		return nil, fmt.Errorf("localmasters: cluster replicas per master: %d is not accepted; use 0..3", opt.ReplicasPerMaster)
	case opt.NodeTimeout < 100*time.Millisecond:
		return nil, fmt.Errorf("localmasters: cluster node timeout: %v is not accepted; use at least 100ms", opt.NodeTimeout)
	}
	bin, err := replicatedBinary(opt.RedisServer)
	if err != nil {
		return nil, err
	}
	s := &Set{bin: bin, persist: PersistNone, stopping: make(chan struct{})}
	if s.version, err = redisserver.Version(bin); err != nil {
		s.version = "unknown" // announcements only
	}
	c := &Cluster{set: s, opt: opt, ids: map[*Master]string{}}
	if opt.CuttableBus {
		c.bus = newBusNet()
	}
	ctx, cancel := context.WithTimeout(ctx, clusterFormTimeout)
	defer cancel()
	if err := c.start(ctx); err != nil {
		if serr := c.Stop(); serr != nil {
			err = errors.Join(err, fmt.Errorf("cleanup: %w", serr))
		}
		return nil, err
	}
	c.announce()
	return c, nil
}

func (c *Cluster) start(ctx context.Context) error {
	for i := range c.opt.Masters {
		m, err := c.startNode(ctx, fmt.Sprintf("master %d", i), len(c.Nodes()))
		if err != nil {
			return err
		}
		c.masters = append(c.masters, m)
	}
	c.replicas = make([][]*Master, c.opt.Masters)
	for i := range c.opt.Masters {
		for j := range c.opt.ReplicasPerMaster {
			m, err := c.startNode(ctx, fmt.Sprintf("replica %d.%d", i, j), len(c.Nodes()))
			if err != nil {
				return err
			}
			c.replicas[i] = append(c.replicas[i], m)
		}
	}
	return c.form(ctx)
}

// startNode starts one cluster-enabled node on a free client port and a
// free bus port (cluster-port, drawn apart: port+10000 may be taken),
// retrying with another bus port when that one was raced. k is its place
// in Nodes() (its source address behind gates).
func (c *Cluster) startNode(ctx context.Context, name string, k int) (*Master, error) {
	var gate *busGate
	if c.bus != nil {
		var err error
		if gate, err = c.bus.gate(k); err != nil {
			return nil, err
		}
	}
	var err error
	for range redisserver.BindAttempts {
		bus, perr := ports.Free()
		if perr != nil {
			return nil, perr
		}
		flags := c.nodeFlags(bus)
		if gate != nil {
			flags = append(flags, busFlags(k, gate)...)
		}
		var m *Master
		m, err = c.set.startProcess(ctx, spec{name: name, extra: flags}, "")
		if err == nil {
			if gate != nil {
				gate.serve(strconv.Itoa(bus))
			}
			return m, nil
		}
		// A failed node stays in the set (Stop removes its dir).
		if !strings.Contains(err.Error(), "(cluster)") {
			break
		}
	}
	return nil, fmt.Errorf("localmasters: cluster %s: %w", name, err)
}

// nodeFlags: cluster-replica-validity-factor 0 lets a replica that lost
// its master's link long ago still be promoted (a lagging replica's
// failover); full syncs through disk, as a replicated set's (dataFlags);
// a master pings its replicas every second (not 10), so that a replica
// of an idle master soon has an offset and CLUSTER SLOTS lists it (it
// leaves out a replica at offset 0 as not yet synced).
func (c *Cluster) nodeFlags(bus int) []string {
	return []string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
		"--cluster-node-timeout", strconv.FormatInt(c.opt.NodeTimeout.Milliseconds(), 10),
		"--cluster-port", strconv.Itoa(bus), "--cluster-replica-validity-factor", "0",
		"--repl-diskless-sync", "no", "--shutdown-timeout", "0", "--repl-ping-replica-period", "1"}
}

// Shard is the slot range shard i owns as formed: the slots split evenly,
// the last shard taking the rest (as redis-cli --cluster create does).
func (c *Cluster) Shard(i int) (lo, hi int) {
	per := Slots / c.opt.Masters
	lo, hi = i*per, (i+1)*per-1
	if i == c.opt.Masters-1 {
		hi = Slots - 1
	}
	return lo, hi
}

// form gives each master its slots, introduces every node to the first,
// makes each replica replicate its master and waits until it all holds.
func (c *Cluster) form(ctx context.Context) error {
	for _, m := range c.Nodes() {
		id, err := redisserver.Do(ctx, m.Addr(), "CLUSTER", "MYID")
		if err != nil {
			return fmt.Errorf("localmasters: cluster %s: CLUSTER MYID: %w", m.Name(), err)
		}
		c.ids[m] = id
	}
	for i, m := range c.masters {
		lo, hi := c.Shard(i)
		if _, err := redisserver.Do(ctx, m.Addr(), "CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(lo), strconv.Itoa(hi)); err != nil {
			return fmt.Errorf("localmasters: cluster %s: ADDSLOTSRANGE %d %d: %w", m.Name(), lo, hi, err)
		}
	}
	first := c.masters[0]
	for _, m := range c.Nodes()[1:] {
		if _, err := redisserver.Do(ctx, first.Addr(), "CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(m.Port()), busPort(m)); err != nil {
			return fmt.Errorf("localmasters: cluster MEET %s: %w", m.Name(), err)
		}
	}
	for i := range c.replicas {
		for _, r := range c.replicas[i] {
			if err := c.replicate(ctx, r, c.masters[i]); err != nil {
				return err
			}
		}
	}
	return c.waitFormed(ctx)
}

// busPort is the bus port a node announces, from its flags: its gate's
// when it has one, else its cluster-port.
func busPort(m *Master) string {
	if p := flagValue(m, "--cluster-announce-bus-port"); p != "" {
		return p
	}
	return flagValue(m, "--cluster-port")
}

// flagValue is the value m was started with for flag; "" if none.
func flagValue(m *Master, flag string) string {
	for i, f := range m.role.extra {
		if f == flag && i+1 < len(m.role.extra) {
			return m.role.extra[i+1]
		}
	}
	return ""
}

// replicate makes r a replica of master once r knows it (MEET spreads by
// gossip).
func (c *Cluster) replicate(ctx context.Context, r, master *Master) error {
	what := fmt.Sprintf("cluster %s (%s) replicating %s", r.Name(), r.Addr(), master.Name())
	return c.poll(ctx, what, func(ctx context.Context) error {
		_, err := redisserver.Do(ctx, r.Addr(), "CLUSTER", "REPLICATE", c.ids[master])
		return err
	})
}

// waitFormed waits until every node sees the cluster whole, and every
// replica is synced and online on its master (WAIT counts it only then).
func (c *Cluster) waitFormed(ctx context.Context) error {
	for _, m := range c.Nodes() {
		if err := c.poll(ctx, "cluster "+m.Name()+" ("+m.Addr()+")", func(ctx context.Context) error { return c.nodeSeesWhole(ctx, m) }); err != nil {
			return err
		}
	}
	for i := range c.replicas {
		for _, r := range c.replicas[i] {
			what := fmt.Sprintf("cluster %s (%s) synced with %s", r.Name(), r.Addr(), c.masters[i].Name())
			if err := c.poll(ctx, what, func(ctx context.Context) error { return synced(ctx, r, c.masters[i]) }); err != nil {
				return err
			}
		}
	}
	for _, m := range c.Nodes() {
		what := "cluster " + m.Name() + " (" + m.Addr() + ") listing every replica in CLUSTER SLOTS"
		if err := c.poll(ctx, what, func(ctx context.Context) error { return c.slotsList(ctx, m.Addr()) }); err != nil {
			return err
		}
	}
	return nil
}

// slotsList: CLUSTER SLOTS at addr lists every replica of every master,
// as a client discovering the cluster will see it.
func (c *Cluster) slotsList(ctx context.Context, addr string) error {
	m, err := redisserver.DoMessage(ctx, addr, "CLUSTER", "SLOTS")
	if err != nil {
		return err
	}
	ranges, err := m.ToArray()
	if err != nil {
		return err
	}
	for _, r := range ranges {
		if e, _ := r.ToArray(); len(e)-3 != c.opt.ReplicasPerMaster {
			return fmt.Errorf("CLUSTER SLOTS lists a range with %d replicas, want %d", max(len(e)-3, 0), c.opt.ReplicasPerMaster)
		}
	}
	return nil
}

// nodeSeesWhole: cluster_state ok, every node known, every slot served,
// and the shards' masters and replicas as formed.
func (c *Cluster) nodeSeesWhole(ctx context.Context, m *Master) error {
	s, err := redisserver.Do(ctx, m.Addr(), "CLUSTER", "INFO")
	if err != nil {
		return err
	}
	info := engine.ParseInfo(s)
	n := len(c.Nodes())
	if info["cluster_state"] != "ok" || info["cluster_known_nodes"] != strconv.Itoa(n) || info["cluster_slots_ok"] != strconv.Itoa(Slots) {
		return fmt.Errorf("cluster_state %s, known nodes %s of %d, slots ok %s", info["cluster_state"], info["cluster_known_nodes"], n, info["cluster_slots_ok"])
	}
	nodes, err := c.view(ctx, m.Addr())
	if err != nil {
		return err
	}
	for i := range c.masters {
		if got := len(nodes.replicasOf(c.ids[c.masters[i]])); got != len(c.replicas[i]) {
			return fmt.Errorf("sees %d replicas of %s, want %d", got, c.masters[i].Name(), len(c.replicas[i]))
		}
	}
	return nil
}

// synced: the replica's link is up with no sync in progress and its
// master lists it online.
func synced(ctx context.Context, r, master *Master) error {
	s, err := redisserver.Do(ctx, r.Addr(), "INFO", "replication")
	if err != nil {
		return err
	}
	info := engine.ParseInfo(s)
	if info["master_link_status"] != "up" || info["master_sync_in_progress"] != "0" {
		return fmt.Errorf("master_link_status %q, master_sync_in_progress %q", info["master_link_status"], info["master_sync_in_progress"])
	}
	ms, err := redisserver.Do(ctx, master.Addr(), "INFO", "replication")
	if err != nil {
		return fmt.Errorf("master: %w", err)
	}
	want := ",port=" + strconv.Itoa(r.Port()) + ",state=online,"
	for k, v := range engine.ParseInfo(ms) {
		if strings.HasPrefix(k, "slave") && strings.Contains(","+v+",", want) {
			return nil
		}
	}
	return fmt.Errorf("its master does not list it online yet")
}

// poll runs check until it passes or ctx ends, then names what was not
// ready and why.
func (c *Cluster) poll(ctx context.Context, what string, check func(context.Context) error) error {
	for {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		err := check(cctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("localmasters: %s: not ready: %w", what, err)
		case <-c.set.stopping:
			return ErrStopped
		case <-time.After(pollEvery):
		}
	}
}

// clusterNode is one line of CLUSTER NODES.
type clusterNode struct {
	id, addr, flags, master string
	slots                   []string
}

type clusterView []clusterNode

// view is CLUSTER NODES as the node at addr sees it.
func (c *Cluster) view(ctx context.Context, addr string) (clusterView, error) {
	s, err := redisserver.Do(ctx, addr, "CLUSTER", "NODES")
	if err != nil {
		return nil, err
	}
	var out clusterView
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		a, _, _ := strings.Cut(f[1], "@")
		out = append(out, clusterNode{id: f[0], addr: a, flags: f[2], master: f[3], slots: f[8:]})
	}
	return out, nil
}

func (v clusterView) replicasOf(id string) []clusterNode {
	var out []clusterNode
	for _, n := range v {
		if n.master == id {
			out = append(out, n)
		}
	}
	return out
}

// masterOfSlot is the node v says serves slot, not failed; "" if none.
func (v clusterView) masterOfSlot(slot int) string {
	for _, n := range v {
		if !strings.Contains(n.flags, "master") || strings.Contains(n.flags, "fail") {
			continue
		}
		for _, r := range n.slots {
			lo, hi, ok := strings.Cut(r, "-")
			if !ok {
				hi = lo
			}
			l, err1 := strconv.Atoi(lo)
			h, err2 := strconv.Atoi(hi)
			if err1 == nil && err2 == nil && l <= slot && slot <= h {
				return n.addr
			}
		}
	}
	return ""
}

// Nodes are every node as started: the masters, then the replicas by
// shard.
func (c *Cluster) Nodes() []*Master {
	out := append([]*Master(nil), c.masters...)
	for _, rs := range c.replicas {
		out = append(out, rs...)
	}
	return out
}

// Masters are the nodes started as masters, by shard.
func (c *Cluster) Masters() []*Master { return append([]*Master(nil), c.masters...) }

// Replicas are the nodes started as replicas, shard by shard.
func (c *Cluster) Replicas() []*Master {
	var out []*Master
	for _, rs := range c.replicas {
		out = append(out, rs...)
	}
	return out
}

// ShardReplicas are shard i's nodes started as replicas.
func (c *Cluster) ShardReplicas(i int) []*Master { return append([]*Master(nil), c.replicas[i]...) }

// Addrs are every node's address, masters first.
func (c *Cluster) Addrs() []string { return addrsOf(c.Nodes()) }

// MasterAddrs are the addresses of the nodes started as masters.
func (c *Cluster) MasterAddrs() []string { return addrsOf(c.masters) }

// Version is redis-server's version.
func (c *Cluster) Version() string { return c.set.version }

// NodeTimeout is the nodes' cluster-node-timeout.
func (c *Cluster) NodeTimeout() time.Duration { return c.opt.NodeTimeout }

// Process is the node at addr; nil when none is.
func (c *Cluster) Process(addr string) *Master {
	for _, m := range c.Nodes() {
		if m.Addr() == addr {
			return m
		}
	}
	return nil
}

// ShardMaster is the address of the node serving shard i's slots now, as
// the first live node that answers sees it (not one cut from the bus).
func (c *Cluster) ShardMaster(ctx context.Context, i int) (string, error) {
	lo, _ := c.Shard(i)
	var errs []error
	for k, m := range c.Nodes() {
		if m.Pid() == 0 || c.bus != nil && c.bus.isCut(k) { // a cut node's view is stale
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		v, err := c.view(cctx, m.Addr())
		cancel()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if a := v.masterOfSlot(lo); a != "" {
			return a, nil
		}
	}
	return "", fmt.Errorf("localmasters: cluster shard %d: no node names its master: %w", i, errors.Join(errs...))
}

// KillShardMaster SIGKILLs the node serving shard i now, returns once it
// is reaped, and watches the shard's other nodes for the one promoted in
// its place (Promotions).
func (c *Cluster) KillShardMaster(ctx context.Context, i int) (Kill, error) {
	addr, m, err := c.shardMasterProcess(ctx, i)
	if err != nil {
		return Kill{}, err
	}
	k := Kill{Addr: addr, Name: m.Name(), Pid: m.Pid(), At: time.Now()}
	if k.Pid == 0 {
		return k, fmt.Errorf("localmasters: cluster shard %d: master %s (%s) is not running", i, m.Name(), addr)
	}
	if err := m.Kill(); err != nil {
		return k, err
	}
	k.Reaped = time.Now()
	c.mu.Lock()
	c.kills = append(c.kills, k)
	c.mu.Unlock()
	c.watchers.Add(1)
	go c.watchPromotion(i, m)
	return k, nil
}

// watchPromotion polls shard i's other live nodes until one reports
// itself master (INFO replication's role), or promotionWatch passes, or
// the cluster stops.
func (c *Cluster) watchPromotion(i int, killed *Master) {
	defer c.watchers.Done()
	deadline := time.After(promotionWatch)
	for {
		for _, n := range append(c.ShardReplicas(i), c.masters[i]) {
			if n == killed || n.Pid() == 0 {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			info, err := redisserver.Do(ctx, n.Addr(), "INFO", "replication")
			cancel()
			if err == nil && engine.ParseInfo(info)["role"] == "master" {
				c.mu.Lock()
				c.promotions = append(c.promotions, ClusterPromotion{At: time.Now(), Shard: i, From: killed.Addr(), To: n.Addr(), ToName: n.Name()})
				c.mu.Unlock()
				return
			}
		}
		select {
		case <-c.set.stopping:
			return
		case <-deadline:
			return
		case <-time.After(promotionPoll):
		}
	}
}

// CutReplicaLinks closes every replica's connection on every shard's
// current master (CLIENT KILL TYPE replica): writes from then on reach no
// replica until it reconnects, which a replica stopped (SIGSTOP) first
// cannot (faults.Replication: replication_lag). Without the cut, a
// stopped replica would still read what its kernel buffered.
func (c *Cluster) CutReplicaLinks(ctx context.Context) error {
	var errs []error
	for i := range c.masters {
		addr, err := c.ShardMaster(ctx, i)
		if err == nil {
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			_, err = redisserver.Do(cctx, addr, "CLIENT", "KILL", "TYPE", "replica")
			cancel()
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Kills are the KillShardMaster calls so far.
func (c *Cluster) Kills() []Kill {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Kill(nil), c.kills...)
}

// Promotions are the promotions seen after kills, in order.
func (c *Cluster) Promotions() []ClusterPromotion {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]ClusterPromotion(nil), c.promotions...)
}

// WaitPromotion returns the n-th promotion (1-based) once seen, or an
// error when ctx ends first.
func (c *Cluster) WaitPromotion(ctx context.Context, n int) (ClusterPromotion, error) {
	for {
		if ps := c.Promotions(); len(ps) >= n {
			return ps[n-1], nil
		}
		select {
		case <-ctx.Done():
			return ClusterPromotion{}, fmt.Errorf("localmasters: cluster: promotion %d not seen: %w", n, ctx.Err())
		case <-time.After(promotionPoll):
		}
	}
}

// Stop stops every node by pid and removes the temp dirs; idempotent.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		c.stopErr = c.set.Stop()
		if c.bus != nil {
			c.bus.close()
		}
		c.watchers.Wait()
	})
	return c.stopErr
}

func (c *Cluster) announce() {
	if c.opt.Log == nil {
		return
	}
	var pids []string
	for _, m := range c.Nodes() {
		pids = append(pids, strconv.Itoa(m.Pid()))
	}
	fmt.Fprintf(c.opt.Log, "localmasters: started a Redis Cluster (%s, version %s): masters %s, replicas %s (node timeout %v) (pids %s)\n",
		c.set.bin, c.set.version, strings.Join(c.MasterAddrs(), " "), strings.Join(addrsOf(c.Replicas()), " "), c.opt.NodeTimeout, strings.Join(pids, " "))
}

// shardMasterProcess is the node serving shard i now: its address and
// its process.
func (c *Cluster) shardMasterProcess(ctx context.Context, i int) (string, *Master, error) {
	addr, err := c.ShardMaster(ctx, i)
	if err != nil {
		return "", nil, err
	}
	if m := c.Process(addr); m != nil {
		return addr, m, nil
	}
	return "", nil, fmt.Errorf("localmasters: cluster shard %d: master %s is not a node of this cluster", i, addr)
}
