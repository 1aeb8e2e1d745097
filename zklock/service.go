package zklock

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"lockbench/faults"
	"lockbench/plan"
	"lockbench/pool"
	"lockbench/results"
	"lockbench/service"
)

func init() {
	service.Register(zookeeper{})
	results.RegisterLegacy(results.LegacyService{Key: Name, ServersKey: "zookeeper_servers", Read: legacySection})
}

// legacySection reads a zookeeper cell's section of a result written
// before the service section.
func legacySection(b json.RawMessage, rec results.Settings) *results.ServiceSettings {
	var old struct {
		SessionTimeout results.Duration `json:"session_timeout"`
		TickTime       results.Duration `json:"tick_time"`
		FenceSource    string           `json:"fence_source"`
		LostSessions   int64            `json:"lost_sessions"`
		RPCsPerCycle   float64          `json:"rpcs_per_cycle"`
	}
	if json.Unmarshal(b, &old) != nil {
		return nil
	}
	v := &results.ServiceSettings{LeaseTTL: old.SessionTimeout, FenceSource: old.FenceSource, Lost: old.LostSessions, CallsPerCycle: old.RPCsPerCycle}
	v.Lease, v.Sessions, v.Calls, v.Baseline = "session timeout "+old.SessionTimeout.String(), "sessions", "lock requests", "ZooKeeper's Set round trip"
	v.Server, v.Servers = "server", fmt.Sprintf("%d local servers (%s, tickTime %s)", rec.Local, rec.Persistence, old.TickTime)
	if len(rec.Servers) > 0 {
		v.Servers = fmt.Sprintf("%d servers", len(rec.Servers))
	}
	return v
}

// The members' links are what a partition with link: members cuts.
var _ faults.Links = (*PeerLinks)(nil)

// CanServe: a local ensemble needs Debian's zookeeper and a JRE.
func (zookeeper) CanServe(c plan.Cell) error {
	s := c.Settings
	if _, ok := ServerPath(); !ok && !s.External() {
		return service.MissingTool{Err: fmt.Errorf("zookeeper not found (/usr/share/java/zookeeper.jar and java); topology zookeeper with local servers runs Debian's (apt-get install %s)", Package)}
	}
	return nil
}

// servers are a zookeeper cell's: a local ensemble (nil for an external
// one) and the client addresses the lock client dials.
type servers struct {
	local *Cluster
	addrs []string
	// peerNet is the proxies on the members' links (member_latency, a
	// partition or a latency fault on them); nil without.
	peerNet *faults.MemberNet
}

// Start starts the cell's local ensemble, its tickTime fitted to the
// cell's session timeout, or takes an external one's servers.
func (zookeeper) Start(ctx context.Context, c plan.Cell, log io.Writer) (service.Servers, error) {
	s := c.Settings
	if s.External() {
		return &servers{addrs: s.Servers}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	v := &servers{}
	opt := Options{Servers: members(s), ForceSync: s.FsyncPersistence() != NoFsync, TTL: c.Terms.TTL, MaxClientCnxns: maxClientCnxns(s), Log: log}
	if lat := time.Duration(s.MemberLatency); lat > 0 || c.NeedsMemberLinks() || c.NeedsMemberDelay() {
		opt.PeerVia = v.peers(lat)
	}
	cl, err := StartLocal(ctx, opt)
	if err != nil {
		v.Stop()
		return nil, err
	}
	v.local, v.addrs = cl, cl.Servers()
	return v, nil
}

// peers is the ensemble's PeerVia: a proxy on every ordered pair of
// members' links, the election links' first message rewritten to name
// them (so that a dial-back goes through them too), and lat (0: none) on
// every link's replies. Its goroutines are labelled so that their CPU is
// told apart.
func (v *servers) peers(lat time.Duration) func(listen [][]string, hello Hello) (PeerNet, error) {
	return func(listen [][]string, hello Hello) (PeerNet, error) {
		var n *faults.MemberNet
		var err error
		pool.WithProxyLabel(func() { n, err = newMemberNet(listen, hello, lat) })
		if err != nil {
			return nil, err // no typed nil in the interface
		}
		v.peerNet = n
		return n, nil
	}
}

func newMemberNet(listen [][]string, hello Hello, lat time.Duration) (*faults.MemberNet, error) {
	n, err := faults.NewMemberNet(listen)
	if err != nil {
		return nil, err
	}
	if err = n.Greet(1, hello); err == nil && lat > 0 {
		err = n.Delay(lat, 0)
	}
	if err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

func (v *servers) Display() []string   { return v.addrs }
func (v *servers) Upstreams() []string { return v.addrs }
func (v *servers) Quorum() int         { return len(v.addrs)/2 + 1 }
func (v *servers) Trees() bool         { return false }

func (v *servers) Version() string {
	if v.local == nil {
		return ""
	}
	return v.local.ServerVersion()
}

func (v *servers) Pids() []int {
	if v.local == nil {
		return nil
	}
	return v.local.Pids()
}

// ClientConfig: one session per worker, its timeout the cell's TTL.
func (v *servers) ClientConfig(c plan.Cell, via []string) (json.RawMessage, error) {
	cfg := Config{Servers: v.addrs, TTL: c.Terms.TTL, Strategy: c.Settings.WaitStrategy, Retry: c.Terms.Retry, Sessions: c.Load.Workers}
	if via != nil {
		cfg.Servers = via
	}
	return json.Marshal(cfg)
}

// Targets: the members by index, the leader, the member links when the
// cell's faults act on them.
func (v *servers) Targets(c plan.Cell, t *faults.Targets) []string {
	if v.local == nil {
		return nil
	}
	var addrs []string
	for _, m := range v.local.Members() {
		t.Masters = append(t.Masters, m)
		addrs = append(addrs, m.Addr())
	}
	t.Leader = v.local.Leader
	if l := v.local.Links(); l != nil && c.NeedsMemberLinks() { // a nil *PeerLinks is no Links
		t.Links = l
	}
	if v.peerNet != nil && c.NeedsMemberDelay() {
		t.MemberDelay = v.peerNet
	}
	return addrs
}

func (v *servers) Describe() string {
	return fmt.Sprintf("%s servers %s (%s, tickTime %v, pids %s)", v.Version(), strings.Join(v.addrs, " "), v.local.FsyncText(), v.local.TickTime(), service.PidList(v.Pids()))
}

// Record: the servers (local ones with their forceSync and tickTime).
func (v *servers) Record(cc *results.CellConfig, rec results.Settings) {
	out := service.InConfig(cc, v)
	out.Server, out.Servers = "server", fmt.Sprintf("%d servers", len(v.addrs))
	if v.local != nil {
		out.Servers = fmt.Sprintf("%d local servers (%s, tickTime %s)", rec.Local, rec.Persistence, v.local.TickTime())
	}
}

// WatchSessionEnds reads the local ensemble's logs when the cell ends.
func (v *servers) WatchSessionEnds() (service.SessionEnds, error) {
	if v.local == nil {
		return nil, nil
	}
	return func() (map[string]time.Time, string) { return v.local.SessionEnds(), SessionEndSource }, nil
}

func (v *servers) Stop() error {
	if v.local == nil {
		return nil
	}
	return v.local.Stop()
}

// NewClient is the lock client on a config ClientConfig made.
func (zookeeper) NewClient(ctx context.Context, raw json.RawMessage) (service.Client, error) {
	var cfg Config
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, fmt.Errorf("zookeeper client config: %w", err)
	}
	return New(ctx, cfg)
}

// Record: the granted session timeout, the fence's source, the sessions
// lost.
func (l *Locker) Record(v *results.ServiceSettings) {
	v.LeaseTTL, v.FenceSource, v.Lost, v.Sessions = results.Duration(l.GrantedTTL()), FenceSource, l.LostSessions(), "sessions"
	v.Lease = fmt.Sprintf("session timeout %s", v.LeaseTTL)
	v.Calls, v.Baseline = "lock requests", "ZooKeeper's Set round trip"
}

// Libraries: the ZooKeeper client (service.Libraries).
func (zookeeper) Libraries() []string { return []string{"github.com/go-zookeeper/zk"} }
