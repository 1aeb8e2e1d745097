package main

import (
	"fmt"
	"os"

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
