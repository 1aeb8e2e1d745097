// Package etcdlock is etcd as a lock service: its servers (a local
// cluster of real etcd processes, or an external one's endpoints) and its
// Locker (etcd's own concurrency.Mutex, one Session per contender).
package etcdlock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"lockbench/internal/ports"
	"lockbench/internal/proc"
)

// Package is the Debian package that has the etcd server.
const Package = "etcd-server"

// stopGrace is how long a member has to stop on SIGTERM before SIGKILL:
// a member exits in ~0.1 s, but one left leading a cluster whose others
// are gone waits for ever to hand its leadership on, and the cluster's
// data is thrown away after.
const stopGrace = time.Second

// Options say what local cluster to start.
type Options struct {
	Members int
	// NoFsync runs every member with --unsafe-no-fsync (etcd's default
	// fsyncs every write to its WAL).
	NoFsync bool
	Log     io.Writer // the start-up line (nil: none)
	// PeerVia, when set, takes the members' peer listeners (host:port, by
	// member) and returns the addresses the members are to reach each
	// other at (a proxy in front of each, adding latency), in order.
	PeerVia func(peers []string) ([]string, error)
	// Gates puts a gate in front of each member's advertised peer URL
	// (PeerVia's proxy, if any) that can cut members off from each other
	// (Cluster.Links); the members advertise the gates.
	Gates bool
}

// Cluster is a local etcd cluster: its members' processes, each with its
// own data dir and loopback ports.
type Cluster struct {
	dir     string
	members []*Member
	version string
	opt     Options
	gates   *PeerGates // nil without Options.Gates
}

// Member is one etcd process of a Cluster.
type Member struct {
	Name      string
	ClientURL string
	PeerURL   string // where it listens for its peers
	// AdvertisedPeerURL is where its peers reach it: PeerURL, or a proxy
	// in front of it (Options.PeerVia), or its gate (Options.Gates).
	AdvertisedPeerURL string
	dataDir           string
	logPath           string
	clusterArg        string
	noFsync           bool
	bin               string
	proc              *proc.Process
}

// ServerPath is the etcd binary in PATH ("" and false: not installed).
func ServerPath() (string, bool) {
	p, err := exec.LookPath("etcd")
	return p, err == nil
}

// Version is the etcd binary's version ("3.4.23").
func Version(bin string) (string, error) {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", bin, err)
	}
	first, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(strings.TrimPrefix(first, "etcd Version:")), nil
}

// StartLocal starts opt.Members etcd processes on free loopback ports and
// waits until the cluster has a leader. On failure nothing is left running.
func StartLocal(ctx context.Context, opt Options) (*Cluster, error) {
	bin, ok := ServerPath()
	if !ok {
		return nil, fmt.Errorf("etcd not found in PATH; topology etcd with local members runs real etcd processes (apt-get install %s)", Package)
	}
	version, err := Version(bin)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "lockbench-etcd-*")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, version: version, opt: opt}
	if err := c.start(ctx, bin); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	if opt.Log != nil {
		fmt.Fprintf(opt.Log, "lockbench: started %d local etcd %s members (%s) on %s, pids %v\n",
			opt.Members, version, c.FsyncText(), strings.Join(c.Endpoints(), ", "), c.Pids())
	}
	return c, nil
}

// FsyncText says how the members write their WAL.
func (c *Cluster) FsyncText() string {
	if c.opt.NoFsync {
		return "no fsync"
	}
	return "fsync per write"
}

func (c *Cluster) start(ctx context.Context, bin string) error {
	for i := range c.opt.Members {
		m, err := c.newMember(i)
		if err != nil {
			return err
		}
		c.members = append(c.members, m)
	}
	if err := c.advertise(); err != nil {
		return err
	}
	var peers []string
	for _, m := range c.members {
		peers = append(peers, m.Name+"="+m.AdvertisedPeerURL)
	}
	for _, m := range c.members {
		m.clusterArg = strings.Join(peers, ",")
		m.bin = bin
		if _, err := m.proc.Start(); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.waitLeader(ctx); err != nil || c.gates == nil {
		return err
	}
	return c.gates.learn(ctx, c.Endpoints())
}

// advertise sets where the members reach each other: their own peer
// listeners, or the proxies PeerVia puts in front of them, behind the
// gates if any.
func (c *Cluster) advertise() error {
	if err := c.advertiseVia(); err != nil || !c.opt.Gates {
		return err
	}
	var err error
	c.gates, err = startGates(c.members)
	return err
}

func (c *Cluster) advertiseVia() error {
	var listen []string
	for _, m := range c.members {
		m.AdvertisedPeerURL = m.PeerURL
		listen = append(listen, strings.TrimPrefix(m.PeerURL, "http://"))
	}
	if c.opt.PeerVia == nil {
		return nil
	}
	via, err := c.opt.PeerVia(listen)
	if err != nil {
		return fmt.Errorf("etcd peer proxies: %w", err)
	}
	for i, m := range c.members {
		m.AdvertisedPeerURL = "http://" + via[i]
	}
	return nil
}

func (c *Cluster) newMember(i int) (*Member, error) {
	cp, err := ports.Free()
	if err != nil {
		return nil, err
	}
	pp, err := ports.Free()
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("m%d", i)
	dir := filepath.Join(c.dir, name)
	m := &Member{Name: name, ClientURL: fmt.Sprintf("http://127.0.0.1:%d", cp), PeerURL: fmt.Sprintf("http://127.0.0.1:%d", pp),
		dataDir: filepath.Join(dir, "data"), logPath: filepath.Join(dir, "etcd.log"), noFsync: c.opt.NoFsync}
	m.proc = proc.New(proc.Options{Name: "etcd member " + name, Grace: stopGrace,
		Spawn: func() *exec.Cmd { return exec.Command(m.bin, m.args()...) }})
	return m, os.MkdirAll(dir, 0o700)
}

func (m *Member) args() []string {
	a := []string{"--name", m.Name, "--data-dir", m.dataDir,
		"--listen-client-urls", m.ClientURL, "--advertise-client-urls", m.ClientURL,
		"--listen-peer-urls", m.PeerURL, "--initial-advertise-peer-urls", m.AdvertisedPeerURL,
		"--initial-cluster", m.clusterArg, "--initial-cluster-state", "new",
		"--initial-cluster-token", "lockbench", "--logger", "zap", "--log-outputs", m.logPath}
	if m.noFsync {
		a = append(a, "--unsafe-no-fsync")
	}
	return a
}

// waitLeader waits until every member answers and one of them leads.
func (c *Cluster) waitLeader(ctx context.Context) error {
	for {
		err := c.checkLeader(ctx)
		if err == nil {
			return nil
		}
		for _, m := range c.members {
			if !m.Running() {
				return fmt.Errorf("etcd member %s exited before it was ready; log tail:\n%s", m.Name, tail(m.logPath))
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("etcd cluster not ready: %w (last: %v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (c *Cluster) checkLeader(ctx context.Context) error {
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer cli.Close()
	for _, ep := range c.Endpoints() {
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		st, err := cli.Status(sctx, ep)
		cancel()
		if err != nil {
			return err
		}
		if st.Leader == 0 {
			return fmt.Errorf("%s has no leader yet", ep)
		}
	}
	return nil
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-5):], "\n")
}

// Endpoints are the members' client URLs.
func (c *Cluster) Endpoints() []string {
	var out []string
	for _, m := range c.members {
		out = append(out, m.ClientURL)
	}
	return out
}

// Members are the cluster's members.
func (c *Cluster) Members() []*Member { return c.members }

// ServerVersion is the members' etcd version.
func (c *Cluster) ServerVersion() string { return c.version }

// Pids are the members' running processes.
func (c *Cluster) Pids() []int { return proc.Pids(c.members) }

// Pid is the member's process (0: not running).
func (m *Member) Pid() int { return m.proc.Pid() }

// Running says whether the member's process is up.
func (m *Member) Running() bool { return m.proc.Running() }

// Pause stops the member (SIGSTOP): it neither answers nor sends
// heartbeats until Resume.
func (m *Member) Pause() error { return m.proc.Pause() }

// Resume continues a paused member (SIGCONT).
func (m *Member) Resume() error { return m.proc.Resume() }

// Addr is the member's client URL.
func (m *Member) Addr() string { return m.ClientURL }

// Kill is kill -9 of the member's process, reaped.
func (m *Member) Kill() error { return m.proc.Kill() }

// Restart starts a killed member again on its data dir (it rejoins the
// cluster with what it had written) and waits until it answers.
func (m *Member) Restart(ctx context.Context) error {
	if _, err := m.proc.Start(); errors.Is(err, proc.ErrRunning) {
		return nil
	} else if err != nil {
		return err
	}
	// The client after the start: with a DialTimeout, New waits to connect.
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{m.ClientURL}, DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	err = m.proc.Await(ctx, func(ctx context.Context) error {
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err := cli.Status(sctx, m.ClientURL)
		return err
	})
	if err != nil {
		return fmt.Errorf("restart: %w; log tail:\n%s", err, tail(m.logPath))
	}
	return nil
}

// HeldKeys counts the keys in the member's own copy of the store (a
// serializable read: what it holds, not what a quorum agrees); -1 when it
// does not answer.
func (m *Member) HeldKeys(ctx context.Context) int {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{m.ClientURL}, DialTimeout: 500 * time.Millisecond, Logger: zap.NewNop()})
	if err != nil {
		return -1
	}
	defer cli.Close()
	r, err := cli.Get(ctx, "\x00", clientv3.WithFromKey(), clientv3.WithCountOnly(), clientv3.WithSerializable())
	if err != nil {
		return -1
	}
	return int(r.Count)
}

// Leader is the index of the member that leads now (asked of the running
// members).
func (c *Cluster) Leader(ctx context.Context) (int, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		return -1, err
	}
	defer cli.Close()
	var last error
	for i, m := range c.members {
		if !m.Running() {
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		st, err := cli.Status(sctx, m.ClientURL)
		cancel()
		switch {
		case err != nil:
			last = err
		case st.Header.MemberId == st.Leader:
			return i, nil
		case st.Leader != 0:
			if j := c.indexOfID(ctx, cli, st.Leader); j >= 0 {
				return j, nil
			}
		}
	}
	return -1, fmt.Errorf("etcd: no member names a leader (%v)", last)
}

// indexOfID is the index of the member with the raft id (-1: none).
func (c *Cluster) indexOfID(ctx context.Context, cli *clientv3.Client, id uint64) int {
	sctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	ml, err := cli.MemberList(sctx)
	if err != nil {
		return -1
	}
	for _, mm := range ml.Members {
		if mm.ID != id {
			continue
		}
		for i, m := range c.members {
			if mm.Name == m.Name {
				return i
			}
		}
	}
	return -1
}

// Stop stops the member by its pid: SIGTERM, SIGKILL after stopGrace.
func (m *Member) Stop() error { return m.proc.Stop() }

// Stop stops every member, then the gates, and removes the cluster's
// directory.
func (c *Cluster) Stop() error {
	// All at once: a member left leading alone waits out stopGrace (see
	// there); together they wait it at most once.
	errs := proc.StopAll(c.members)
	if c.gates != nil { // after the members: a leader hands over on SIGTERM
		errs = append(errs, c.gates.close())
	}
	errs = append(errs, os.RemoveAll(c.dir))
	return errors.Join(errs...)
}
