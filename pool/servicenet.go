package pool

import "lockbench/plan"

// ServiceConfig is the lock client's config for client of cell c:
// through its proxies when it has any (a fault cell's network faults, or
// --net-latency).
func (m *CellServers) ServiceConfig(c plan.Cell, client int) ([]byte, error) {
	var via []string
	if m.Net != nil {
		via = m.Net.Addrs(client)
	}
	return m.Service.ClientConfig(c, via)
}
