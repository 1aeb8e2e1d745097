package etcdlock

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	"lockbench/faults"
	"lockbench/plan"
	"lockbench/pool"
	"lockbench/results"
	"lockbench/service"
)

func init() {
	service.Register(etcd{})
	results.RegisterLegacy(results.LegacyService{Key: Name, ServersKey: "etcd_endpoints", Read: legacySection})
}

// legacySection reads an etcd cell's section of a result written before
// the service section.
func legacySection(b json.RawMessage, rec results.Settings) *results.ServiceSettings {
	var old struct {
		LeaseTTL     results.Duration `json:"lease_ttl"`
		FenceSource  string           `json:"fence_source"`
		LostSessions int64            `json:"lost_sessions"`
		RPCsPerCycle float64          `json:"rpcs_per_cycle"`
	}
	if json.Unmarshal(b, &old) != nil {
		return nil
	}
	v := &results.ServiceSettings{LeaseTTL: old.LeaseTTL, FenceSource: old.FenceSource, Lost: old.LostSessions, CallsPerCycle: old.RPCsPerCycle}
	v.Lease, v.Sessions, v.Calls, v.Baseline = "lease "+old.LeaseTTL.String(), "sessions", "lock calls", "etcd's Put round trip"
	v.Server, v.Servers = "member", fmt.Sprintf("%d local members (%s)", rec.Local, rec.Persistence)
	if len(rec.Servers) > 0 {
		v.Servers = fmt.Sprintf("%d endpoints", len(rec.Servers))
	}
	return v
}

// The members' gates are what a partition with link: members cuts.
var _ faults.Links = (*PeerGates)(nil)

// CanServe: a local cluster needs the etcd binary.
func (etcd) CanServe(c plan.Cell) error {
	s := c.Settings
	if _, ok := ServerPath(); !ok && !s.External() {
		return service.MissingTool{Err: fmt.Errorf("etcd not found in PATH; topology etcd with local members runs real etcd processes (apt-get install %s)", Package)}
	}
	return nil
}

// servers are an etcd cell's: a local cluster (nil for an external one)
// and the endpoints the lock client dials, with an external cluster's
// credentials.
type servers struct {
	local              *Cluster
	endpoints          []string
	username, password string
	// peerNet is the proxies on the members' links (member_latency, or a
	// latency fault on them); nil without.
	peerNet *faults.Network
}

// Start starts the cell's local members, or takes an external cluster's
// endpoints (dialled and checked by the lock client).
func (etcd) Start(ctx context.Context, c plan.Cell, log io.Writer) (service.Servers, error) {
	s := c.Settings
	if s.External() {
		v := &servers{}
		v.endpoints, v.username, v.password = clientEndpoints(s)
		return v, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	v := &servers{}
	opt := Options{Members: members(s), NoFsync: s.FsyncPersistence() == NoFsync, Gates: c.NeedsMemberLinks(), Log: log}
	if lat := time.Duration(s.MemberLatency); lat > 0 || c.NeedsMemberDelay() {
		opt.PeerVia = func(peers []string) ([]string, error) { return v.peerProxies(peers, lat) }
	}
	cl, err := StartLocal(ctx, opt)
	if err != nil {
		v.Stop()
		return nil, err
	}
	v.local, v.endpoints = cl, cl.Endpoints()
	return v, nil
}

// peerProxies puts a proxy delaying by lat (0: none, until a latency
// fault) in front of each member's peer port; the members reach each
// other through them (one hop a message).
func (v *servers) peerProxies(peers []string, lat time.Duration) ([]string, error) {
	var err error
	pool.WithProxyLabel(func() {
		if v.peerNet, err = faults.NewNetwork(peers, 1); err == nil && lat > 0 {
			err = v.peerNet.Latency(nil, nil, lat, 0)
		}
	})
	if err != nil {
		return nil, err
	}
	return v.peerNet.Addrs(0), nil
}

func (v *servers) Display() []string { return v.endpoints }
func (v *servers) Quorum() int       { return len(v.endpoints)/2 + 1 }
func (v *servers) Trees() bool       { return false }

func (v *servers) Version() string {
	if v.local == nil {
		return ""
	}
	return "etcd " + v.local.ServerVersion()
}

func (v *servers) Pids() []int {
	if v.local == nil {
		return nil
	}
	var out []int
	for _, m := range v.local.Members() {
		out = append(out, m.Pid())
	}
	return out
}

// Upstreams are the endpoints without their scheme.
func (v *servers) Upstreams() []string {
	out := make([]string, len(v.endpoints))
	for i, e := range v.endpoints {
		out[i] = e
		if u, err := url.Parse(e); err == nil && u.Host != "" {
			out[i] = u.Host
		}
	}
	return out
}

// ClientConfig: one session per worker; TLS from the tls_* settings for
// https:// endpoints.
func (v *servers) ClientConfig(c plan.Cell, via []string) (json.RawMessage, error) {
	cfg := Config{Endpoints: v.endpoints, Username: v.username, Password: v.password,
		TTL: c.Terms.TTL, Strategy: c.Settings.WaitStrategy, Retry: c.Terms.Retry, Sessions: c.Load.Workers}
	if via != nil {
		cfg.Endpoints = nil
		for _, a := range via {
			cfg.Endpoints = append(cfg.Endpoints, "http://"+a)
		}
	}
	if !c.Terms.TLS.Empty() || slices.ContainsFunc(cfg.Endpoints, func(e string) bool { return strings.HasPrefix(e, "https://") }) {
		t := c.Terms.TLS
		cfg.TLS = &t
	}
	return json.Marshal(cfg)
}

// Targets: the members by index, the leader, the gates and proxies on
// their links when the cell's faults act on them.
func (v *servers) Targets(c plan.Cell, t *faults.Targets) []string {
	if v.local == nil {
		return nil
	}
	var addrs []string
	for _, m := range v.local.Members() {
		t.Masters = append(t.Masters, m)
		addrs = append(addrs, m.ClientURL, m.PeerURL)
	}
	t.Leader = v.local.Leader
	if g := v.local.Links(); g != nil && c.NeedsMemberLinks() { // a nil *PeerGates is no Links
		t.Links = g
	}
	if v.peerNet != nil && c.NeedsMemberDelay() {
		t.MemberDelay = faults.NetworkDelay(v.peerNet)
	}
	return addrs
}

func (v *servers) Describe() string {
	return fmt.Sprintf("%s members %s (%s, pids %s)", v.Version(), strings.Join(v.endpoints, " "), v.local.FsyncText(), service.PidList(v.Pids()))
}

// Record: the members (local ones with their fsync) or the endpoints.
func (v *servers) Record(cc *results.CellConfig, rec results.Settings) {
	out := service.InConfig(cc, v)
	out.Server, out.Servers = "member", fmt.Sprintf("%d local members (%s)", rec.Local, rec.Persistence)
	if v.local == nil {
		out.Servers = fmt.Sprintf("%d endpoints", len(v.endpoints))
	}
}

// WatchSessionEnds watches the local members' leases.
func (v *servers) WatchSessionEnds() (service.SessionEnds, error) {
	if v.local == nil {
		return nil, nil
	}
	w, err := WatchLeases(v.local.Endpoints())
	if err != nil {
		return nil, fmt.Errorf("etcd: the leases not watched: %w", err)
	}
	return func() (map[string]time.Time, string) { return w.Stop(), LeaseEndSource }, nil
}

func (v *servers) Stop() error {
	var err error
	if v.local != nil {
		err = v.local.Stop()
	}
	if v.peerNet != nil {
		v.peerNet.Close()
	}
	return err
}

// NewClient is the lock client on a config ClientConfig made.
func (etcd) NewClient(ctx context.Context, raw json.RawMessage) (service.Client, error) {
	var cfg Config
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, fmt.Errorf("etcd client config: %w", err)
	}
	return New(ctx, cfg)
}

// Record: the granted lease, the fence's source, the sessions lost.
func (l *Locker) Record(v *results.ServiceSettings) {
	v.LeaseTTL, v.FenceSource, v.Lost, v.Sessions = results.Duration(l.GrantedTTL()), FenceSource, l.LostSessions(), "sessions"
	v.Lease = fmt.Sprintf("lease %s", v.LeaseTTL)
	v.Calls, v.Baseline = "lock calls", "etcd's Put round trip"
}

// Libraries: etcd's Go client (service.Libraries).
func (etcd) Libraries() []string { return []string{"go.etcd.io/etcd/client/v3"} }
