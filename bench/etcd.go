package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"lockbench/etcdlock"
	"lockbench/faults"
	"lockbench/plan"
)

// EtcdServers are an etcd cell's servers: a local cluster (nil for an
// external one) and the endpoints the lock client dials, with the
// credentials of an external cluster.
type EtcdServers struct {
	Local              *etcdlock.Cluster
	Endpoints          []string
	Username, Password string
	// PeerNet is the proxies on the members' links (member_latency, or a
	// latency fault on them); nil without.
	PeerNet *faults.Network
}

// startEtcd starts the cell's local etcd members, or takes an external
// cluster's endpoints (dialled and checked by the lock client).
func (p *Pool) startEtcd(ctx context.Context, c plan.Cell, m *Masters) error {
	s := c.Settings
	m.Etcd = &EtcdServers{}
	if s.ExternalEtcd() {
		eps, user, pass := s.EtcdClientEndpoints()
		m.Etcd.Endpoints, m.Etcd.Username, m.Etcd.Password = eps, user, pass
		m.Display = eps
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	opt := etcdlock.Options{Members: s.EtcdMembers(), NoFsync: s.EtcdNoFsyncSet(), Gates: c.NeedsMemberLinks(), Log: p.Log}
	if lat := time.Duration(s.MemberLatency); lat > 0 || c.NeedsMemberDelay() {
		opt.PeerVia = func(peers []string) ([]string, error) { return m.peerProxies(peers, lat) }
	}
	cl, err := etcdlock.StartLocal(ctx, opt)
	if err != nil {
		return err
	}
	m.Etcd.Local, m.Etcd.Endpoints = cl, cl.Endpoints()
	m.Display, m.Version = cl.Endpoints(), "etcd "+cl.ServerVersion()
	return nil
}

// peerProxies puts a proxy delaying by lat (0: none, until a latency
// fault) in front of each member's peer port; the members reach each
// other through them (one hop a message).
func (m *Masters) peerProxies(peers []string, lat time.Duration) ([]string, error) {
	var err error
	withProxyLabel(func() {
		if m.Etcd.PeerNet, err = faults.NewNetwork(peers, 1); err == nil && lat > 0 {
			err = m.Etcd.PeerNet.Latency(nil, nil, lat, 0)
		}
	})
	if err != nil {
		return nil, err
	}
	return m.Etcd.PeerNet.Addrs(0), nil
}

// canServeEtcd: a local cluster needs the etcd binary.
func canServeEtcd(s plan.Settings) error {
	if s.ExternalEtcd() {
		return nil
	}
	if _, ok := etcdlock.ServerPath(); !ok {
		return MissingTool{fmt.Errorf("etcd not found in PATH; topology etcd with local members runs real etcd processes (apt-get install %s)", etcdlock.Package)}
	}
	return nil
}

// EtcdConfig is the etcd lock client's terms for cell c on these servers:
// one session per worker; TLS from the tls_* settings for https://
// endpoints.
func (m *Masters) EtcdConfig(c plan.Cell, client int) (etcdlock.Config, error) {
	cfg := etcdlock.Config{Endpoints: m.EtcdEndpoints(c, client), Username: m.Etcd.Username, Password: m.Etcd.Password,
		TTL: c.Engine.TTL, Strategy: c.Settings.WaitStrategy, Retry: c.Engine.Retry(), Sessions: c.Load.Workers}
	if !c.Engine.TLS.Empty() || slices.ContainsFunc(cfg.Endpoints, func(e string) bool { return strings.HasPrefix(e, "https://") }) {
		t, err := c.Engine.TLS.Config("")
		if err != nil {
			return cfg, err
		}
		cfg.TLS = t
	}
	return cfg, nil
}
