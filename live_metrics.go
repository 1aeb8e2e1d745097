package main

import (
	"fmt"
	"os"

	"lockbench/chaos"
	"lockbench/metrics"
	"lockbench/workloads"
)

// metricsAddrUsage is the --metrics-addr help, the same on every command.
const metricsAddrUsage = "serve live Prometheus metrics on http://HOST:PORT/metrics while the command runs (off by default), e.g. 127.0.0.1:9464"

// startMetrics serves /metrics at addr until the returned exporter is
// closed ("" = off: nil, which Close accepts). It listens before anything
// else starts, so a busy port costs nothing.
func startMetrics(cmd, addr string) (*metrics.Exporter, error) {
	if addr == "" {
		return nil, nil
	}
	e, err := metrics.Serve(addr, metrics.Options{CPU: workloads.ProcessCPU, Version: version})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "lockbench %s: live metrics on http://%s/metrics\n", cmd, e.Addr())
	return e, nil
}

// chaosObserver labels a chaos cell's live metrics; nil when metrics are off.
func chaosObserver(e *metrics.Exporter, scenario string) func(c chaos.Cell, masters []string) chaos.Observer {
	if e == nil {
		return nil
	}
	return func(c chaos.Cell, masters []string) chaos.Observer {
		s := c.Settings
		return chaosCell{e.Cell(metrics.Labels{Scenario: scenario, Cell: c.Name, Mode: s.Mode, Wait: s.Wait, Persistence: s.Persistence, Driver: "lockbench"}, masters)}
	}
}

// chaosCell takes chaos client processes' counts in bulk.
type chaosCell struct{ *metrics.Cell }

func (c chaosCell) AddCounts(d chaos.LiveCounts) {
	c.Add(metrics.Tally{Cycles: d.Cycles, NotAcquired: d.NotAcquired, Errors: d.Errors, Violations: d.Violations,
		LostUpdates: d.LostUpdates, StaleWritesRejected: d.Rejected, PerMaster: d.PerMaster})
}
