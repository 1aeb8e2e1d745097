package faults

import (
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// MemberNet puts every ordered pair of a cluster's members behind proxies
// of their own, one per port of the member dialed: member i reaches member
// j only through proxy (i→j), which no other member uses, so cutting i off
// both ways is black-holing (i→j) and (j→i) for every other j. It works
// for members that each take the others' addresses from a configuration
// of their own (ZooKeeper's zoo.cfg). Behind the proxies, one relay per
// address dials the member (see relay).
type MemberNet struct {
	listen [][]string
	relays []*relay   // member j's port k at j*ports+k
	nets   []*Network // nets[i]: member i's proxies to the others, one client
	keys   []string   // this net's entries in hellos
}

// NewMemberNet starts the proxies; listen[j] are member j's peer addresses
// (as many for every member), which it listens on itself.
func NewMemberNet(listen [][]string) (*MemberNet, error) {
	if err := checkListen(listen); err != nil {
		return nil, err
	}
	m := &MemberNet{listen: slices.Clone(listen)}
	for _, addr := range slices.Concat(listen...) {
		r, err := newRelay(addr)
		if err != nil {
			m.Close()
			return nil, err
		}
		m.relays = append(m.relays, r)
	}
	for i := range listen {
		n, err := NewNetwork(m.others(i), 1)
		if err != nil {
			m.Close()
			return nil, err
		}
		m.nets = append(m.nets, n)
	}
	return m, nil
}

func checkListen(listen [][]string) error {
	if len(listen) < 2 || len(listen[0]) == 0 {
		return fmt.Errorf("faults: member links need at least two members with an address each, got %v", listen)
	}
	for j, addrs := range listen {
		if len(addrs) != len(listen[0]) {
			return fmt.Errorf("faults: member %d has %d peer addresses, member 0 %d", j, len(addrs), len(listen[0]))
		}
	}
	return nil
}

// others are the relays member i's proxies forward to, member by member
// (slot says where each is).
func (m *MemberNet) others(i int) []string {
	var out []string
	for at, r := range m.relays {
		if at/len(m.listen[0]) != i {
			out = append(out, r.ln.Addr().String())
		}
	}
	return out
}

// slot is the index, among member from's proxies, of the one to port k of
// member to.
func (m *MemberNet) slot(from, to, k int) int {
	if to > from {
		to--
	}
	return to*len(m.listen[0]) + k
}

// slots are the indexes of member from's proxies to member to.
func (m *MemberNet) slots(from, to int) []int {
	out := make([]int, len(m.listen[to]))
	for k := range out {
		out[k] = m.slot(from, to, k)
	}
	return out
}

// Addrs are the addresses member from should use for each member, in
// member order: its own real ones, the others' proxies.
func (m *MemberNet) Addrs(from int) [][]string {
	proxied := m.nets[from].Addrs(0)
	out := make([][]string, len(m.listen))
	for j, addrs := range m.listen {
		if j != from {
			first := m.slot(from, j, 0)
			addrs = proxied[first : first+len(addrs)]
		}
		out[j] = slices.Clone(addrs)
	}
	return out
}

// Isolate black-holes every link of each member, both ways: connections
// stay open, nothing crosses. Calls nest (a link is cut while either end
// is isolated).
func (m *MemberNet) Isolate(members []int) error { return m.each(members, (*Network).Partition) }

// Rejoin ends one Isolate of each member; the connections that crossed
// the cut are dropped.
func (m *MemberNet) Rejoin(members []int) error { return m.each(members, (*Network).Heal) }

// Delay adds lat ± jitter to the replies on every link (a round trip
// between two members is lat longer), until ClearDelay: loopback flatters
// a consensus system.
func (m *MemberNet) Delay(lat, jitter time.Duration) error {
	for _, n := range m.nets {
		if err := n.Latency(nil, nil, lat, jitter); err != nil {
			return err
		}
	}
	return nil
}

// ClearDelay removes Delay's latency.
func (m *MemberNet) ClearDelay() error {
	var errs []error
	for _, n := range m.nets {
		errs = append(errs, n.ClearLatency(nil, nil))
	}
	return errors.Join(errs...)
}

// each applies f to every member's dials and to the others' dials to it.
func (m *MemberNet) each(members []int, f func(n *Network, clients, masters []int) error) error {
	for _, i := range members {
		if i < 0 || i >= len(m.nets) {
			return fmt.Errorf("faults: member %d does not exist (0..%d)", i, len(m.nets)-1)
		}
	}
	var errs []error
	for _, i := range members {
		errs = append(errs, f(m.nets[i], nil, nil))
		for j, n := range m.nets {
			if j != i {
				errs = append(errs, f(n, nil, m.slots(j, i)))
			}
		}
	}
	return errors.Join(errs...)
}

// Close stops every proxy and relay.
func (m *MemberNet) Close() {
	for _, n := range m.nets {
		n.Close()
	}
	for _, r := range m.relays {
		r.Close()
	}
	for _, k := range m.keys {
		hellos.Delete(k)
	}
}

// A Hello rewrites the first message a member sends on a link, for
// members that name their own address in it: the peer would dial that
// address back, around the proxies (ZooKeeper's election InitialMessage).
// head is what has arrived so far; own is the sender's address on this
// port, via the proxy the peer reaches the sender through. more asks for
// more of head; out is what to pass on.
type Hello func(head []byte, own, via string) (out []byte, more bool)

// Greet puts h on every link to port k of the members. Call it before
// they start: a connection already open is not rewritten.
func (m *MemberNet) Greet(k int, h Hello) error {
	if k < 0 || k >= len(m.listen[0]) {
		return fmt.Errorf("faults: port %d does not exist (0..%d)", k, len(m.listen[0])-1)
	}
	for from := range m.nets {
		for to := range m.nets {
			if to == from {
				continue
			}
			if err := m.greet(from, to, k, h); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *MemberNet) greet(from, to, k int, h Hello) error {
	key := fmt.Sprintf("%p/%d-%d/%d", m, from, to, k)
	hellos.Store(key, hello{h, m.listen[from][k], m.Addrs(to)[from][k]})
	m.keys = append(m.keys, key)
	n := m.nets[from]
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.addToxic(n.proxies[pair{0, m.slot(from, to, k)}], toxicHello, helloType, "upstream", fmt.Sprintf(`{"key":%q}`, key))
}

// Toxiproxy makes its toxics from JSON, so a link's Hello is found by key.
var hellos sync.Map // key → hello

type hello struct {
	rewrite  Hello
	own, via string
}

const (
	helloType  = "lockbench_hello"
	toxicHello = "hello"
)

func init() { toxics.Register(helloType, new(helloToxic)) }

// helloToxic passes a connection's first message through its link's
// Hello and the rest as it comes.
type helloToxic struct {
	Key string `json:"key"`
}

type helloState struct {
	head []byte
	done bool
}

func (t *helloToxic) NewState() any { return new(helloState) }

func (t *helloToxic) Pipe(stub *toxics.ToxicStub) {
	st := stub.State.(*helloState)
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			if c = t.pass(st, c); c != nil {
				stub.Output <- c
			}
		}
	}
}

// pass is what of c goes on: nothing while the first message is still
// arriving, then that message as the Hello rewrote it, then c as it is.
func (t *helloToxic) pass(st *helloState, c *stream.StreamChunk) *stream.StreamChunk {
	v, ok := hellos.Load(t.Key)
	if st.done || !ok {
		return c
	}
	h := v.(hello)
	st.head = append(st.head, c.Data...)
	out, more := h.rewrite(st.head, h.own, h.via)
	if more {
		return nil
	}
	st.done, st.head = true, nil
	return &stream.StreamChunk{Data: out, Timestamp: c.Timestamp}
}

// dialRetry is how long a relay retries dialing a member that refuses.
const dialRetry = 2 * time.Second

// relay forwards connections to a member's address, retrying a refused
// dial for up to dialRetry. The proxy in front has accepted already, so a
// refusal would reach the dialer as a connection dropped: a ZooKeeper
// follower takes that as its leader failing and looks for another,
// where it retries a refused connect to a leader not listening yet.
type relay struct {
	ln     net.Listener
	to     string
	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
}

func newRelay(to string) (*relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faults: relay to %s: %w", to, err)
	}
	r := &relay{ln: ln, to: to, conns: map[net.Conn]bool{}}
	go r.serve()
	return r, nil
}

func (r *relay) serve() {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		go r.pipe(c)
	}
}

// pipe copies both ways until either side ends, then closes both.
func (r *relay) pipe(c net.Conn) {
	defer c.Close()
	up, err := r.dial()
	if err != nil {
		return
	}
	defer up.Close()
	if !r.track(true, c, up) {
		return
	}
	defer r.track(false, c, up)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
}

func (r *relay) dial() (net.Conn, error) {
	until := time.Now().Add(dialRetry)
	for {
		up, err := net.DialTimeout("tcp", r.to, time.Second)
		if err == nil || time.Now().After(until) || r.isClosed() {
			return up, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// track adds (or removes) live connections; false once the relay closed.
func (r *relay) track(add bool, cs ...net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range cs {
		if add && !r.closed {
			r.conns[c] = true
		} else {
			delete(r.conns, c)
		}
	}
	return !r.closed
}

func (r *relay) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// Close stops listening and drops every connection.
func (r *relay) Close() {
	r.ln.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for c := range r.conns {
		c.Close()
	}
}
