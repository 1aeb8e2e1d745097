package bench

import (
	"net/url"
	"strings"

	"lockbench/plan"
)

// upstreams are what a fault cell's proxies stand in front of: the Redis
// masters, or a lock service's client addresses (host:port).
func (m *Masters) upstreams() []string {
	switch {
	case m.Etcd != nil:
		out := make([]string, len(m.Etcd.Endpoints))
		for i, e := range m.Etcd.Endpoints {
			out[i] = endpointHost(e)
		}
		return out
	case m.Zookeeper != nil:
		return m.Zookeeper.Addrs
	case m.Postgres != nil && m.Postgres.Local != nil:
		return []string{m.Postgres.Local.Addr()}
	}
	return m.Addrs
}

// endpointHost is an etcd endpoint without its scheme.
func endpointHost(endpoint string) string {
	if u, err := url.Parse(endpoint); err == nil && u.Host != "" {
		return u.Host
	}
	return endpoint
}

// proxied says the cell's clients reach the lock service through their
// proxies (network faults; --net-latency proxies only Redis masters).
func (m *Masters) proxied(c plan.Cell) bool { return m.Net != nil && c.NeedsNetwork() }

// EtcdEndpoints are the endpoints client dials: its proxies, or the
// members'.
func (m *Masters) EtcdEndpoints(c plan.Cell, client int) []string {
	if !m.proxied(c) {
		return m.Etcd.Endpoints
	}
	out := m.Net.Addrs(client)
	for i, a := range out {
		out[i] = "http://" + a
	}
	return out
}

// ZookeeperServers are the servers client dials: its proxies, or the
// servers.
func (m *Masters) ZookeeperServers(c plan.Cell, client int) []string {
	if !m.proxied(c) {
		return m.Zookeeper.Addrs
	}
	return m.Net.Addrs(client)
}

// PostgresURL is the server's URL as client dials it: through its proxy,
// or straight.
func (m *Masters) PostgresURL(c plan.Cell, client int) string {
	if !m.proxied(c) {
		return m.Postgres.URL
	}
	u, err := url.Parse(m.Postgres.URL)
	if err != nil || !strings.Contains(m.Postgres.URL, "://") {
		return m.Postgres.URL // a local server's URL is always a URL
	}
	u.Host = m.Net.Addrs(client)[0]
	return u.String()
}
