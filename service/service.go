// Package service is the registry of lock services, in the style of
// database/sql's drivers: a service's package registers one Service in
// its init (Redis' three: package bench), and plan, bench, runner and
// chaos look it up by the topology that names it, never naming one. A program
// that runs a service imports its package (blank) once.
package service

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"lockbench/faults"
	"lockbench/lock"
	"lockbench/plan"
	"lockbench/results"
)

// Service is a lock service: its settings (plan.Topology), its servers
// and its lock client.
type Service interface {
	plan.Topology
	// CanServe says, before anything starts, whether this machine can
	// serve a cell's local servers (a MissingTool when a program is
	// missing); nil for an external one.
	CanServe(c plan.Cell) error
	// Start starts cell c's local servers, or takes an external one's
	// addresses; log hears the servers' own start messages.
	Start(ctx context.Context, c plan.Cell, log io.Writer) (Servers, error)
	// NewClient is the lock client on the config Servers.ClientConfig
	// made, in this process or in a client process of its own.
	NewClient(ctx context.Context, config json.RawMessage) (Client, error)
}

// Servers are a cell's servers of one service: local ones this run
// started, or an external one's addresses.
type Servers interface {
	Display() []string // the servers as results show them
	Version() string   // the server's program and version
	Quorum() int       // how many of them a write needs
	// Pids are the local servers' processes by Display's index (0: not
	// running), none for external ones; Trees says a server's CPU is its
	// process tree's (a postmaster and its backends).
	Pids() []int
	Trees() bool
	// Upstreams are the host:port a fault cell's per-client proxies stand
	// in front of.
	Upstreams() []string
	// ClientConfig is the lock client's config for cell c, dialling via
	// (this client's proxies, by Upstreams' index) when not nil.
	ClientConfig(c plan.Cell, via []string) (json.RawMessage, error)
	// Targets puts what cell c's faults act on into t (the members, the
	// leader, the member links) and returns the addresses they listen on.
	Targets(c plan.Cell, t *faults.Targets) []string
	// Record says in the result's config where the cell ran (InConfig's
	// Servers and Server for a lock service), from the settings it
	// recorded.
	Record(cc *results.CellConfig, rec results.Settings)
	// Describe is the servers as a fault cell's log line names them.
	Describe() string
	// WatchSessionEnds starts dating the lock sessions' ends on the
	// servers' side (nil, nil: the service cannot).
	WatchSessionEnds() (SessionEnds, error)
	Stop() error
}

// SessionEnds stops the watch and returns the ends seen by session name,
// and how they were seen.
type SessionEnds func() (map[string]time.Time, string)

// Client is a service's lock client, as a cell uses it beside the
// Locker its workers drive.
type Client interface {
	lock.Locker
	Close()
	// CountKeys counts the keys under prefix (another live run's).
	CountKeys(ctx context.Context, prefix string) (int64, error)
	// Put is one plain write of the service's own (or a ping): the floor
	// to compare acquires with; Delete removes what it wrote.
	Put(ctx context.Context, key string) error
	Delete(ctx context.Context, key string) error
	// RPCs counts the calls made so far.
	RPCs() int64
	// Record says what the locks ran on: the lease granted, the fence's
	// source, the sessions lost, what its calls and baseline are.
	Record(v *results.ServiceSettings)
}

var (
	mu       sync.RWMutex
	services = map[string]Service{}
)

// Register makes a service known by its name; a second one of the same
// name is a programming error.
func Register(s Service) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := services[s.Name()]; dup {
		panic(fmt.Sprintf("service: %s registered twice", s.Name()))
	}
	services[s.Name()] = s
	plan.RegisterTopology(s)
}

// Lookup is the service named name (nil: none registered).
func Lookup(name string) Service {
	mu.RLock()
	defer mu.RUnlock()
	return services[name]
}

// Of is the service cell settings s lock on.
func Of(s plan.Settings) Service { return Lookup(string(s.TopologyOf())) }

// Names are the registered services' names, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	var out []string
	for n := range services {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// InConfig is a lock service's part of a result's config, made for v's
// Record to fill: the server's version and quorum.
func InConfig(cc *results.CellConfig, v Servers) *results.ServiceSettings {
	cc.ServerVersion, cc.Quorum = v.Version(), v.Quorum()
	cc.Service = &results.ServiceSettings{}
	return cc.Service
}

// MissingTool is a program this machine lacks for a cell: not bad input,
// but a run that cannot be done here.
type MissingTool struct{ Err error }

func (e MissingTool) Error() string { return e.Err.Error() }
func (e MissingTool) Unwrap() error { return e.Err }

// PidList is pids as a log line lists them.
func PidList(pids []int) string {
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, " ")
}
