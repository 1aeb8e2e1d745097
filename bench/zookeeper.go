package bench

import (
	"context"
	"fmt"
	"time"

	"lockbench/faults"
	"lockbench/plan"
	"lockbench/zklock"
)

// ZookeeperServers are a zookeeper cell's servers: a local ensemble (nil
// for an external one) and the client addresses the lock client dials.
type ZookeeperServers struct {
	Local *zklock.Cluster
	Addrs []string
	// PeerNet is the proxies on the members' links (member_latency, a
	// partition or a latency fault on them); nil without.
	PeerNet *faults.MemberNet
}

// startZookeeper starts the cell's local ensemble, its tickTime fitted to
// the cell's session timeout, or takes an external one's servers.
func (p *Pool) startZookeeper(ctx context.Context, c plan.Cell, m *Masters) error {
	s := c.Settings
	m.Zookeeper = &ZookeeperServers{}
	if s.ExternalZookeeper() {
		m.Zookeeper.Addrs, m.Display = s.ZookeeperServers, s.ZookeeperServers
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	opt := zklock.Options{Servers: s.ZookeeperMembers(), ForceSync: !s.ZookeeperNoFsync(),
		TTL: c.Engine.TTL, MaxClientCnxns: s.ZookeeperMaxClientCnxns(), Log: p.Log}
	if lat := time.Duration(s.MemberLatency); lat > 0 || c.NeedsMemberLinks() || c.NeedsMemberDelay() {
		opt.PeerVia = zookeeperPeers(lat, &m.Zookeeper.PeerNet)
	}
	cl, err := zklock.StartLocal(ctx, opt)
	if err != nil {
		return err
	}
	m.Zookeeper.Local, m.Zookeeper.Addrs = cl, cl.Servers()
	m.Display, m.Version = cl.Servers(), cl.ServerVersion()
	return nil
}

// canServeZookeeper: a local ensemble needs Debian's zookeeper and a JRE.
func canServeZookeeper(s plan.Settings) error {
	if s.ExternalZookeeper() {
		return nil
	}
	if _, ok := zklock.ServerPath(); !ok {
		return MissingTool{fmt.Errorf("zookeeper not found (/usr/share/java/zookeeper.jar and java); topology zookeeper with local servers runs Debian's (apt-get install %s)", zklock.Package)}
	}
	return nil
}

// ZookeeperConfig is the lock recipe's terms for cell c on these servers:
// one session per worker, its timeout the cell's TTL.
func (m *Masters) ZookeeperConfig(c plan.Cell, client int) zklock.Config {
	return zklock.Config{Servers: m.ZookeeperServers(c, client), TTL: c.Engine.TTL, Strategy: c.Settings.WaitStrategy,
		Retry: c.Engine.Retry(), Sessions: c.Load.Workers}
}

// NewZookeeperWindowReadings reads the machine around a zookeeper cell's
// window: the local servers' JVMs are the servers' CPU.
func NewZookeeperWindowReadings(ctx context.Context, m *Masters) *WindowReadings {
	var pids []int
	if cl := m.Zookeeper.Local; cl != nil {
		pids = cl.Pids()
	}
	return &WindowReadings{ctx: ctx, addrs: m.Display, probe: newMachineProbe(m.Display, pids, nil)}
}
