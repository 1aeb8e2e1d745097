package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// Topology is what the lock runs on.
type Topology string

const (
	// Redlock is N independent masters and a majority (the default).
	Redlock Topology = "redlock"
	// Single is one master: SET NX PX and compare-and-delete there, the
	// engine with N = 1 and quorum 1. It differs from the seed's
	// single-instance lock in one way: the lock is usable for TTL − elapsed
	// − drift (as a Redlock of one), where the seed gives it the whole TTL,
	// so holds are judged on the same windows as Redlock's.
	Single Topology = "single"
	// Replicated is one master with replicas, found through Sentinel and
	// followed across a failover; WaitReplicas > 0 adds WAIT after the SETs.
	Replicated Topology = "replicated"
	// Cluster is a Redis Cluster: one lock key on the shard its slot
	// lives on (one SET NX PX there, quorum 1), the cluster's nodes the
	// masters given (seeds: the client discovers the rest and follows
	// MOVED/ASK); WaitReplicas > 0 adds WAIT on the key's shard.
	Cluster Topology = "cluster"
)

// Topologies lists the accepted names.
var Topologies = []Topology{Redlock, Single, Replicated, Cluster}

// ParseTopology checks a topology name ("" is redlock).
func ParseTopology(s string) (Topology, error) {
	switch t := Topology(s); t {
	case "":
		return Redlock, nil
	case Redlock, Single, Replicated, Cluster:
		return t, nil
	}
	return "", fmt.Errorf("topology: %q is not accepted; use redlock, single, replicated or cluster", s)
}

// sentinelRefresh is how often the replicated link asks Sentinel where the
// master is besides following +switch-master: rueidis advises it, since a
// missed event would bind the link to the old master for good.
const sentinelRefresh = time.Second

// validateTopology checks the settings each topology takes: the masters
// for redlock and single, Sentinels and a master set for replicated, and
// WAIT only there.
func (c Config) validateTopology() error {
	t, err := ParseTopology(string(c.Topology))
	if err != nil {
		return err
	}
	if err := c.validateWait(t); err != nil {
		return err
	}
	if t == Replicated {
		return c.validateSentinels()
	}
	switch {
	case len(c.SentinelAddrs) > 0:
		return fmt.Errorf("sentinel-addrs: only topology replicated finds its master through Sentinel; topology is %s", t)
	case c.MasterSet != "":
		return fmt.Errorf("master-set: only topology replicated uses a master set; topology is %s", t)
	case t == Single && len(c.Masters) != 1:
		return fmt.Errorf("masters: topology single takes exactly one master, got %d", len(c.Masters))
	case t == Cluster && c.Strategy == StrategyNotify:
		return fmt.Errorf("wait-strategy: notify is not available with topology cluster yet (its subscriptions are per master); use retry, backoff or spin")
	}
	return validateMasters(c.Masters)
}

func validateMasters(masters []string) error {
	if len(masters) == 0 {
		return fmt.Errorf("masters: none given; give at least one host:port or redis:// URL")
	}
	seen := map[string]bool{}
	for _, m := range masters {
		key := strings.TrimSpace(m)
		if seen[key] {
			return fmt.Errorf("masters: %q is listed twice; each master must be independent", RedactURL(m))
		}
		seen[key] = true
	}
	return nil
}

func (c Config) validateWait(t Topology) error {
	switch {
	case c.WaitReplicas < 0:
		return fmt.Errorf("wait-replicas: %d is not accepted; use 0 (no WAIT) or more", c.WaitReplicas)
	case c.WaitReplicas > 0 && t != Replicated && t != Cluster:
		return fmt.Errorf("wait-replicas: %d needs topology replicated or cluster (WAIT counts a master's replicas); topology is %s", c.WaitReplicas, t)
	case c.WaitTimeout < 0:
		return fmt.Errorf("wait-timeout: %v is not accepted; use 0 (the per-master timeout) or a positive duration", c.WaitTimeout)
	}
	return nil
}

func (c Config) validateSentinels() error {
	switch {
	case len(c.Masters) > 0:
		return fmt.Errorf("masters: topology replicated finds its master through Sentinel; give sentinel-addrs and master-set, not masters")
	case len(c.SentinelAddrs) == 0:
		return fmt.Errorf("sentinel-addrs: none given; topology replicated finds its master through Sentinel: give at least one host:port")
	case strings.TrimSpace(c.MasterSet) == "" || strings.ContainsAny(c.MasterSet, " \t\r\n"):
		return fmt.Errorf("master-set: %q is not accepted; topology replicated needs the name the Sentinels monitor the master by", c.MasterSet)
	}
	seen := map[string]bool{}
	for _, s := range c.SentinelAddrs {
		key := strings.TrimSpace(s)
		if seen[key] {
			return fmt.Errorf("sentinel-addrs: %q is listed twice", RedactURL(s))
		}
		seen[key] = true
	}
	return nil
}

// linkTarget is what one link connects to.
type linkTarget struct {
	opt     rueidis.ClientOption
	display string
	wait    *waitSpec // nil: no WAIT after the SETs
	cluster bool      // a Redis Cluster: routed by slot
}

// targets are the links of c's topology: one per master, or for
// replicated one through the Sentinels, each of which is checked first.
func (c Config) targets(ctx context.Context) ([]linkTarget, error) {
	if t, _ := ParseTopology(string(c.Topology)); t == Replicated {
		tg, err := c.sentinelTarget(ctx)
		return []linkTarget{tg}, err
	}
	if t, _ := ParseTopology(string(c.Topology)); t == Cluster {
		tg, err := c.clusterTarget()
		return []linkTarget{tg}, err
	}
	out := make([]linkTarget, 0, len(c.Masters))
	for _, m := range c.Masters {
		opt, display, err := MasterOption(m, c.TLS)
		if err != nil {
			return nil, err
		}
		out = append(out, linkTarget{opt: opt, display: display})
	}
	return out, nil
}

// clusterTarget is the cluster's one link: a rueidis cluster client
// seeded with every node given, credentials and TLS from the first.
func (c Config) clusterTarget() (linkTarget, error) {
	var addrs, shown []string
	var first rueidis.ClientOption
	for i, m := range c.Masters {
		opt, display, err := MasterOption(m, c.TLS)
		if err != nil {
			return linkTarget{}, err
		}
		if i == 0 {
			first = opt
		}
		addrs, shown = append(addrs, opt.InitAddress...), append(shown, display)
	}
	first.InitAddress = addrs
	return linkTarget{opt: first, display: "cluster " + strings.Join(shown, ","), wait: c.waitSpec(), cluster: true}, nil
}

// newClusterClient connects a cluster link: rueidis discovers the slots
// (CLUSTER SHARDS/SLOTS), routes each keyed command to its slot's master
// and follows MOVED/ASK; no client-side cache.
func newClusterClient(opt rueidis.ClientOption, display string) (rueidis.Client, error) {
	opt.DisableCache = true
	c, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, err
	}
	if c.Mode() != rueidis.ClientModeCluster {
		c.Close()
		return nil, fmt.Errorf("masters: %s is not a Redis Cluster (cluster_enabled:0); use topology redlock or single", display)
	}
	return c, nil
}

// sentinelTarget is the replicated link: a rueidis Sentinel client that
// asks the Sentinels for the master and follows it. Sentinel credentials
// and TLS come from the first Sentinel's URL; the master's connection
// takes the same TLS and no credentials.
func (c Config) sentinelTarget(ctx context.Context) (linkTarget, error) {
	var addrs, shown []string
	var first rueidis.ClientOption
	for i, s := range c.SentinelAddrs {
		opt, display, err := MasterOption(s, c.TLS)
		if err != nil {
			return linkTarget{}, fmt.Errorf("sentinel-addrs: %s", strings.TrimPrefix(err.Error(), "masters: "))
		}
		if err := checkSentinel(ctx, opt, display, c.MasterSet, c.Timeout); err != nil {
			return linkTarget{}, err
		}
		if i == 0 {
			first = opt
		}
		addrs, shown = append(addrs, opt.InitAddress...), append(shown, display)
	}
	dial := max(c.Timeout, time.Second)
	opt := rueidis.ClientOption{InitAddress: addrs, TLSConfig: first.TLSConfig,
		Sentinel: rueidis.SentinelOption{MasterSet: c.MasterSet, Username: first.Username, Password: first.Password,
			TLSConfig: first.TLSConfig, TopologyRefreshInterval: sentinelRefresh}}
	opt.Sentinel.Dialer.Timeout = dial
	return linkTarget{opt: opt, display: c.MasterSet + " via " + strings.Join(shown, ","), wait: c.waitSpec()}, nil
}

// checkSentinel asks one Sentinel where the master set is, so that an
// unreachable Sentinel or an unknown set is one error naming it rather
// than whatever rueidis met last.
func checkSentinel(ctx context.Context, opt rueidis.ClientOption, display, set string, timeout time.Duration) error {
	opt.DisableRetry = true
	opt.Dialer.Timeout = max(timeout, time.Second)
	client, err := NewSingleClient(opt)
	if err != nil {
		return fmt.Errorf("sentinel-addrs: %s is unreachable: %w", display, err)
	}
	defer client.Close()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	hp, err := client.Do(cctx, client.B().SentinelGetMasterAddrByName().Master(set).Build()).AsStrSlice()
	switch {
	case rueidis.IsRedisNil(err):
		return fmt.Errorf("master-set: sentinel %s does not know master set %q", display, set)
	case err != nil:
		return fmt.Errorf("sentinel-addrs: %s: SENTINEL GET-MASTER-ADDR-BY-NAME %s: %w (is it a Sentinel?)", display, set, err)
	case len(hp) != 2:
		return fmt.Errorf("sentinel-addrs: %s: master set %q: answered %q, not host and port", display, set, hp)
	}
	return nil
}

// Topology is the topology the engine runs (redlock when none was set).
func (e *Engine) Topology() Topology {
	t, _ := ParseTopology(string(e.cfg.Topology))
	return t
}
