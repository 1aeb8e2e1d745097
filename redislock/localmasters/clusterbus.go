package localmasters

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"lockbench/internal/redisserver"
)

// A cluster started with CuttableBus runs its bus through gates, so that
// one node can be cut from the rest of the cluster while clients still
// reach it (CutFromBus). Every node's cluster-announce-bus-port is a gate
// of its own on 127.0.0.1 that forwards to the node's cluster-port, and
// every node dials out from a loopback address of its own
// (bind-source-addr 127.0.0.N: Redis 7 uses it for the bus and for
// replication), so a gate tells by the source address which node dials.
// Gossip gives every node one address per peer, so the per-pair proxies
// of faults.MemberNet cannot be placed here, and toxiproxy does not show
// its toxics the dialing address: hence a gate of its own.
//
// A replica replicates over its master's client address, which clients
// share; the replication side of a cut is an ACL user instead: every
// node replicates as replUser, and a cut master turns it off and drops
// its replicas' connections, so its replicas stop receiving its writes
// (and cannot reconnect) while every other client still reaches it.
const (
	replUser     = "lockbench-repl"
	replPassword = "lockbench-repl" // loopback only; the user exists to be switched off
	busDial      = time.Second
)

// sourceIP is node k's outgoing address (node 0: 127.0.0.2; 127.0.0.1 is
// every client's).
func sourceIP(k int) string { return "127.0.0." + strconv.Itoa(k+2) }

// busNet is a cluster's bus gates and which nodes are cut.
type busNet struct {
	mu     sync.Mutex
	byIP   map[string]int // source address → node
	cut    map[int]int    // node → cuts not healed yet (they nest)
	links  map[*busLink]bool
	gates  []*busGate
	closed bool
}

// busLink is one relayed bus connection: from dials to's gate (from is -1
// when the source address is no node's).
type busLink struct {
	from, to int
	in, out  net.Conn
}

// busGate forwards connections to node's cluster-port.
type busGate struct {
	net  *busNet
	node int
	ln   net.Listener
	to   string
}

func newBusNet() *busNet {
	return &busNet{byIP: map[string]int{}, cut: map[int]int{}, links: map[*busLink]bool{}}
}

// gate listens for node k (its source address sourceIP(k)); serve starts
// it once the node's cluster-port is known.
func (b *busNet) gate(k int) (*busGate, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("localmasters: bus gate of node %d: %w", k, err)
	}
	g := &busGate{net: b, node: k, ln: ln}
	b.mu.Lock()
	b.byIP[sourceIP(k)] = k
	b.gates = append(b.gates, g)
	b.mu.Unlock()
	return g, nil
}

// Port is the gate's port: the node's announced bus port.
func (g *busGate) Port() int { return g.ln.Addr().(*net.TCPAddr).Port }

func (g *busGate) serve(busPort string) {
	g.to = net.JoinHostPort("127.0.0.1", busPort)
	go func() {
		for {
			c, err := g.ln.Accept()
			if err != nil {
				return
			}
			go g.relay(c)
		}
	}()
}

// relay passes c on to the node unless either end is cut; a cut closes
// it (Cut), and a refused one is closed at once, as a peer the node
// cannot reach: the dialer sees the link fail and retries.
func (g *busGate) relay(c net.Conn) {
	from := -1
	if host, _, err := net.SplitHostPort(c.RemoteAddr().String()); err == nil {
		g.net.mu.Lock()
		if k, ok := g.net.byIP[host]; ok {
			from = k
		}
		g.net.mu.Unlock()
	}
	if g.net.blocked(from, g.node) {
		c.Close()
		return
	}
	up, err := net.DialTimeout("tcp", g.to, busDial)
	if err != nil {
		c.Close()
		return
	}
	l := &busLink{from: from, to: g.node, in: c, out: up}
	if !g.net.add(l) {
		l.close()
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	l.close()
	g.net.remove(l)
}

func (l *busLink) close() {
	l.in.Close()
	l.out.Close()
}

func (b *busNet) blocked(from, to int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed || b.cut[to] > 0 || (from >= 0 && b.cut[from] > 0)
}

// add registers l unless, since it was accepted, an end was cut.
func (b *busNet) add(l *busLink) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.cut[l.to] > 0 || (l.from >= 0 && b.cut[l.from] > 0) {
		return false
	}
	b.links[l] = true
	return true
}

func (b *busNet) remove(l *busLink) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.links, l)
}

// setCut cuts node k from every other node (on) or ends one cut of it,
// and says whether k is cut now. A cut closes the links it crosses, both
// ways.
func (b *busNet) setCut(k int, on bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !on {
		b.cut[k] = max(b.cut[k]-1, 0)
		return b.cut[k] > 0
	}
	b.cut[k]++
	for l := range b.links {
		if l.from == k || l.to == k {
			l.close()
			delete(b.links, l)
		}
	}
	return true
}

func (b *busNet) isCut(k int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cut[k] > 0
}

// close stops every gate and drops every link.
func (b *busNet) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for _, g := range b.gates {
		g.ln.Close()
	}
	for l := range b.links {
		l.close()
	}
	clear(b.links)
}

// busFlags make node k announce gate's port as its bus and dial out from
// its own address, and make it replicate as replUser. Protected mode
// would refuse a replica dialing from 127.0.0.N (it trusts 127.0.0.1
// alone); the node still listens on 127.0.0.1 only.
func busFlags(k int, g *busGate) []string {
	return []string{"--cluster-announce-ip", "127.0.0.1", "--cluster-announce-bus-port", strconv.Itoa(g.Port()),
		"--bind-source-addr", sourceIP(k), "--protected-mode", "no",
		"--user", replUser, "on", ">" + replPassword, "~*", "&*", "+@all",
		"--masteruser", replUser, "--masterauth", replPassword}
}

// BusCut is a CutFromBus: the shard's master at the time, and when.
type BusCut struct {
	Shard      int
	Addr, Name string
	At         time.Time
}

// CutFromBus cuts the node serving shard i now from every other node of
// the cluster: its bus links both ways, and its replicas' replication
// links (refused from then on); clients still reach it. The majority
// judges it failing after the node timeout and promotes a replica of it
// (Promotions), while it keeps serving its slots until it judges the
// majority failing itself. Needs CuttableBus.
func (c *Cluster) CutFromBus(ctx context.Context, i int) (BusCut, error) {
	if c.bus == nil {
		return BusCut{}, errors.New("localmasters: cluster: cut from the bus needs a cluster started with CuttableBus")
	}
	addr, m, err := c.shardMasterProcess(ctx, i)
	if err != nil {
		return BusCut{}, err
	}
	if err := c.cutReplication(ctx, m); err != nil {
		return BusCut{}, err
	}
	c.bus.setCut(c.nodeIndex(m), true)
	cut := BusCut{Shard: i, Addr: addr, Name: m.Name(), At: time.Now()}
	c.mu.Lock()
	c.cuts = append(c.cuts, cut)
	c.mu.Unlock()
	c.watchers.Add(1)
	go c.watchPromotion(i, m)
	return cut, nil
}

// cutReplication turns replUser off on m, then drops the connections
// logged in as it: its replicas' links.
func (c *Cluster) cutReplication(ctx context.Context, m *Master) error {
	for _, cmd := range [][]string{{"ACL", "SETUSER", replUser, "off"}, {"CLIENT", "KILL", "USER", replUser}} {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := redisserver.Do(cctx, m.Addr(), cmd...)
		cancel()
		if err != nil {
			return fmt.Errorf("localmasters: cluster %s (%s): cut replication: %v: %w", m.Name(), m.Addr(), cmd, err)
		}
	}
	return nil
}

// HealBus ends the oldest cut of each of shards (every cut when none
// are named): bus links are let through again and a node no longer cut
// accepts replicas again. A cut master whose replica was promoted
// rejoins as a replica (the cluster's newer epoch wins) and drops its
// data.
func (c *Cluster) HealBus(ctx context.Context, shards ...int) error {
	if c.bus == nil {
		return errors.New("localmasters: cluster: heal the bus needs a cluster started with CuttableBus")
	}
	var errs []error
	for _, cut := range c.takeCuts(shards) {
		m := c.Process(cut.Addr)
		if c.bus.setCut(c.nodeIndex(m), false) {
			continue // cut again since: replicas stay refused
		}
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := redisserver.Do(cctx, m.Addr(), "ACL", "SETUSER", replUser, "on")
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("localmasters: cluster %s (%s): heal replication: %w", m.Name(), m.Addr(), err))
		}
	}
	return errors.Join(errs...)
}

// takeCuts removes and returns the oldest cut of each of shards (all of
// them when none are named).
func (c *Cluster) takeCuts(shards []int) []BusCut {
	c.mu.Lock()
	defer c.mu.Unlock()
	var took, kept []BusCut
	want := map[int]bool{}
	for _, i := range shards {
		want[i] = true
	}
	for _, cut := range c.cuts {
		if len(shards) == 0 || want[cut.Shard] {
			took, want[cut.Shard] = append(took, cut), false
		} else {
			kept = append(kept, cut)
		}
	}
	c.cuts = kept
	return took
}

// BusCutProof says, while shard i's cut lasts, whether it took: another
// master, not cut, flags the cut node pfail or fail (CLUSTER NODES).
func (c *Cluster) BusCutProof(ctx context.Context, i int) (detail string, cut bool) {
	c.mu.Lock()
	var at *BusCut
	for k := range c.cuts {
		if c.cuts[k].Shard == i {
			at = &c.cuts[k]
			break
		}
	}
	c.mu.Unlock()
	if at == nil {
		return fmt.Sprintf("shard %d has no cut from the bus", i), false
	}
	name := fmt.Sprintf("shard %d's master %s (%s)", i, at.Name, at.Addr)
	var errs []error
	for k, m := range c.Nodes() {
		if m.Addr() == at.Addr || c.bus.isCut(k) || m.Pid() == 0 {
			continue
		}
		v, err := c.view(ctx, m.Addr())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, n := range v {
			if n.addr == at.Addr && strings.Contains(n.flags, "fail") {
				return fmt.Sprintf("%s cut from the bus: %s (%s) flags it %s", name, m.Name(), m.Addr(), n.flags), true
			}
		}
		return fmt.Sprintf("%s: %s (%s) does not flag it failing", name, m.Name(), m.Addr()), false
	}
	return fmt.Sprintf("%s: no other node answered: %v", name, errors.Join(errs...)), false
}

// Cuttable says the cluster was started with CuttableBus.
func (c *Cluster) Cuttable() bool { return c.bus != nil }

// nodeIndex is m's place in Nodes(), which its source address is by.
func (c *Cluster) nodeIndex(m *Master) int {
	for k, n := range c.Nodes() {
		if n == m {
			return k
		}
	}
	return -1
}
