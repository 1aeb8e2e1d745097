// Package zklock is ZooKeeper as a lock service: its servers (a local
// ensemble of real ZooKeeper processes, or an external one's addresses)
// and its Locker (the lock recipe over ephemeral sequential znodes, one
// session per contender).
package zklock

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"lockbench/internal/ports"
	"lockbench/internal/proc"
)

// Package is the Debian package that has the ZooKeeper server.
const Package = "zookeeper"

// Jar is the ZooKeeper server jar of the Debian package; its manifest's
// Class-Path names the jars it needs.
const Jar = "/usr/share/java/zookeeper.jar"

// slf4jSimple is the logging binding the members log through (to their
// stderr, which is their log file); without it they log nothing.
const slf4jSimple = "/usr/share/java/slf4j-simple.jar"

// MaxServers is the largest local ensemble StartLocal starts.
const MaxServers = 7

// DefaultTTL is the session timeout a cluster is set up for when
// Options.TTL is 0.
const DefaultTTL = 10 * time.Second

// stopGrace is how long a member has to stop on SIGTERM before SIGKILL.
const stopGrace = 5 * time.Second

// startWait and restartWait cap how long StartLocal and Restart wait for
// members to serve.
const (
	startWait   = 60 * time.Second
	restartWait = 30 * time.Second
)

// jvmArgs are every member's JVM flags: a small heap and the serial
// collector, so that several members fit a small machine, and warn-level
// logs with a time stamp (and the server's session expiries, at info,
// for the lock-loss lag). The JIT is left at its default (C2): a member
// starts about 0.15 s faster with C1 only, but serves slower after.
var jvmArgs = []string{"-Xmx128m", "-XX:+UseSerialGC", "-XX:-UsePerfData", "-XX:+ExitOnOutOfMemoryError",
	"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Dorg.slf4j.simpleLogger.showDateTime=true",
	"-Dorg.slf4j.simpleLogger.dateTimeFormat=" + logStamp,
	"-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.server.ZooKeeperServer=info"}

const mainClass = "org.apache.zookeeper.server.quorum.QuorumPeerMain"

// Options say what local ensemble to start.
type Options struct {
	// Servers is the number of members, 1..MaxServers; 1 is a standalone
	// server (no server.N lines).
	Servers int
	// ForceSync is forceSync=yes (the transaction log is fsynced for every
	// transaction, ZooKeeper's default) or, false, forceSync=no.
	ForceSync bool
	// TTL is the session timeout clients will ask for (0: DefaultTTL). The
	// tickTime is TTL/10 within [50ms, 2s] in whole milliseconds, and
	// minSessionTimeout/maxSessionTimeout are ZooKeeper's 2 and 20 ticks,
	// widened to take TTL in, so that the servers grant exactly TTL.
	TTL time.Duration
	// MaxClientCnxns is the connections a member takes from one client
	// address (0: unlimited); every local client is 127.0.0.1.
	MaxClientCnxns int
	// PeerVia, when set, puts every member's links to the others behind
	// proxies of its own (faults.MemberNet: given the members' peer
	// addresses, quorum then election, and the election links' first
	// message's rewrite), so that Links can cut a member off from the
	// others; 2 or more Servers. Injected, so that this package reaches
	// no fault code.
	PeerVia func(listen [][]string, hello Hello) (PeerNet, error)
	Log     io.Writer // the start-up line (nil: none)
}

// Hello rewrites the first message a member sends on a link to another:
// head so far, the address it names the member by, the one to name
// instead; more asks for more bytes first.
type Hello = func(head []byte, own, via string) (out []byte, more bool)

// PeerNet is the proxies PeerVia puts on the members' links.
type PeerNet interface {
	Addrs(from int) [][]string // where member from reaches each member
	Isolate(members []int) error
	Rejoin(members []int) error
	Close()
}

// Cluster is a local ZooKeeper ensemble: its members' processes, each with
// its own directory (zoo.cfg, data dir, log) and loopback ports.
type Cluster struct {
	dir     string
	members []*Member
	version string
	jvm     string // the members' JVM, as java -version names it
	opt     Options
	tick    time.Duration
	minSess time.Duration
	maxSess time.Duration
	links   *PeerLinks // PeerVia: the members' proxied links
}

// Member is one ZooKeeper server process of a Cluster.
type Member struct {
	ID           int    // its myid, 1..Servers
	Name         string // "zk1"
	ClientPort   int
	PeerPort     int // followers' connections to the leader (0: standalone)
	ElectionPort int // leader election (0: standalone)
	dir          string
	cfgPath      string
	logPath      string
	java         string
	classpath    string
	proc         *proc.Process
}

// ServerPath is the ZooKeeper server jar, and whether it and java are
// installed.
func ServerPath() (string, bool) {
	if _, err := os.Stat(Jar); err != nil {
		return Jar, false
	}
	_, err := exec.LookPath("java")
	return Jar, err == nil
}

// tickFor is the tickTime for sessions of ttl: ttl/10 within [50ms, 2s],
// in whole milliseconds.
func tickFor(ttl time.Duration) time.Duration {
	t := min(max(ttl/10, 50*time.Millisecond), 2*time.Second)
	return t.Truncate(time.Millisecond)
}

// StartLocal starts opt.Servers ZooKeeper processes on free loopback ports
// in a new temporary directory and waits until a quorum serves: every
// member answers srvr as leader, follower or standalone. On failure
// nothing is left running and the directory is removed.
func StartLocal(ctx context.Context, opt Options) (*Cluster, error) {
	if opt.Servers < 1 || opt.Servers > MaxServers {
		return nil, fmt.Errorf("zookeeper: %d servers; a local ensemble has 1 to %d", opt.Servers, MaxServers)
	}
	if opt.TTL < 0 || opt.MaxClientCnxns < 0 {
		return nil, fmt.Errorf("zookeeper: negative TTL (%v) or MaxClientCnxns (%d)", opt.TTL, opt.MaxClientCnxns)
	}
	if opt.PeerVia != nil && opt.Servers < 2 {
		return nil, errors.New("zookeeper: a standalone server has no links to cut (PeerVia needs 2 or more servers)")
	}
	if opt.TTL == 0 {
		opt.TTL = DefaultTTL
	}
	if opt.TTL%time.Millisecond != 0 {
		return nil, fmt.Errorf("zookeeper: TTL %v is not whole milliseconds (session timeouts are in ms)", opt.TTL)
	}
	jar, ok := ServerPath()
	if !ok {
		return nil, fmt.Errorf("zookeeper server (%s) or java not found; topology zookeeper with local members runs real ZooKeeper processes (apt-get install %s)", jar, Package)
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "lockbench-zk-*")
	if err != nil {
		return nil, err
	}
	tick := tickFor(opt.TTL)
	c := &Cluster{dir: dir, opt: opt, tick: tick, minSess: min(2*tick, opt.TTL), maxSess: max(20*tick, opt.TTL)}
	if err := c.start(ctx, java, jar); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	if opt.Log != nil {
		what := fmt.Sprintf("%d local zookeeper %s members", opt.Servers, c.version)
		if opt.Servers == 1 {
			what = fmt.Sprintf("a standalone local zookeeper %s server", c.version)
		}
		fmt.Fprintf(opt.Log, "lockbench: started %s (%s, tickTime %v, sessions %v..%v) on %s, pids %v\n",
			what, c.FsyncText(), tick, c.minSess, c.maxSess, strings.Join(c.Servers(), ", "), c.Pids())
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context, java, jar string) error {
	cp := jar
	if _, err := os.Stat(slf4jSimple); err == nil {
		cp += ":" + slf4jSimple
	}
	for i := range c.opt.Servers {
		m, err := c.newMember(i+1, java, cp)
		if err != nil {
			return err
		}
		c.members = append(c.members, m)
	}
	if c.opt.PeerVia != nil {
		if err := c.proxyLinks(); err != nil {
			return err
		}
	}
	for i, m := range c.members {
		if err := m.writeConfig(c.config(i)); err != nil {
			return err
		}
	}
	for _, m := range c.members {
		if _, err := m.proc.Start(); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, startWait)
	defer cancel()
	if err := c.waitServing(ctx); err != nil {
		return err
	}
	v, err := c.members[0].version(ctx)
	if err != nil {
		return err
	}
	c.version, c.jvm = v, jvmVersion(ctx, java)
	return nil
}

// jvmVersion is the JVM that runs the members, from the first line of
// java -version ("openjdk version "17.0.15" 2025-04-15" → "openjdk
// 17.0.15"); "" when it cannot say. ZooKeeper's pauses and fsyncs are
// the JVM's as much as its own.
func jvmVersion(ctx context.Context, java string) string {
	out, err := exec.CommandContext(ctx, java, "-version").CombinedOutput()
	if err != nil {
		return ""
	}
	first, _, _ := strings.Cut(string(out), "\n")
	f := strings.Fields(first)
	if len(f) < 3 || f[1] != "version" {
		return ""
	}
	return f[0] + " " + strings.Trim(f[2], `"`)
}

func (c *Cluster) newMember(id int, java, cp string) (*Member, error) {
	m := &Member{ID: id, Name: fmt.Sprintf("zk%d", id), java: java}
	var err error
	if m.ClientPort, err = ports.Free(); err != nil {
		return nil, err
	}
	if c.opt.Servers > 1 {
		if m.PeerPort, err = ports.Free(); err != nil {
			return nil, err
		}
		if m.ElectionPort, err = ports.Free(); err != nil {
			return nil, err
		}
	}
	m.dir = filepath.Join(c.dir, m.Name)
	m.cfgPath = filepath.Join(m.dir, "zoo.cfg")
	m.logPath = filepath.Join(m.dir, "zookeeper.log")
	m.classpath = m.dir + ":" + cp
	m.proc = proc.New(proc.Options{Name: "zookeeper member " + m.Name, Spawn: m.command, Output: m.logPath, Grace: stopGrace})
	return m, os.MkdirAll(filepath.Join(m.dir, "data"), 0o700)
}

// config is member i's zoo.cfg but for its dataDir and clientPort, the
// same for every member but where it reaches the others. initLimit is at
// least 10 s and syncLimit (how long a follower and its leader wait on
// each other; a paused or cut-off leader is given up on after it) at
// least 1 s, whatever the tick. reconfigEnabled=false (the default) is
// what lets members' server lines differ: each keeps its own (no
// QuorumVerifier from a peer is adopted with reconfig off).
func (c *Cluster) config(i int) string {
	ms := func(d time.Duration) int64 { return d.Milliseconds() }
	ticks := func(d time.Duration, least int64) int64 { return max(least, (ms(d)+ms(c.tick)-1)/ms(c.tick)) }
	fsync := "no"
	if c.opt.ForceSync {
		fsync = "yes"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tickTime=%d\nminSessionTimeout=%d\nmaxSessionTimeout=%d\n", ms(c.tick), ms(c.minSess), ms(c.maxSess))
	fmt.Fprintf(&b, "clientPortAddress=127.0.0.1\nadmin.enableServer=false\n4lw.commands.whitelist=ruok,srvr,mntr,cons\n")
	fmt.Fprintf(&b, "forceSync=%s\nmaxClientCnxns=%d\n", fsync, c.opt.MaxClientCnxns)
	if len(c.members) > 1 {
		fmt.Fprintf(&b, "initLimit=%d\nsyncLimit=%d\nreconfigEnabled=false\n", ticks(10*time.Second, 10), ticks(time.Second, 5))
		for j, addrs := range c.peers(i) {
			_, election, _ := net.SplitHostPort(addrs[1])
			fmt.Fprintf(&b, "server.%d=%s:%s\n", c.members[j].ID, addrs[0], election)
		}
	}
	return b.String()
}

// peers are the quorum and election addresses member i reaches each
// member at: the real ones, or its proxies with PeerVia.
func (c *Cluster) peers(i int) [][]string {
	if c.links != nil {
		return c.links.net.Addrs(i)
	}
	out := make([][]string, len(c.members))
	for j, m := range c.members {
		out[j] = m.peerAddrs()
	}
	return out
}

// peerAddrs are the member's quorum and election listen addresses.
func (m *Member) peerAddrs() []string {
	return []string{net.JoinHostPort("127.0.0.1", strconv.Itoa(m.PeerPort)), net.JoinHostPort("127.0.0.1", strconv.Itoa(m.ElectionPort))}
}

func (m *Member) writeConfig(body string) error {
	data := filepath.Join(m.dir, "data")
	cfg := fmt.Sprintf("dataDir=%s\nclientPort=%d\n%s", data, m.ClientPort, body)
	if err := os.WriteFile(m.cfgPath, []byte(cfg), 0o600); err != nil {
		return err
	}
	if m.PeerPort == 0 {
		return nil
	}
	return os.WriteFile(filepath.Join(data, "myid"), []byte(strconv.Itoa(m.ID)+"\n"), 0o600)
}

// command is the member's JVM, run in its directory; its stdout and
// stderr are its log.
func (m *Member) command() *exec.Cmd {
	args := append(append([]string{}, jvmArgs...), "-cp", m.classpath, mainClass, m.cfgPath)
	cmd := exec.Command(m.java, args...)
	cmd.Dir = m.dir
	return cmd
}

// waitServing waits until every member serves.
func (c *Cluster) waitServing(ctx context.Context) error {
	for {
		var last error
		var waiting *Member
		for _, m := range c.members {
			if err := m.serving(ctx); err != nil {
				last, waiting = err, m
				break
			}
		}
		if last == nil {
			if last = c.synced(ctx); last == nil {
				return nil
			}
			waiting = c.members[0]
		}
		for _, m := range c.members {
			if !m.Running() {
				return m.exitedError()
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("zookeeper member %s not serving: %w (last: %v); log tail:\n%s", waiting.Name, ctx.Err(), last, tail(waiting.logPath))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (m *Member) exitedError() error {
	state := m.proc.ExitState()
	if state == "" {
		state = "exited"
	}
	return fmt.Errorf("zookeeper member %s %s before it served; log tail:\n%s", m.Name, state, tail(m.logPath))
}

// synced: the leader has synced every follower (a member that serves as
// follower may still be joining: a client on it would see its connection
// closed when it does).
func (c *Cluster) synced(ctx context.Context) error {
	if len(c.members) < 2 {
		return nil
	}
	for _, m := range c.members {
		out, err := fourLetter(ctx, m.Addr(), "mntr")
		if err != nil {
			continue
		}
		if n, ok := mntrField(out, "zk_synced_followers"); ok {
			if n == strconv.Itoa(len(c.members)-1) {
				return nil
			}
			return fmt.Errorf("zookeeper leader %s has synced %s of %d followers", m.Name, n, len(c.members)-1)
		}
	}
	return errors.New("zookeeper: no member reports its synced followers (no leader yet)")
}

// serving is nil when the member answers srvr as leader, follower or
// standalone.
func (m *Member) serving(ctx context.Context) error {
	mode, err := m.Mode(ctx)
	if err != nil {
		return err
	}
	switch mode {
	case "leader", "follower", "standalone":
		return nil
	}
	return fmt.Errorf("zookeeper member %s is %s", m.Name, mode)
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	lines = lines[max(0, len(lines)-10):]
	for i, l := range lines {
		if len(l) > 300 {
			lines[i] = l[:300] + "…"
		}
	}
	return strings.Join(lines, "\n")
}

// fourLetter sends a four-letter word to addr and returns the answer.
func fourLetter(ctx context.Context, addr, word string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	dl, _ := ctx.Deadline()
	_ = conn.SetDeadline(dl)
	if _, err := io.WriteString(conn, word); err != nil {
		return "", fmt.Errorf("%s %s: %w", word, addr, err)
	}
	b, err := io.ReadAll(conn)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", word, addr, err)
	}
	return string(b), nil
}

// field is the value of srvr's "key: value" line ("" and false: none).
func field(out, key string) (string, bool) {
	for l := range strings.SplitSeq(out, "\n") {
		if v, ok := strings.CutPrefix(l, key+":"); ok {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// Mode is the member's srvr Mode line: leader, follower, standalone (or
// observer); an error when it does not answer or does not serve (while it
// looks for a leader).
func (m *Member) Mode(ctx context.Context) (string, error) {
	out, err := fourLetter(ctx, m.Addr(), "srvr")
	if err != nil {
		return "", fmt.Errorf("zookeeper member %s: %w", m.Name, err)
	}
	mode, ok := field(out, "Mode")
	if !ok {
		return "", fmt.Errorf("zookeeper member %s does not serve: %s", m.Name, strings.TrimSpace(out))
	}
	return mode, nil
}

// HeldKeys counts the ephemeral znodes in the member's own copy of the
// tree (mntr's zk_ephemerals_count: held locks and waiting places); -1
// when it does not answer.
func (m *Member) HeldKeys(ctx context.Context) int {
	out, err := fourLetter(ctx, m.Addr(), "mntr")
	if err != nil {
		return -1
	}
	if v, ok := mntrField(out, "zk_ephemerals_count"); ok {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return -1
}

// mntrField is one of mntr's "key<TAB>value" lines' value.
func mntrField(out, key string) (string, bool) {
	for l := range strings.SplitSeq(out, "\n") {
		if v, ok := strings.CutPrefix(l, key+"\t"); ok {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// version is the member's srvr version ("3.8.0").
func (m *Member) version(ctx context.Context) (string, error) {
	out, err := fourLetter(ctx, m.Addr(), "srvr")
	if err != nil {
		return "", fmt.Errorf("zookeeper member %s: %w", m.Name, err)
	}
	v, ok := field(out, "Zookeeper version")
	if !ok {
		return "", fmt.Errorf("zookeeper member %s: no version in srvr: %s", m.Name, strings.TrimSpace(out))
	}
	v, _, _ = strings.Cut(v, ",")
	v, _, _ = strings.Cut(v, "-")
	return v, nil
}

// Servers are the members' client addresses ("127.0.0.1:port").
func (c *Cluster) Servers() []string {
	var out []string
	for _, m := range c.members {
		out = append(out, m.Addr())
	}
	return out
}

// Members are the ensemble's members.
func (c *Cluster) Members() []*Member { return c.members }

// ServerVersion is the members' ZooKeeper version and their JVM
// ("zookeeper 3.8.0 on openjdk 17.0.15").
func (c *Cluster) ServerVersion() string {
	if c.jvm == "" {
		return "zookeeper " + c.version
	}
	return "zookeeper " + c.version + " on " + c.jvm
}

// TickTime is the members' tickTime.
func (c *Cluster) TickTime() time.Duration { return c.tick }

// SessionTimeouts are the members' minSessionTimeout and
// maxSessionTimeout: a session timeout asked outside is clamped to them.
func (c *Cluster) SessionTimeouts() (lo, hi time.Duration) { return c.minSess, c.maxSess }

// FsyncText says how the members write their transaction log.
func (c *Cluster) FsyncText() string {
	if c.opt.ForceSync {
		return "forceSync=yes"
	}
	return "forceSync=no"
}

// Pids are the members' running processes.
func (c *Cluster) Pids() []int { return proc.Pids(c.members) }

// Leader is the index in Members of the member whose srvr Mode is leader
// (or standalone), asked of the running members that are not paused.
func (c *Cluster) Leader(ctx context.Context) (int, error) {
	var last error
	for i, m := range c.members {
		if !m.Running() || m.proc.Paused() {
			continue
		}
		mode, err := m.Mode(ctx)
		switch {
		case err != nil:
			last = err
		case mode == "leader" || mode == "standalone":
			return i, nil
		}
	}
	if last == nil {
		return -1, errors.New("zookeeper: no member says it leads")
	}
	return -1, fmt.Errorf("zookeeper: no member says it leads (%v)", last)
}

// Stop stops every member and removes the ensemble's directory.
func (c *Cluster) Stop() error {
	errs := proc.StopAll(c.members)
	if c.links != nil {
		c.links.net.Close()
	}
	return errors.Join(append(errs, os.RemoveAll(c.dir))...)
}

// Addr is the member's client address ("127.0.0.1:port").
func (m *Member) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(m.ClientPort)) }

// Pid is the member's process (0: not running).
func (m *Member) Pid() int { return m.proc.Pid() }

// Running says whether the member's process is up (paused counts as up).
func (m *Member) Running() bool { return m.proc.Running() }

// Pause stops the member (SIGSTOP): it neither answers clients nor its
// peers until Resume.
func (m *Member) Pause() error { return m.proc.Pause() }

// Resume continues a paused member (SIGCONT).
func (m *Member) Resume() error { return m.proc.Resume() }

// Kill is kill -9 of the member's process, reaped.
func (m *Member) Kill() error { return m.proc.Kill() }

// Restart starts a stopped or killed member again with its zoo.cfg and
// data dir (it rejoins the ensemble with what it had logged) and waits
// until it serves again. A running member is left as it is.
func (m *Member) Restart(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, restartWait)
	defer cancel()
	switch err := m.proc.Restart(ctx, m.serving); {
	case errors.Is(err, proc.ErrExited):
		return m.exitedError()
	case err != nil:
		return fmt.Errorf("restart: %w; log tail:\n%s", err, tail(m.logPath))
	}
	return nil
}

// Stop stops the member by its pid: SIGTERM, SIGKILL after stopGrace;
// reaped either way.
func (m *Member) Stop() error { return m.proc.Stop() }

// PeerLinks are the member links of a cluster with PeerVia: cut and rejoined through
// its MemberNet, proven cut by the member's srvr.
type PeerLinks struct {
	c      *Cluster
	net    PeerNet
	mu     sync.Mutex
	before map[int]string // each member's mode when last cut
}

// proxyLinks puts the members' links behind a MemberNet (port 0: quorum,
// 1: election) that rewrites the election InitialMessage.
func (c *Cluster) proxyLinks() error {
	listen := make([][]string, len(c.members))
	for i, m := range c.members {
		listen[i] = m.peerAddrs()
	}
	n, err := c.opt.PeerVia(listen, initialMessage)
	if err != nil {
		return err
	}
	c.links = &PeerLinks{c: c, net: n, before: map[int]string{}}
	return nil
}

// initialMessage is the Hello of ZooKeeper's election links. A
// member opens one with an InitialMessage (QuorumCnxManager's
// startConnection: protocol version < 0, sid, length, its own election
// "host:port"); a peer with a higher sid drops that connection and dials
// the address in it back (handleConnection), which would go around the
// proxies: it is rewritten to the proxy that peer reaches the member
// through. An old-protocol opening (the sid alone, >= 0) names none.
func initialMessage(head []byte, own, via string) ([]byte, bool) {
	if len(head) < 8 {
		return nil, true
	}
	if int64(binary.BigEndian.Uint64(head)) >= 0 {
		return head, false
	}
	if len(head) < 20 {
		return nil, true
	}
	n := int(binary.BigEndian.Uint32(head[16:]))
	switch {
	case n <= 0 || n > 2048: // QuorumCnxManager.maxBuffer: refused anyway
		return head, false
	case len(head) < 20+n:
		return nil, true
	case string(head[20:20+n]) != own:
		return head, false
	}
	out := binary.BigEndian.AppendUint32(append([]byte(nil), head[:16]...), uint32(len(via)))
	return append(append(out, via...), head[20+n:]...), false
}

// Links are the members' links (nil without PeerVia), members by their
// index in Members.
func (c *Cluster) Links() *PeerLinks { return c.links }

// Isolate notes each member's mode (for Proof), then cuts its links.
func (l *PeerLinks) Isolate(members []int) error {
	for _, i := range members {
		if i >= 0 && i < len(l.c.members) { // else the MemberNet says why
			l.remember(i)
		}
	}
	return l.net.Isolate(members)
}

func (l *PeerLinks) remember(i int) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	mode, err := l.c.members[i].Mode(ctx)
	if err != nil {
		mode = "not serving"
	}
	l.mu.Lock()
	l.before[i] = mode
	l.mu.Unlock()
}

func (l *PeerLinks) Rejoin(members []int) error { return l.net.Rejoin(members) }

// Proof asks member i for srvr: cut off from a quorum, a member neither
// leads nor follows (it gives its leader or followers up after syncLimit)
// and says it does not serve. One that still serves as follower reaches
// its leader: no proof.
func (l *PeerLinks) Proof(ctx context.Context, i int) (string, bool) {
	if i < 0 || i >= len(l.c.members) {
		return fmt.Sprintf("server %d does not exist", i), false
	}
	m := l.c.members[i]
	l.mu.Lock()
	name := fmt.Sprintf("server %d (%s, %s before the cut)", i, m.Name, l.before[i])
	l.mu.Unlock()
	out, err := fourLetter(ctx, m.Addr(), "srvr")
	if err != nil {
		return fmt.Sprintf("%s does not answer: %v", name, err), false
	}
	if mode, ok := field(out, "Mode"); ok {
		return fmt.Sprintf("%s still serves as %s", name, mode), false
	}
	return fmt.Sprintf("%s not serving: %s", name, strings.TrimSpace(out)), true
}
