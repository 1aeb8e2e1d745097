// Package metrics serves a run's live figures on /metrics in the Prometheus
// text format (prometheus/client_golang), so a long sweep, a soak or the
// segments of a distributed run can be watched in Prometheus and Grafana
// while they go on. The workers report through Cell, whose methods are
// atomic adds on label children resolved once per cell: no allocation and
// no map lookup per cycle.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"lockbench/internal/ports"
	"lockbench/workloads"
)

// LatencyBuckets resolve 100 µs to 10 s in steps of at most 1.5×
// (1, 1.5, 2, 3, 4, 5, 7 per decade), so histogram_quantile lands within half
// a step of the true value across the range of lock latencies.
var LatencyBuckets = func() []float64 {
	var out []float64
	for d := 1e-4; d < 10; d *= 10 {
		for _, m := range []float64{1, 1.5, 2, 3, 4, 5, 7} {
			out = append(out, roundSig(d*m))
		}
	}
	return append(out, 10)
}()

// roundSig drops the float noise of d*m (0.00030000000000000003).
func roundSig(v float64) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return f
}

// CellLabels are the bounded labels every series of a cell carries: never a
// key, token or anything that grows with the load.
var CellLabels = []string{"scenario", "cell", "segment", "mode", "wait", "persistence", "driver"}

// Labels name a cell. Empty values are exported as "".
type Labels struct {
	Scenario, Cell, Segment, Mode, Wait, Persistence, Driver string
}

func (l Labels) values() []string {
	return []string{l.Scenario, l.Cell, l.Segment, l.Mode, l.Wait, l.Persistence, l.Driver}
}

// Options configure an exporter.
type Options struct {
	// CPU, when set, is the process's CPU time so far; the exporter turns it
	// into lockbench_client_cpu_share_ratio once a second.
	CPU     func() time.Duration
	Version string
}

// Exporter owns the registry and the HTTP endpoint of one run.
type Exporter struct {
	reg *prometheus.Registry
	srv *http.Server
	ln  net.Listener
	vec vecs

	stopSampler chan struct{}
	sampled     sync.WaitGroup
	closeOnce   sync.Once
	closeErr    error

	mu      sync.Mutex
	masters *mastersCollector // nil until WatchMasters
}

// vecs are the metric families; cells take children of them.
type vecs struct {
	cycles, acquires, masterReplies, extends *prometheus.CounterVec
	violations, lostUpdates, staleWrites     *prometheus.CounterVec
	offered, unserved, started               *prometheus.CounterVec
	acquire, uncorrected, failed, release    *prometheus.HistogramVec
	timeToLock                               *prometheus.HistogramVec
	gaveUp                                   *prometheus.CounterVec
	inFlight, workers, pacerLag, rate        *prometheus.GaugeVec
	linearizable                             *prometheus.GaugeVec
	cpuShare                                 prometheus.Gauge
	build                                    *prometheus.GaugeVec
}

func newVecs() vecs {
	counter := func(name, help string, extra ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, append(append([]string(nil), CellLabels...), extra...))
	}
	hist := func(name, help string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: LatencyBuckets}, CellLabels)
	}
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, CellLabels)
	}
	return vecs{
		cycles:        counter("lockbench_cycles_total", "Lock cycles (a successful acquire and its release) in the measured window."),
		acquires:      counter("lockbench_acquires_total", "Acquire attempts in the measured window by outcome: acquired, not_acquired (contention or validity), error (masters timed out or failed), few_acks (fewer replicas acknowledged the grant than the client asked for).", "outcome"),
		masterReplies: counter("lockbench_master_replies_total", "What each master answered to measured acquires' SETs: ok, taken, timeout, error; pending (sent, not waited for), not_sent (decided before its turn), few_acks (won, too few replicas acknowledged it).", "master", "outcome"),
		extends:       counter("lockbench_extends_total", "Auto-extensions of held locks by result: ok, failed (the lock was lost).", "result"),
		violations:    counter("lockbench_safety_violations_total", "Holds that began while another holder of the same key was inside (the live probe)."),
		lostUpdates:   counter("lockbench_lost_updates_total", "Chaos: acknowledged writes to the protected resource overwritten by an overlapping holder, seen at the overwriting write."),
		staleWrites:   counter("lockbench_stale_writes_rejected_total", "Chaos with fencing: writes the protected resource refused for a stale token."),
		offered:       counter("lockbench_open_loop_offered_total", "Open loop: acquires scheduled in the measured window, added when the cell ends."),
		unserved:      counter("lockbench_open_loop_unserved_total", "Open loop: scheduled acquires never started, added when the cell ends."),
		started:       counter("lockbench_open_loop_started_total", "Open loop: scheduled acquires started in the measured window, as they start."),
		acquire:       hist("lockbench_acquire_seconds", "Successful acquire latency; open loop: from the intended start (coordinated omission corrected)."),
		uncorrected:   hist("lockbench_acquire_uncorrected_seconds", "Open loop: successful acquire latency from the actual start."),
		failed:        hist("lockbench_acquire_failed_seconds", "Failed acquire latency."),
		release:       hist("lockbench_release_seconds", "Release latency."),
		timeToLock:    hist("lockbench_time_to_lock_seconds", "A caller's wait from its first attempt on a key to holding it, across every retry and wait."),
		gaveUp:        counter("lockbench_gave_up_total", "Callers that gave up waiting for a key (their wait time ran out)."),
		inFlight:      gauge("lockbench_acquires_in_flight", "Acquires started and not yet decided."),
		workers:       gauge("lockbench_workers", "Workers of the cell (open loop: most acquires in flight); 0 once the cell ended."),
		pacerLag:      gauge("lockbench_pacer_lag_seconds", "Open loop: how late the generator made its latest start (its own lateness, not queueing)."),
		rate:          gauge("lockbench_open_loop_offered_rate", "Open loop: acquires per second offered (0 in closed loop)."),
		linearizable:  gauge("lockbench_linearizable", "Fault cells, once checked: 1 when porcupine found the protected resource's history linearizable, 0 when not, -1 when it could not tell in its budget."),
		cpuShare: prometheus.NewGauge(prometheus.GaugeOpts{Name: "lockbench_client_cpu_share_ratio",
			Help: "lockbench's CPU over the last second as a share of all cores: near 1 means the load generator set the pace."}),
		build: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "lockbench_build_info", Help: "Always 1; the version label says which lockbench serves these metrics."}, []string{"version"}),
	}
}

func (v vecs) all() []prometheus.Collector {
	return []prometheus.Collector{v.cycles, v.acquires, v.masterReplies, v.extends, v.violations, v.lostUpdates, v.staleWrites,
		v.offered, v.unserved, v.started, v.rate, v.acquire, v.uncorrected, v.failed, v.release, v.timeToLock, v.gaveUp, v.inFlight, v.workers, v.pacerLag, v.linearizable, v.cpuShare, v.build}
}

// New builds an exporter without serving it (tests gather its registry).
func New(opt Options) *Exporter {
	e := &Exporter{reg: prometheus.NewRegistry(), vec: newVecs(), stopSampler: make(chan struct{})}
	e.reg.MustRegister(e.vec.all()...)
	e.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	e.vec.build.WithLabelValues(opt.Version).Set(1)
	if opt.CPU != nil {
		e.sampled.Add(1)
		go e.sampleCPU(opt.CPU)
	}
	return e
}

// Serve listens on addr (HOST:PORT) at once, so a bad or busy address is an
// error before anything starts, and serves /metrics until Close.
func Serve(addr string, opt Options) (*Exporter, error) {
	if err := CheckAddr(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics-addr: %v", err)
	}
	e := New(opt)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{Registry: e.reg}))
	e.ln = ln
	e.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = e.srv.Serve(ln) }()
	return e, nil
}

// CheckAddr says whether addr is HOST:PORT, naming the field
// (ports.CheckMetricsAddr, which plan checks a scenario's with).
func CheckAddr(addr string) error { return ports.CheckMetricsAddr(addr) }

// Addr is where the endpoint listens (the port chosen for ":0").
func (e *Exporter) Addr() string {
	if e.ln == nil {
		return ""
	}
	return e.ln.Addr().String()
}

// Registry is the exporter's registry (tests, extra collectors).
func (e *Exporter) Registry() *prometheus.Registry { return e.reg }

// Close stops the endpoint: the metrics end with the run.
func (e *Exporter) Close() error {
	if e == nil {
		return nil
	}
	e.closeOnce.Do(func() {
		close(e.stopSampler)
		e.sampled.Wait()
		if e.srv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if err := e.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
				e.closeErr = err
			}
		}
	})
	return e.closeErr
}

// sampleCPU sets the CPU share once a second from the process's CPU time.
func (e *Exporter) sampleCPU(cpu func() time.Duration) {
	defer e.sampled.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	cores := float64(runtime.NumCPU())
	last, lastAt := cpu(), time.Now()
	for {
		select {
		case <-e.stopSampler:
			return
		case now := <-t.C:
			c := cpu()
			if wall := now.Sub(lastAt).Seconds(); wall > 0 {
				e.vec.cpuShare.Set((c - last).Seconds() / wall / cores)
			}
			last, lastAt = c, now
		}
	}
}

// ExportedNames are the lockbench_ metric families a run can export (a
// dashboard's queries must name one of these, or a _bucket/_sum/_count of a
// histogram among them).
func ExportedNames() []string {
	names := []string{
		"lockbench_cycles_total", "lockbench_acquires_total", "lockbench_master_replies_total", "lockbench_extends_total",
		"lockbench_safety_violations_total", "lockbench_lost_updates_total", "lockbench_stale_writes_rejected_total",
		"lockbench_open_loop_offered_total", "lockbench_open_loop_unserved_total",
		"lockbench_acquire_seconds", "lockbench_acquire_uncorrected_seconds", "lockbench_acquire_failed_seconds", "lockbench_release_seconds",
		"lockbench_acquires_in_flight", "lockbench_workers", "lockbench_pacer_lag_seconds", "lockbench_client_cpu_share_ratio", "lockbench_build_info",
		"lockbench_linearizable",
	}
	return append(names, masterNames...)
}

// AddrUsage is the --metrics-addr help, the same on every command.
const AddrUsage = "serve live Prometheus metrics on http://HOST:PORT/metrics while the command runs (off by default), e.g. 127.0.0.1:9464"

// Start serves /metrics at addr for the command cmd until the returned
// exporter is closed ("" = off: nil, which Close accepts), and says where
// on stderr. It listens before anything else starts, so a busy port costs
// nothing.
func Start(cmd, addr, version string) (*Exporter, error) {
	if addr == "" {
		return nil, nil
	}
	e, err := Serve(addr, Options{CPU: workloads.ProcessCPU, Version: version})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "lockbench %s: live metrics on http://%s/metrics\n", cmd, e.Addr())
	return e, nil
}
