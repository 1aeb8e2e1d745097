package etcdlock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// PeerGates stand in front of the members' peer listeners, one HTTP
// reverse proxy each, and cut members off from each other (faults.Links).
// A TCP proxy cannot: rafthttp carries i→j on a stream j dialed to i and
// j→i on one i dialed to j, and a member has one peer URL for everyone.
// Every raft request names its sender (X-Server-From), so a gate can
// refuse just the requests between an isolated member and the others.
//
// A cut request is refused: its connection is closed with no response.
// Hanging it instead would pin etcd's pipeline senders (their transport
// has no read timeout) until Rejoin; refused, etcd sees the peer
// unreachable at once, drops what it sent, and its stream readers retry
// every 100 ms, so links work again within that of a Rejoin.
type PeerGates struct {
	members []*Member
	gates   []*http.Server
	tr      *http.Transport

	mu    sync.Mutex
	ids   map[string]int // raft member ID (hex, as in X-Server-From) → index
	depth []int          // nested Isolates, by member
	roles []string       // each isolated member's role when it was cut
	flows map[*flow]struct{}
}

// flow is a request a gate forwards now (from -1: not a member).
type flow struct {
	from, to int
	cancel   context.CancelFunc
}

// quiet drops the proxies' per-request errors: a cut or a dead member
// would log one for every message etcd retries.
var quiet = log.New(io.Discard, "", 0)

// startGates puts a gate in front of each member's advertised peer URL
// and advertises the gate instead. On error the gates opened so far are
// returned, to be closed.
func startGates(members []*Member) (*PeerGates, error) {
	g := &PeerGates{members: members, depth: make([]int, len(members)), roles: make([]string, len(members)),
		flows: map[*flow]struct{}{}, tr: gateTransport()}
	for i, m := range members {
		if err := g.open(i, m); err != nil {
			return g, fmt.Errorf("etcd peer gate for %s: %w", m.Name, err)
		}
	}
	return g, nil
}

// gateTransport reaches the members. Idle connections go before etcd's
// peer listener drops them (5 s read timeout), so none is reused as it
// closes.
func gateTransport() *http.Transport {
	return &http.Transport{DialContext: (&net.Dialer{Timeout: time.Second}).DialContext,
		MaxIdleConnsPerHost: 64, IdleConnTimeout: 3 * time.Second}
}

func (g *PeerGates) open(to int, m *Member) error {
	target, err := url.Parse(m.AdvertisedPeerURL)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	proxy := g.proxyTo(target)
	srv := &http.Server{ErrorLog: quiet, ConnContext: withConn,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { g.serve(to, proxy, w, r) })}
	g.gates = append(g.gates, srv)
	m.AdvertisedPeerURL = "http://" + ln.Addr().String()
	go func() { _ = srv.Serve(ln) }()
	return nil
}

// proxyTo streams (FlushInterval -1: raft streams are long-lived
// responses); a member that does not answer closes the connection, as
// its own port would, rather than a 502.
func (g *PeerGates) proxyTo(target *url.URL) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport:     g.tr,
		FlushInterval: -1,
		ErrorLog:      quiet,
		ErrorHandler:  func(http.ResponseWriter, *http.Request, error) { panic(http.ErrAbortHandler) },
	}
}

// serve forwards r to member to unless it crosses a cut. ErrAbortHandler
// closes the connection without a response (and without a log line).
func (g *PeerGates) serve(to int, proxy *httputil.ReverseProxy, w http.ResponseWriter, r *http.Request) {
	ctx, f := g.admit(to, g.sender(r), r.Context())
	if f == nil {
		panic(http.ErrAbortHandler)
	}
	defer g.end(f)
	proxy.ServeHTTP(w, r.WithContext(ctx))
}

// admit registers the flow with a context an Isolate can cancel, or says
// nil when it crosses a cut. Deciding and registering under one lock, no
// Isolate slips between them.
func (g *PeerGates) admit(to, from int, parent context.Context) (context.Context, *flow) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f := &flow{from: from, to: to}
	if g.cut(f) {
		return nil, nil
	}
	ctx, cancel := context.WithCancel(parent)
	f.cancel = cancel
	g.flows[f] = struct{}{}
	return ctx, f
}

func (g *PeerGates) end(f *flow) {
	g.mu.Lock()
	delete(g.flows, f)
	g.mu.Unlock()
	f.cancel()
}

// cut says whether the flow goes to or comes from an isolated member.
// Called with g.mu held.
func (g *PeerGates) cut(f *flow) bool {
	return g.depth[f.to] > 0 || f.from >= 0 && g.depth[f.from] > 0
}

// sender is the member that sent r: the one etcd's raft headers name
// (X-Server-From, on stream GETs, pipeline and snapshot POSTs), else the
// one whose process owns the connection. The requests etcd sends without
// a sender matter: a follower forwards its clients' lease renewals to the
// leader as POST /leases, which, passed from an isolated follower, would
// keep its clients' leases alive across the cut.
func (g *PeerGates) sender(r *http.Request) int {
	g.mu.Lock()
	i, ok := g.ids[r.Header.Get("X-Server-From")]
	g.mu.Unlock()
	if ok {
		return i
	}
	return r.Context().Value(connKey{}).(*peerConn).owner(g)
}

type connKey struct{}

// peerConn is a connection a gate accepted; its owner is looked up once.
type peerConn struct {
	conn net.Conn
	once sync.Once
	from int
}

func withConn(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, &peerConn{conn: c})
}

func (p *peerConn) owner(g *PeerGates) int {
	p.once.Do(func() { p.from = g.ownerOf(p.conn) })
	return p.from
}

// ownerOf is the member whose process holds the other end of c (-1:
// none, e.g. a tool): the socket's inode in /proc/net/tcp, among the
// members' open files.
func (g *PeerGates) ownerOf(c net.Conn) int {
	inode := socketInode(port(c.RemoteAddr()), port(c.LocalAddr()))
	if inode == "" {
		return -1
	}
	for i, m := range g.members {
		if hasFile(m.Pid(), "socket:["+inode+"]") {
			return i
		}
	}
	return -1
}

func port(a net.Addr) int {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.Port
	}
	return -1
}

// socketInode is the inode of the loopback socket from port local to
// port remote ("": not found; 0 is a socket in TIME_WAIT, owned by none).
func socketInode(local, remote int) string {
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return ""
	}
	l, r := fmt.Sprintf(":%04X", local), fmt.Sprintf(":%04X", remote)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 9 && strings.HasSuffix(f[1], l) && strings.HasSuffix(f[2], r) && f[9] != "0" {
			return f[9]
		}
	}
	return ""
}

// hasFile says whether process pid has link open.
func hasFile(pid int, link string) bool {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if l, _ := os.Readlink(filepath.Join(dir, e.Name())); l == link {
			return true
		}
	}
	return false
}

// learn maps raft member IDs to indices, by Name as indexOfID does. The
// IDs derive from the peer URLs and the cluster token, so they are asked
// of the running cluster: its member list has all of them at once, where
// X-Raft-To would teach a gate only its own member's, on stream GETs.
func (g *PeerGates) learn(ctx context.Context, endpoints []string) error {
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ml, err := cli.MemberList(ctx)
	if err != nil {
		return fmt.Errorf("etcd member list for the peer gates: %w", err)
	}
	ids := map[string]int{}
	for _, mm := range ml.Members {
		for i, m := range g.members {
			if mm.Name == m.Name {
				ids[strconv.FormatUint(mm.ID, 16)] = i
			}
		}
	}
	g.mu.Lock()
	g.ids = ids
	g.mu.Unlock()
	return nil
}

// close stops the gates and every flow through them.
func (g *PeerGates) close() error {
	var errs []error
	for _, srv := range g.gates {
		errs = append(errs, srv.Close())
	}
	g.tr.CloseIdleConnections()
	return errors.Join(errs...)
}

// Links are the members' peer links (nil: started without Options.Gates).
func (c *Cluster) Links() *PeerGates { return c.gates }

// Isolate cuts each member off from every other member, both ways: new
// requests across the cut are refused and the streams open across it end
// now. Calls nest.
func (g *PeerGates) Isolate(members []int) error {
	if err := g.valid(members); err != nil {
		return err
	}
	g.mu.Lock()
	var fresh []int
	for _, i := range members {
		if g.depth[i]++; g.depth[i] == 1 {
			fresh = append(fresh, i)
		}
	}
	g.cutFlows()
	g.mu.Unlock()
	g.noteRoles(fresh)
	return nil
}

// cutFlows ends the flows that cross a cut. Called with g.mu held.
func (g *PeerGates) cutFlows() {
	for f := range g.flows {
		if g.cut(f) {
			f.cancel()
		}
	}
}

// noteRoles records whether each member led when it was cut, for Proof.
// Asked just after the cut, it is still the role before: a leader steps
// down only after an election timeout without a quorum.
func (g *PeerGates) noteRoles(members []int) {
	for _, i := range members {
		role := "role before unknown"
		if st, err := g.status(context.Background(), i); err == nil {
			role = "follower before"
			if st.Leader == st.Header.MemberId {
				role = "leader before"
			}
		}
		g.mu.Lock()
		g.roles[i] = role
		g.mu.Unlock()
	}
}

// Rejoin ends one Isolate of each member.
func (g *PeerGates) Rejoin(members []int) error {
	if err := g.valid(members); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	left := append([]int(nil), g.depth...)
	for _, i := range members {
		if left[i]--; left[i] < 0 {
			return fmt.Errorf("etcd member %d is not isolated", i)
		}
	}
	g.depth = left
	return nil
}

func (g *PeerGates) valid(members []int) error {
	for _, i := range members {
		if i < 0 || i >= len(g.members) {
			return fmt.Errorf("no etcd member %d (the cluster has %d)", i, len(g.members))
		}
	}
	return nil
}

// Proof asks the member itself (its client URL, which no gate cuts) for
// its view of the cluster, and makes one consensus write through it that
// leaves nothing behind: a short lease, revoked if granted. It was cut
// when it answered and the write failed for want of a quorum; a member
// that does not answer at all proves nothing (it may be dead).
func (g *PeerGates) Proof(ctx context.Context, member int) (string, bool) {
	if err := g.valid([]int{member}); err != nil {
		return err.Error(), false
	}
	view, answered := g.view(ctx, member)
	err := g.writeThrough(ctx, member)
	switch {
	case !answered:
		return view + ": nothing proven", false
	case err == nil:
		return view + "; a lease grant through it succeeded: it still commits", false
	case !noQuorum(err):
		return view + "; a lease grant through it failed, not for want of a quorum: " + err.Error(), false
	}
	return view + "; a lease grant through it failed: " + err.Error(), true
}

// noQuorum: the write timed out, or etcd said it has no leader or timed
// the proposal out.
func noQuorum(err error) bool {
	msg := strings.ToLower(err.Error()) // the server's own deadline comes back as an rpc error's text
	return errors.Is(err, context.DeadlineExceeded) || strings.Contains(msg, "deadline exceeded") ||
		strings.Contains(msg, "no leader") || strings.Contains(msg, "request timed out")
}

// view is "member 1 (leader before) not leader (sees no leader)", and
// whether the member answered. (Its term is left out: etcd 3.4's Status
// has the last applied entry's.)
func (g *PeerGates) view(ctx context.Context, i int) (string, bool) {
	g.mu.Lock()
	head := fmt.Sprintf("member %d (%s)", i, g.roles[i])
	g.mu.Unlock()
	st, err := g.status(ctx, i)
	switch {
	case err != nil:
		return head + " did not say its status: " + err.Error(), false
	case st.Leader == st.Header.MemberId:
		return head + " still leader", true
	}
	return head + " not leader (sees " + g.leaderName(st.Leader) + ")", true
}

func (g *PeerGates) leaderName(id uint64) string {
	if id == 0 {
		return "no leader"
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if i, ok := g.ids[strconv.FormatUint(id, 16)]; ok {
		return fmt.Sprintf("member %d as leader", i)
	}
	return fmt.Sprintf("%x as leader", id)
}

func (g *PeerGates) status(ctx context.Context, i int) (*clientv3.StatusResponse, error) {
	cli, err := g.client(i)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	return cli.Status(ctx, g.members[i].ClientURL)
}

// writeThrough grants a 5 s lease through member i within 1.5 s and
// revokes it (left over, it expires by itself).
func (g *PeerGates) writeThrough(ctx context.Context, i int) error {
	cli, err := g.client(i)
	if err != nil {
		return err
	}
	defer cli.Close()
	gctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	lease, err := cli.Grant(gctx, 5)
	if err != nil {
		return err
	}
	rctx, rcancel := context.WithTimeout(ctx, time.Second)
	defer rcancel()
	_, _ = cli.Revoke(rctx, lease.ID)
	return nil
}

func (g *PeerGates) client(i int) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{Endpoints: []string{g.members[i].ClientURL}, DialTimeout: time.Second, Logger: zap.NewNop()})
}
