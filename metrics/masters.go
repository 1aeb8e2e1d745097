package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"lockbench/engine"
)

// InfoFunc runs INFO on a master and returns its text.
type InfoFunc func(ctx context.Context, addr string) (string, error)

// mastersCollector asks each master for INFO at scrape time: whether it
// answers, and its CPU and command counters (what `lockbench masters`
// exports while other runs use its masters).
type mastersCollector struct {
	mu                     sync.Mutex
	addrs                  []string
	info                   InfoFunc
	up, cpu, clients, cmds *prometheus.Desc
}

// masterNames are the families WatchMasters exports.
var masterNames = []string{"lockbench_master_up", "lockbench_master_cpu_seconds_total", "lockbench_master_connected_clients", "lockbench_master_commands_processed_total"}

// WatchMasters exports lockbench_master_up, _cpu_seconds_total,
// _connected_clients and _commands_processed_total for addrs (display
// addresses: they become the master label). Called again (a later cell's
// masters), it watches those instead.
func (e *Exporter) WatchMasters(addrs []string, info InfoFunc) {
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
	e.masters.addrs, e.masters.info = addrs, info
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
	addrs, info := c.addrs, c.info
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			text, err := info(ctx, addr)
			if err != nil {
				ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 0, addr)
				return
			}
			f := infoNumbers(engine.ParseInfo(text))
			ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1, addr)
			ch <- prometheus.MustNewConstMetric(c.cpu, prometheus.CounterValue, f("used_cpu_sys")+f("used_cpu_user"), addr)
			ch <- prometheus.MustNewConstMetric(c.clients, prometheus.GaugeValue, f("connected_clients"), addr)
			ch <- prometheus.MustNewConstMetric(c.cmds, prometheus.CounterValue, f("total_commands_processed"), addr)
		}()
	}
	wg.Wait()
}

// infoNumbers reads INFO's numeric fields, 0 for one that is absent or not
// a number.
func infoNumbers(info engine.Info) func(name string) float64 {
	return func(name string) float64 {
		f, _ := info.Float(name)
		return f
	}
}
