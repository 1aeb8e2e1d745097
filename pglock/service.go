package pglock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"lockbench/faults"
	"lockbench/internal/redact"
	"lockbench/plan"
	"lockbench/results"
	"lockbench/service"
)

func init() {
	service.Register(postgres{})
	results.RegisterLegacy(results.LegacyService{Key: Name, ServersKey: "postgres_url", Read: legacySection})
}

// legacySection reads a postgres cell's section of a result written
// before the service section.
func legacySection(b json.RawMessage, rec results.Settings) *results.ServiceSettings {
	var old struct {
		FenceSource     string  `json:"fence_source"`
		LostConnections int64   `json:"lost_connections"`
		CallsPerCycle   float64 `json:"calls_per_cycle"`
	}
	if json.Unmarshal(b, &old) != nil {
		return nil
	}
	v := &results.ServiceSettings{FenceSource: old.FenceSource, Lost: old.LostConnections, CallsPerCycle: old.CallsPerCycle}
	v.Lease, v.Sessions, v.Calls, v.Baseline = "session advisory locks (no lease, no token)", "connections", "lock calls", "a SELECT 1 round trip"
	v.Server, v.Servers = "server (postmaster and backends)", "1 local server"
	if len(rec.Servers) > 0 {
		v.Servers = "given server"
	}
	return v
}

// CanServe: a local server needs Debian's binaries.
func (postgres) CanServe(c plan.Cell) error {
	s := c.Settings
	if _, ok := BinDir(); !ok && !s.External() {
		return service.MissingTool{Err: fmt.Errorf("postgres not found in /usr/lib/postgresql/*/bin; topology postgres with a local server runs Debian's (apt-get install %s)", Package)}
	}
	return nil
}

// servers are a postgres cell's server: a local one (nil for an external
// one) and the URL the lock client connects with.
type servers struct {
	local   *Server
	replica *Server // a streaming replica of local (replicas: 1); nil without
	url     string

	mu       sync.Mutex // guards promoted and the log, written by the schedule, read by the cell
	promoted bool       // the replica is the primary now: one failover a cell
	kill     faults.PrimaryKill
	log      []faults.Promotion
}

// Start starts the cell's local server, or takes an external one's URL
// (connected and checked by the lock client).
func (postgres) Start(ctx context.Context, c plan.Cell, log io.Writer) (service.Servers, error) {
	s := c.Settings
	if s.External() {
		return &servers{url: serverURL(s)}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	srv, err := StartLocal(ctx, Options{MaxConnections: maxConnections(s), Log: log, Synced: crashes(c)})
	if err != nil {
		return nil, err
	}
	v := &servers{local: srv, url: srv.URL()}
	if s.ServiceReplicas() > 0 {
		if v.replica, err = srv.StartReplica(ctx); err != nil {
			return nil, errors.Join(err, srv.Stop())
		}
		v.url = multiHostURL(v.Upstreams())
	}
	return v, nil
}

// crashes: the cell kills its server (and may restart it), whose recovery
// must not pay for initdb's writes (Options.Synced).
func crashes(c plan.Cell) bool {
	for _, f := range c.Faults {
		if f.Kind == results.FaultCrash {
			return true
		}
	}
	return false
}

// multiHostURL connects to whichever of hosts takes writes: the primary,
// or the replica once promoted (libpq's target_session_attrs, as pgx
// reads it).
func multiHostURL(hosts []string) string {
	return "postgres://lockbench@" + strings.Join(hosts, ",") + "/postgres?sslmode=disable&target_session_attrs=read-write"
}

func (v *servers) Display() []string {
	if v.local == nil {
		return []string{redact.URL(v.url)}
	}
	return v.Upstreams()
}

func (v *servers) Quorum() int { return 1 }

// each is the local servers: the primary, and its replica if any.
func (v *servers) each() []*Server {
	if v.replica == nil {
		return []*Server{v.local}
	}
	return []*Server{v.local, v.replica}
}

// Trees: the postmaster's backends do the server's work.
func (v *servers) Trees() bool { return true }

func (v *servers) Version() string {
	if v.local == nil {
		return ""
	}
	return "PostgreSQL " + v.local.Version()
}

func (v *servers) Pids() []int {
	if v.local == nil {
		return nil
	}
	var out []int
	for _, srv := range v.each() {
		out = append(out, srv.Pid())
	}
	return out
}

func (v *servers) Upstreams() []string {
	if v.local == nil {
		return nil
	}
	var out []string
	for _, srv := range v.each() {
		out = append(out, srv.Addr())
	}
	return out
}

// ClientConfig: one connection per worker, through the client's proxy
// when there is one.
func (v *servers) ClientConfig(c plan.Cell, via []string) (json.RawMessage, error) {
	cfg := Config{URL: v.url, Strategy: c.Settings.WaitStrategy, Retry: c.Terms.Retry, Conns: c.Load.Workers}
	switch u, err := url.Parse(v.url); {
	case via != nil && v.replica != nil:
		cfg.URL = multiHostURL(via)
	case err == nil && via != nil && strings.Contains(v.url, "://"):
		u.Host = via[0]
		cfg.URL = u.String()
	}
	return json.Marshal(cfg)
}

// Targets: the server (a crash or pause of its process group, its
// backends killed); with a replica, its promotion (failover) and its lag
// (replication_lag: the replica stopped, its link to the primary cut).
func (v *servers) Targets(_ plan.Cell, t *faults.Targets) []string {
	if v.local == nil {
		return nil
	}
	for _, srv := range v.each() {
		t.Masters = append(t.Masters, srv)
	}
	if v.replica != nil {
		t.Failover, t.Replication = v, v
		t.Replicas = []faults.Process{standby{v.replica, v}}
	}
	return v.Upstreams()
}

// standby is the replica as replication_lag stops it: its process group
// (postmaster, startup process, WAL receiver) paused, and resumed with its
// link to the primary restored, so that it reconnects and catches up as a
// resumed Redis replica does (the cut link would refuse it for ever).
// Once promoted it has no primary to reach: its link stays as it is.
type standby struct {
	*Server
	v *servers
}

func (standby) Name() string { return "standby" }

func (s standby) Resume() error {
	var err error
	if !s.v.isPromoted() {
		err = s.RestoreReplication()
	}
	return errors.Join(err, s.Server.Resume())
}

// CutReplicaLinks cuts the replica's link to the primary
// (faults.Replication): it receives none of the primary's WAL from now on,
// until it is resumed or promoted; its WAL receiver's attempts to
// reconnect are refused.
func (v *servers) CutReplicaLinks(context.Context) error {
	if v.isPromoted() {
		return errors.New("postgres: replication_lag after the failover: the replica is the primary now (one failover a cell)")
	}
	return v.replica.CutReplication()
}

func (v *servers) isPromoted() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.promoted
}

// Failover kills the primary's process group (its advisory locks go with
// it) and promotes the replica, which has none of them. The kill and the
// promotion are logged (faults.FailoverLog): the failover is dated at the
// kill, not when the promotion returned, which left the promotion (up to
// 5 s here) out of the unavailability measured from it. A replica that
// replication_lag stopped is continued first, its link still cut: it is
// promoted with the WAL it had received. The promotion's log says how much
// of the primary's WAL that lacked (faults.Promotion's LSNs): the primary's
// write position just before the kill, the replica's receive position.
func (v *servers) Failover(ctx context.Context) (string, string, int, error) {
	v.mu.Lock()
	if v.promoted {
		v.mu.Unlock()
		return "", "", 0, errors.New("postgres: a second failover: the replica is the primary already (one failover a cell)")
	}
	v.promoted = true
	v.mu.Unlock()
	held, pid := len(v.local.holders()), v.local.Pid()
	sent := lsnWithin(ctx, 250*time.Millisecond, v.local.CurrentLSN) // a paused primary must not hold its kill back long
	killed := time.Now()
	if err := v.local.Kill(); err != nil {
		return "", "", 0, err
	}
	reaped := time.Now()
	v.mu.Lock()
	v.kill = faults.PrimaryKill{At: killed, Reaped: reaped}
	v.mu.Unlock()
	stopped := v.replica.proc.Paused()
	if stopped {
		if err := v.replica.Resume(); err != nil {
			return "", "", 0, err
		}
	}
	if err := v.replica.Promote(ctx); err != nil {
		return "", "", 0, err
	}
	promoted := time.Now()
	// Read once promoted, not to delay the promotion: the receive
	// position stays where the receiving stopped.
	received := lsnWithin(ctx, time.Second, v.replica.ReceiveLSN)
	p := faults.Promotion{At: promoted, From: v.local.Addr(), To: v.replica.Addr(), ReceivedLSN: received.text(), PrimaryLSN: sent.text()}
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	if at, ok, err := v.replica.LastReplayed(rctx); err == nil && ok {
		p.HadUntil = at
	}
	cancel()
	lag := "how much of the primary's WAL it lacked is not known"
	switch {
	case received.ok && sent.ok && sent.lsn > received.lsn:
		p.Lacked = int64(sent.lsn - received.lsn)
		lag = fmt.Sprintf("at least %d bytes of the primary's WAL it never received", p.Lacked)
	case received.ok && sent.ok:
		lag = "it had received the primary's WAL as far as read just before the kill"
	}
	cut, refused := v.replica.ReplicationCut()
	how := ""
	switch {
	case cut && stopped:
		how = fmt.Sprintf("; the replica, stopped by replication_lag, continued first, its link to the primary still cut (reconnections refused: %d)", refused)
	case cut:
		how = fmt.Sprintf("; its link to the primary cut (reconnections refused: %d)", refused)
	case stopped:
		how = "; the replica, paused, continued first"
	}
	p.Detail = fmt.Sprintf("pg_promote returned; the replica had received WAL to %s, the primary had written to %s when read just before its kill: %s%s",
		orUnknown(received.text()), orUnknown(sent.text()), lag, how)
	v.mu.Lock()
	v.log = append(v.log, p)
	v.mu.Unlock()
	return "primary " + v.local.Addr(), fmt.Sprintf("kill -9 of the primary's process group (pid %d) holding %d advisory locks; replica %s promoted in %v (its locks: none; %s)",
		pid, held, v.replica.Addr(), promoted.Sub(reaped).Round(time.Millisecond), lag), held, nil
}

// walPos is a WAL position read, or why not.
type walPos struct {
	lsn LSN
	ok  bool
}

func (w walPos) text() string {
	if !w.ok {
		return ""
	}
	return w.lsn.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// lsnWithin reads a WAL position within d (not ok: the server did not
// say).
func lsnWithin(ctx context.Context, d time.Duration, read func(context.Context) (LSN, error)) walPos {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	l, err := read(ctx)
	return walPos{l, err == nil}
}

// PrimaryKills is the failover's kill, if it came.
func (v *servers) PrimaryKills() []faults.PrimaryKill {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.kill.At.IsZero() {
		return nil
	}
	return []faults.PrimaryKill{v.kill}
}

// Promotions is the replica's promotion, once it returned.
func (v *servers) Promotions() []faults.Promotion {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.log)
}

func (v *servers) Record(cc *results.CellConfig, _ results.Settings) {
	out := service.InConfig(cc, v)
	out.Server, out.Servers = "server (postmaster and backends)", "1 local server"
	switch {
	case v.local == nil:
		out.Servers = "given server"
	case v.replica != nil:
		out.Servers = "1 local primary + 1 streaming replica"
	}
}

func (v *servers) Describe() string {
	if v.replica != nil {
		return fmt.Sprintf("%s primary %s (pid %d), streaming replica %s (pid %d)", v.Version(), v.local.Addr(), v.local.Pid(), v.replica.Addr(), v.replica.Pid())
	}
	return fmt.Sprintf("%s server %s (pid %d)", v.Version(), v.local.Addr(), v.local.Pid())
}

// WatchSessionEnds: the backends a kill_backend fault ended.
func (v *servers) WatchSessionEnds() (service.SessionEnds, error) {
	if v.local == nil {
		return nil, nil
	}
	return func() (map[string]time.Time, string) { return v.local.SessionEnds(), SessionEndSource }, nil
}

func (v *servers) Stop() error {
	if v.local == nil {
		return nil
	}
	var errs []error
	for _, srv := range v.each() {
		errs = append(errs, srv.Stop())
	}
	return errors.Join(errs...)
}

// NewClient is the lock client on a config ClientConfig made.
func (postgres) NewClient(ctx context.Context, raw json.RawMessage) (service.Client, error) {
	var cfg Config
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, fmt.Errorf("postgres client config: %w", err)
	}
	l, err := New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return client{l}, nil
}

// client is the Locker as a cell uses it: advisory locks leave no keys,
// and a ping is its baseline.
type client struct{ *Locker }

func (client) CountKeys(context.Context, string) (int64, error) { return 0, nil }
func (c client) Put(ctx context.Context, _ string) error        { return c.Ping(ctx) }
func (client) Delete(context.Context, string) error             { return nil }

// Record: advisory locks have no lease and no token.
func (c client) Record(v *results.ServiceSettings) {
	v.Lease, v.FenceSource = "session advisory locks (no lease, no token)", "none: an advisory lock has no token"
	v.Lost, v.Sessions, v.Calls, v.Baseline = c.LostConnections(), "connections", "lock calls", "a SELECT 1 round trip"
}

// Libraries: pgx (service.Libraries).
func (postgres) Libraries() []string { return []string{"github.com/jackc/pgx/v5"} }
