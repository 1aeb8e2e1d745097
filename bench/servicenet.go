package bench

import "lockbench/plan"

// upstreams are what a fault cell's proxies stand in front of: the Redis
// masters, or a lock service's client addresses (host:port).
func (m *Masters) upstreams() []string {
	if m.Service != nil {
		return m.Service.Upstreams()
	}
	return m.Addrs
}

// ServiceConfig is the lock service's client config for client of cell
// c: through its proxies when the cell's faults need them
// (--net-latency proxies only Redis masters).
func (m *Masters) ServiceConfig(c plan.Cell, client int) ([]byte, error) {
	var via []string
	if m.Net != nil && c.NeedsNetwork() {
		via = m.Net.Addrs(client)
	}
	return m.Service.ClientConfig(c, via)
}
