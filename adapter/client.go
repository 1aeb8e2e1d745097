package adapter

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/procfs"
)

// Options say how to run an adapter.
type Options struct {
	Argv  []string
	Env   []string
	Hello Hello
	// Stderr hears the adapter's stderr (its logs); nil: only its last
	// lines are kept, for the error that says why it stopped.
	Stderr io.Writer
	// HelloTimeout bounds the wait for hello_ok (0: 10 s); ReplyBound is
	// how long a request may go unanswered past the time it may take (an
	// acquire: the hello's wait) before the adapter counts as hung (0: 10 s).
	HelloTimeout time.Duration
	ReplyBound   time.Duration
	// Transcript, when set, gets every line each way ("> " sent, "< "
	// received), as docs/adapters.md shows a session.
	Transcript io.Writer
}

const (
	defaultHelloTimeout = 10 * time.Second
	defaultReplyBound   = 10 * time.Second
	maxLine             = 1 << 20
)

// Client is an adapter process as a lock.Locker (and lock.Extender): one
// request per call, many in flight, replies matched by id. Times are
// lockbench's own: a request's send and its reply's receipt.
type Client struct {
	opt    Options
	cmd    *exec.Cmd // nil: a test's in-memory pipes
	stdin  io.WriteCloser
	stdout io.ReadCloser
	w      *lineWriter
	tail   *stderrTail
	hello  HelloOK

	nextID  atomic.Int64
	mu      sync.Mutex
	pending map[int64]*request
	held    map[string]*heldLock // by token
	gone    [2]map[string]bool   // tokens released lately, two generations
	err     error                // the first fatal error
	failed  chan struct{}        // closed with err
	exited  chan struct{}        // closed once the process was reaped
	closing atomic.Bool
	transMu sync.Mutex
	t0      time.Time // the transcript's zero

	lateGrants, indefinite, cancels atomic.Int64
}

// request is one request in flight.
type request struct {
	id        int64
	typ, key  string
	sent      time.Time
	wait      time.Duration // how long it may take before ReplyBound starts
	reply     chan reply    // buffered: the reader never blocks
	abandoned bool          // lockbench stopped waiting (cancelled)
	internal  bool          // lockbench's own (a late grant's release): nobody waits
}

// requests are the Locker's requests, reused with their reply channel
// once answered: two allocations fewer a request.
var requests = sync.Pool{New: func() any { return &request{reply: make(chan reply, 1)} }}

func newRequest(typ, key string, wait time.Duration) *request {
	req := requests.Get().(*request)
	*req = request{typ: typ, key: key, wait: wait, reply: req.reply}
	return req
}

// recycle gives back a request whose reply its caller took: nothing else
// holds it then (deliver removed it from pending before it replied).
func recycle(req *request) { requests.Put(req) }

type reply struct {
	m  Msg
	at time.Time
}

// heldLock is a granted lock until its release: its lost notice.
type heldLock struct {
	key      string
	lost     chan struct{}
	lostOnce sync.Once
	until    atomic.Int64 // Unix ns: its validity as last renewed (auto_extend)
}

// BoundEnv, when set to a duration, replaces both defaults (hello's
// bound and the reply bound): a test's adapters hang for less.
const BoundEnv = "LOCKBENCH_ADAPTER_REPLY_BOUND"

func boundFromEnv(def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(BoundEnv)); err == nil && d > 0 {
		return d
	}
	return def
}

// Start runs the adapter, says hello and waits for hello_ok.
func Start(ctx context.Context, opt Options) (*Client, error) {
	c := newClient(opt)
	cmd, in, out, err := startProcess(opt.Argv, opt.Env, c.tail)
	if err != nil {
		return nil, err
	}
	c.cmd = cmd
	return c.run(ctx, in, out)
}

func newClient(opt Options) *Client {
	if opt.HelloTimeout <= 0 {
		opt.HelloTimeout = boundFromEnv(defaultHelloTimeout)
	}
	if opt.ReplyBound <= 0 {
		opt.ReplyBound = boundFromEnv(defaultReplyBound)
	}
	return &Client{opt: opt, tail: &stderrTail{w: opt.Stderr}, pending: map[int64]*request{},
		held: map[string]*heldLock{}, gone: [2]map[string]bool{{}, {}}, failed: make(chan struct{}), exited: make(chan struct{}), t0: time.Now()}
}

// run speaks the protocol on in and out (the adapter's stdin and stdout):
// the reader and the watch start, hello is said.
func (c *Client) run(ctx context.Context, in io.WriteCloser, out io.ReadCloser) (*Client, error) {
	c.stdin, c.stdout = in, out
	c.w = newLineWriter(in, c.trace)
	go c.read(out)
	go c.watch()
	if err := c.sayHello(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// sayHello sends hello and takes hello_ok, within HelloTimeout.
func (c *Client) sayHello(ctx context.Context) error {
	id := c.nextID.Add(1)
	m, err := c.opt.Hello.msg(id)
	if err != nil {
		return err
	}
	req := &request{id: id, typ: TypeHello, wait: c.opt.HelloTimeout, reply: make(chan reply, 1)}
	if err := c.sendMsg(req, m); err != nil {
		return err
	}
	t := time.NewTimer(c.opt.HelloTimeout)
	defer t.Stop()
	select {
	case r := <-req.reply:
		return c.takeHello(r.m)
	case <-c.failed:
		return c.Err()
	case <-t.C:
		return fmt.Errorf("adapter %s: no hello_ok within %v (its last stderr lines: %s)", c.name(), c.opt.HelloTimeout, c.tail)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Client) takeHello(m Msg) error {
	switch {
	case m.Type != TypeHelloOK:
		return fmt.Errorf("adapter %s: answered hello with %q, not hello_ok (reason %q)", c.name(), m.Type, m.Reason)
	case m.Protocol != ProtocolVersion:
		return fmt.Errorf("adapter %s: hello_ok protocol %d; lockbench speaks %d", c.name(), m.Protocol, ProtocolVersion)
	case m.Library == nil || m.Library.Name == "" || m.Library.Version == "":
		return fmt.Errorf("adapter %s: hello_ok names no library (library: {name, version})", c.name())
	case m.Validity == nil || !validMethod(m.Validity.Method):
		return fmt.Errorf("adapter %s: hello_ok's validity.method is missing or unknown; use drift, ttl or session", c.name())
	}
	c.hello = HelloOK{Library: *m.Library, Validity: *m.Validity}
	if m.Capability != nil {
		c.hello.Capabilities = *m.Capability
	}
	return nil
}

func validMethod(s string) bool { return s == "drift" || s == "ttl" || s == "session" }

// Hello is what the adapter said of its library.
func (c *Client) Hello() HelloOK { return c.hello }

// name is the adapter as errors name it: its command, quoted when it has
// arguments ("node adapters/node-redlock/adapter.js", not "node"), its
// start when long.
func (c *Client) name() string {
	if len(c.opt.Argv) == 1 {
		return c.opt.Argv[0]
	}
	cmd := strings.Join(c.opt.Argv, " ")
	if len(cmd) > 120 {
		cmd = cmd[:120] + "…"
	}
	return "'" + cmd + "'"
}

// Pid is the adapter's process.
func (c *Client) Pid() int { return c.cmd.Process.Pid }

// CPU is the adapter process's user+system CPU so far, all its threads
// (-1: not read, or it has exited). A cell reads it from /proc at its
// window's marks, not from the rusage of its exit: the adapter lives
// across hello, the warm-up and the clean-up, which that would count.
// /proc counts in clock ticks (10 ms), each reading's bound of error.
// Processes the adapter starts are not read: it execs its runtime.
func (c *Client) CPU() time.Duration {
	if c.cmd == nil || c.hasExited() {
		return -1
	}
	p, err := procfs.NewProc(c.Pid())
	if err != nil {
		return -1
	}
	st, err := p.Stat()
	if err != nil || c.hasExited() { // reaped meanwhile: the pid may be another's
		return -1
	}
	return time.Duration(st.CPUTime() * float64(time.Second))
}

func (c *Client) hasExited() bool {
	select {
	case <-c.exited:
		return true
	default:
		return false
	}
}

// Err is why the adapter broke for good (nil while it works): it crashed,
// broke the protocol or stopped answering. The cell fails with it.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// LateGrants are grants that came after lockbench stopped waiting: each
// was held (by nobody) and released at once.
func (c *Client) LateGrants() int64 { return c.lateGrants.Load() }

// Indefinite are failed requests the adapter said may have happened.
func (c *Client) Indefinite() int64 { return c.indefinite.Load() }

// Cancels are the requests lockbench gave up on.
func (c *Client) Cancels() int64 { return c.cancels.Load() }

// fail breaks the client for good: every waiter hears err, the adapter
// is stopped by its pid.
func (c *Client) fail(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	close(c.failed)
	c.mu.Unlock()
	c.kill()
}

func (c *Client) kill() {
	switch {
	case c.hasExited():
	case c.cmd == nil:
		_ = c.stdout.Close()
	default:
		_ = c.cmd.Process.Kill()
	}
}

// Close ends the adapter: its stdin closes (it should exit), then after a
// grace it is killed by its pid.
func (c *Client) Close() {
	if c.closing.Swap(true) {
		<-c.exited
		return
	}
	_ = c.stdin.Close()
	select {
	case <-c.exited:
	case <-time.After(2 * time.Second):
		c.kill()
		<-c.exited
	}
	c.fail(errClosed)
}

var errClosed = errors.New("adapter: closed")

// send registers req and queues m; an error: the client is broken.
func (c *Client) send(req *request, m Msg) error {
	req.id = c.nextID.Add(1)
	m.ID = req.id
	return c.sendMsg(req, m)
}

func (c *Client) sendMsg(req *request, m Msg) error {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return c.err
	}
	req.sent = time.Now()
	if req.reply != nil || req.internal {
		c.pending[req.id] = req
	}
	c.mu.Unlock()
	if err := c.w.send(&m); err != nil {
		// Its stdin broke: it exited (the reader says how) or was closed.
		c.mu.Lock()
		delete(c.pending, req.id)
		c.mu.Unlock()
		if err := c.Err(); err != nil {
			return err
		}
		return fmt.Errorf("adapter %s: writing its stdin: %v", c.name(), err)
	}
	return nil
}

func (c *Client) trace(dir string, line []byte) {
	if c.opt.Transcript == nil {
		return
	}
	c.transMu.Lock()
	defer c.transMu.Unlock()
	fmt.Fprintf(c.opt.Transcript, "%8.1fms %s%s\n", float64(time.Since(c.t0).Microseconds())/1000, dir, strings.TrimRight(string(line), "\n"))
}

// read takes the adapter's lines until its stdout closes, then reaps it:
// an exit lockbench did not ask for breaks the client with its status
// and last stderr lines.
func (c *Client) read(out io.Reader) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		c.handle(sc.Bytes(), time.Now())
	}
	if err := sc.Err(); err != nil {
		c.fail(fmt.Errorf("adapter %s: reading its stdout: %v", c.name(), err))
	}
	_ = c.stdout.Close()
	status := c.wait()
	close(c.exited)
	if !c.closing.Load() {
		c.fail(fmt.Errorf("adapter %s exited (%s); its last stderr lines: %s", c.name(), exitStatus(status), c.tail))
	}
}

// wait reaps the adapter; in-memory pipes have no process to reap.
func (c *Client) wait() error {
	if c.cmd == nil {
		return nil
	}
	return c.cmd.Wait()
}

func exitStatus(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// watch breaks the client when a request goes unanswered past its time
// and the bound: the adapter hangs.
func (c *Client) watch() {
	t := time.NewTicker(c.opt.ReplyBound / 20)
	defer t.Stop()
	for {
		select {
		case <-c.failed:
			return
		case now := <-t.C:
			if req := c.overdue(now); req != nil {
				c.fail(fmt.Errorf("adapter %s stopped answering: no reply to %s %d (key %q) for %v; its last stderr lines: %s",
					c.name(), req.typ, req.id, req.key, now.Sub(req.sent).Round(time.Millisecond), c.tail))
			}
		}
	}
}

func (c *Client) overdue(now time.Time) *request {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, req := range c.pending {
		if req.typ != TypeHello && now.Sub(req.sent) > req.wait+c.opt.ReplyBound {
			return req
		}
	}
	return nil
}
