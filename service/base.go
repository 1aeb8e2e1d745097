package service

import (
	"context"
	"errors"

	"lockbench/faults"
	"lockbench/plan"
	"lockbench/results"
)

// ServersBase is the defaults of a service's Servers: a new service's
// servers embed it and write Display, ClientConfig and Stop themselves;
// every method here is an optional capability they may replace.
type ServersBase struct{}

// Version: not known ("" in results).
func (ServersBase) Version() string { return "" }

// Quorum: one server answers a write.
func (ServersBase) Quorum() int { return 1 }

// Pids: no local process to measure (no server CPU, no per-server rows).
func (ServersBase) Pids() []int { return nil }

// Trees: a server's CPU is its own process's.
func (ServersBase) Trees() bool { return false }

// Upstreams: no address a fault cell's proxies could stand in front of
// (no network fault).
func (ServersBase) Upstreams() []string { return nil }

// Targets: nothing of the servers a fault acts on (a pause of clients
// needs none).
func (ServersBase) Targets(plan.Cell, *faults.Targets) []string { return nil }

// Record: the service's part of the result's config, empty but present.
func (ServersBase) Record(cc *results.CellConfig, _ results.Settings) {
	cc.Service = &results.ServiceSettings{}
}

// Describe: "" (the log line names the servers by Display).
func (ServersBase) Describe() string { return "" }

// WatchSessionEnds: the service cannot date its sessions' ends.
func (ServersBase) WatchSessionEnds() (SessionEnds, error) { return nil, nil }

// ClientBase is the defaults of a service's Client: a new service's
// client embeds it and writes Acquire, Release and Close itself; every
// method here is an optional capability it may replace.
type ClientBase struct{}

// ErrNoPlainWrite: the client has no plain write to time (no baseline).
var ErrNoPlainWrite = errors.New("no plain write of its own to compare acquires with")

// CountKeys: no key of another run is seen (no check for one).
func (ClientBase) CountKeys(context.Context, string) (int64, error) { return 0, nil }

// Put: no plain write (the cell has no baseline).
func (ClientBase) Put(context.Context, string) error { return ErrNoPlainWrite }

// Delete: nothing to remove.
func (ClientBase) Delete(context.Context, string) error { return nil }

// RPCs: the calls are not counted (NotCounted).
func (ClientBase) RPCs() int64 { return NotCounted }

// NotCounted is RPCs' answer when a client does not count its calls.
const NotCounted = -1

// Record: nothing of its own to keep.
func (ClientBase) Record(*results.ServiceSettings) {}
