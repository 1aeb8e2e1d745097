package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ServerReading is what a server says of itself at a scrape: its CPU
// seconds, the clients connected to it and the commands it has processed
// (Redis' masters: from INFO).
type ServerReading struct {
	CPUSeconds, Clients, Commands float64
}

// ReadFunc reads a server, by the address it is watched by, at a scrape.
type ReadFunc func(ctx context.Context, addr string) (ServerReading, error)

// mastersCollector reads each server at scrape time: whether it answers,
// and its CPU and command counters (what `lockbench masters` exports
// while other runs use its masters).
type mastersCollector struct {
	mu                     sync.Mutex
	addrs                  []string
	read                   ReadFunc
	up, cpu, clients, cmds *prometheus.Desc
}

// masterNames are the families WatchMasters exports.
var masterNames = []string{"lockbench_master_up", "lockbench_master_cpu_seconds_total", "lockbench_master_connected_clients", "lockbench_master_commands_processed_total"}

// WatchMasters exports lockbench_master_up, _cpu_seconds_total,
// _connected_clients and _commands_processed_total for addrs (display
// addresses: they become the master label), read by read. Called again
// (a later cell's masters), it watches those instead.
func (e *Exporter) WatchMasters(addrs []string, read ReadFunc) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.masters == nil {
		l := []string{"master"}
		e.masters = &mastersCollector{
			up:      prometheus.NewDesc(masterNames[0], "1 when the master answered INFO at this scrape, else 0.", l, nil),
			cpu:     prometheus.NewDesc(masterNames[1], "The master's CPU time (INFO used_cpu_sys + used_cpu_user).", l, nil),
			clients: prometheus.NewDesc(masterNames[2], "Clients connected to the master (INFO connected_clients).", l, nil),
			cmds:    prometheus.NewDesc(masterNames[3], "Commands the master processed (INFO total_commands_processed).", l, nil),
		}
		e.reg.MustRegister(e.masters)
	}
	e.masters.mu.Lock()
	e.masters.addrs, e.masters.read = addrs, read
	e.masters.mu.Unlock()
}

func (c *mastersCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.up
	ch <- c.cpu
	ch <- c.clients
	ch <- c.cmds
}

func (c *mastersCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	addrs, read := c.addrs, c.read
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			r, err := read(ctx, addr)
			if err != nil {
				ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 0, addr)
				return
			}
			ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1, addr)
			ch <- prometheus.MustNewConstMetric(c.cpu, prometheus.CounterValue, r.CPUSeconds, addr)
			ch <- prometheus.MustNewConstMetric(c.clients, prometheus.GaugeValue, r.Clients, addr)
			ch <- prometheus.MustNewConstMetric(c.cmds, prometheus.CounterValue, r.Commands, addr)
		}()
	}
	wg.Wait()
}
