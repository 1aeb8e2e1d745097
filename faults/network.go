// Package faults injects the failures a Redlock deployment meets: masters
// that crash and restart, network partitions, latency and connection resets
// between particular clients and masters (an embedded toxiproxy), clock
// jumps on a master (libfaketime) and paused clients, on a schedule.
package faults

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// Network puts every (client, master) pair behind its own proxy, so a fault
// can cut one client off from one master while others still reach it.
type Network struct {
	srv     *toxiproxy.ApiServer
	clients int
	masters []string

	mu      sync.Mutex
	proxies map[pair]*toxiproxy.Proxy
	holes   map[pair]int // active partitions per pair (they may overlap)
	resets  map[pair]int
	closed  bool
}

type pair struct{ client, master int }

// Toxic names; one of each per proxy at a time.
const (
	toxicHoleUp   = "partition_up"
	toxicHoleDown = "partition_down"
	toxicLatency  = "latency"
	toxicReset    = "reset"
)

// NewNetwork starts clients × len(masters) proxies on free 127.0.0.1 ports.
func NewNetwork(masters []string, clients int) (*Network, error) {
	if clients < 1 || len(masters) < 1 {
		return nil, fmt.Errorf("faults: network needs at least one client and one master, got %d and %d", clients, len(masters))
	}
	n := &Network{
		srv:     toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop()),
		clients: clients, masters: append([]string(nil), masters...),
		proxies: map[pair]*toxiproxy.Proxy{}, holes: map[pair]int{}, resets: map[pair]int{},
	}
	for c := range clients {
		for m, up := range masters {
			p := toxiproxy.NewProxy(n.srv, fmt.Sprintf("c%d-m%d", c, m), "127.0.0.1:0", up)
			if err := p.Start(); err != nil {
				n.Close()
				return nil, fmt.Errorf("faults: proxy for client %d to master %s: %w", c, up, err)
			}
			n.proxies[pair{c, m}] = p
		}
	}
	return n, nil
}

// Addrs are the addresses client c dials for each master, in master order.
func (n *Network) Addrs(c int) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, len(n.masters))
	for m := range n.masters {
		out[m] = n.proxies[pair{c, m}].Listen
	}
	return out
}

// Close stops every proxy and drops its connections.
func (n *Network) Close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closed = true
	for _, p := range n.proxies {
		p.Stop()
	}
}

// pairs expands client and master lists; an empty list means all.
func (n *Network) pairs(clients, masters []int) ([]pair, error) {
	if len(clients) == 0 {
		clients = seq(n.clients)
	}
	if len(masters) == 0 {
		masters = seq(len(n.masters))
	}
	var out []pair
	for _, c := range clients {
		if c < 0 || c >= n.clients {
			return nil, fmt.Errorf("faults: client %d does not exist (0..%d)", c, n.clients-1)
		}
		for _, m := range masters {
			if m < 0 || m >= len(n.masters) {
				return nil, fmt.Errorf("faults: master %d does not exist (0..%d)", m, len(n.masters)-1)
			}
			out = append(out, pair{c, m})
		}
	}
	return out, nil
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func (n *Network) addToxic(p *toxiproxy.Proxy, name, typ, stream string, attrs string) error {
	js := fmt.Sprintf(`{"name":%q,"type":%q,"stream":%q,"toxicity":1,"attributes":%s}`, name, typ, stream, attrs)
	if _, err := p.Toxics.AddToxicJson(strings.NewReader(js)); err != nil {
		return fmt.Errorf("faults: %s on %s: %w", name, p.Name, err)
	}
	return nil
}

func removeToxic(p *toxiproxy.Proxy, name string) {
	if p.Toxics.GetToxic(name) != nil {
		_ = p.Toxics.RemoveToxic(context.Background(), name)
	}
}

// dropConnections closes every connection of the proxy and listens again on
// the same port, so clients reconnect to a clean stream.
func dropConnections(p *toxiproxy.Proxy) error {
	p.Stop()
	var err error
	// The port was ours a moment ago; retry briefly in case the kernel lags.
	for range 20 {
		if err = p.Start(); err == nil {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return fmt.Errorf("faults: reopen %s on %s: %w", p.Name, p.Listen, err)
}

// Partition black-holes traffic both ways between the clients and masters:
// connections stay open but nothing arrives, so commands time out, as in a
// real partition (not the quick "connection refused" of a dead host).
func (n *Network) Partition(clients, masters []int) error {
	ps, err := n.pairs(clients, masters)
	if err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, pr := range ps {
		n.holes[pr]++
		if n.holes[pr] > 1 || n.closed {
			continue
		}
		p := n.proxies[pr]
		if err := n.addToxic(p, toxicHoleUp, "timeout", "upstream", `{"timeout":0}`); err != nil {
			return err
		}
		if err := n.addToxic(p, toxicHoleDown, "timeout", "downstream", `{"timeout":0}`); err != nil {
			return err
		}
	}
	return nil
}

// Heal ends a partition. The connections that crossed it are dropped: a
// pipelining client whose requests vanished would otherwise pair later
// replies with the lost requests.
func (n *Network) Heal(clients, masters []int) error {
	ps, err := n.pairs(clients, masters)
	if err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	var errs []string
	for _, pr := range ps {
		if n.holes[pr] == 0 {
			continue
		}
		if n.holes[pr]--; n.holes[pr] > 0 || n.closed {
			continue
		}
		p := n.proxies[pr]
		p.Stop()
		removeToxic(p, toxicHoleUp)
		removeToxic(p, toxicHoleDown)
		if err := dropConnections(p); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// Latency delays every reply from the masters by latency ± jitter
// (toxiproxy works in whole milliseconds). A later call replaces it.
func (n *Network) Latency(clients, masters []int, latency, jitter time.Duration) error {
	ps, err := n.pairs(clients, masters)
	if err != nil {
		return err
	}
	attrs := fmt.Sprintf(`{"latency":%d,"jitter":%d}`, latency.Milliseconds(), jitter.Milliseconds())
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, pr := range ps {
		if n.closed {
			return nil
		}
		p := n.proxies[pr]
		removeToxic(p, toxicLatency)
		if err := n.addToxic(p, toxicLatency, "latency", "downstream", attrs); err != nil {
			return err
		}
	}
	return nil
}

// ClearLatency removes added latency. Nothing was dropped, so connections stay.
func (n *Network) ClearLatency(clients, masters []int) error {
	ps, err := n.pairs(clients, masters)
	if err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, pr := range ps {
		removeToxic(n.proxies[pr], toxicLatency)
	}
	return nil
}

// Reset drops the current connections between the clients and masters at
// once; clients reconnect on their next command.
func (n *Network) Reset(clients, masters []int) error {
	ps, err := n.pairs(clients, masters)
	if err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, pr := range ps {
		if n.closed {
			return nil
		}
		if err := dropConnections(n.proxies[pr]); err != nil {
			return err
		}
	}
	return nil
}

// ResetFor also resets every new connection as soon as it carries data,
// until EndReset: a flapping link.
func (n *Network) ResetFor(clients, masters []int) error {
	if err := n.Reset(clients, masters); err != nil {
		return err
	}
	ps, _ := n.pairs(clients, masters)
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, pr := range ps {
		n.resets[pr]++
		if n.resets[pr] > 1 || n.closed {
			continue
		}
		if err := n.addToxic(n.proxies[pr], toxicReset, "reset_peer", "upstream", `{"timeout":0}`); err != nil {
			return err
		}
	}
	return nil
}

// EndReset stops resetting new connections.
func (n *Network) EndReset(clients, masters []int) error {
	ps, err := n.pairs(clients, masters)
	if err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, pr := range ps {
		if n.resets[pr] == 0 {
			continue
		}
		if n.resets[pr]--; n.resets[pr] == 0 {
			removeToxic(n.proxies[pr], toxicReset)
		}
	}
	return nil
}
