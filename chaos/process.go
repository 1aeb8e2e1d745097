package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"lockbench/internal/proc"
	"lockbench/results"
)

// ClientArg, after `lockbench chaos`, makes the process a client of a
// running fault cell (started by lockbench itself, not by users).
const ClientArg = "__client"

// ClientMain is the entry point of a client process (lockbench starts
// itself as one): it reads its ClientConfig from --config, connects, says
// "ready" on stdout, waits for "start UNIXNANO" on stdin, runs, and writes
// its ClientResult to --result. "stop" on stdin, stdin closing, SIGTERM or
// SIGINT end the run early; the result is still written.
func ClientMain(args []string) int {
	fs := flag.NewFlagSet("chaos client", flag.ContinueOnError)
	cfgPath := fs.String("config", "", "client config (JSON)")
	resPath := fs.String("result", "", "where to write the result (JSON)")
	if err := fs.Parse(args); err != nil || *cfgPath == "" || *resPath == "" {
		fmt.Fprintln(os.Stderr, "chaos client: usage: --config FILE --result FILE")
		return 2
	}
	cfg, err := readClientConfig(*cfgPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos client:", err)
		return 1
	}
	// The parent stops us; a terminal's Ctrl-C does not reach this process
	// group, but a direct signal does.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	res, code := serveClient(cfg, sigs)
	err = results.WriteFileAtomic(*resPath, func(w io.Writer) error { return json.NewEncoder(w).Encode(res) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos client:", err)
		return 1
	}
	return code
}

func readClientConfig(path string) (ClientConfig, error) {
	var cfg ClientConfig
	b, err := os.ReadFile(path)
	if err != nil {
		return cfg, err
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return cfg, fmt.Errorf("config: %w", err)
	}
	return cfg, nil
}

// serveClient connects, says "ready", waits for its start and runs,
// streaming its counts on stdout; code 1: it could not connect.
func serveClient(cfg ClientConfig, sigs <-chan os.Signal) (res ClientResult, code int) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	c, err := newClient(ctx, cfg, Local{})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos client:", err)
		return ClientResult{Index: cfg.Index, Err: err.Error()}, 1
	}
	defer c.Close()
	// Live metrics: the parent reads these counts off stdout.
	tl := newTally(servers(c.lk))
	c.obs = tl
	fmt.Println("ready")
	in := bufio.NewReader(os.Stdin)
	line, err := in.ReadString('\n')
	ns, ok := strings.CutPrefix(strings.TrimSpace(line), "start ")
	t, perr := strconv.ParseInt(ns, 10, 64)
	if err != nil || !ok || perr != nil {
		return ClientResult{Index: cfg.Index, Interrupted: true}, 0
	}
	go stopOnRequest(c, in, sigs)
	stopStream, streamed := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(streamed)
		tl.stream(os.Stdout, stopStream)
	}()
	res = c.run(time.Unix(0, t))
	close(stopStream)
	<-streamed
	return res, 0
}

// stopOnRequest stops the client on "stop" or the end of stdin, or on a
// signal.
func stopOnRequest(c *client, in *bufio.Reader, sigs <-chan os.Signal) {
	go func() {
		<-sigs
		c.Stop()
	}()
	for {
		l, err := in.ReadString('\n')
		if err != nil || strings.TrimSpace(l) == "stop" {
			c.Stop()
			return
		}
	}
}

// procClient is a client process seen from the parent.
type procClient struct {
	idx        int
	cmd        *exec.Cmd
	stdin      io.WriteCloser
	ready      chan error
	exited     chan struct{}
	waitErr    error
	resultPath string
	stderrPath string
}

// startProcClient starts argv plus --config/--result in its own process
// group (Ctrl-C reaches only the parent, which stops it) and with a
// parent-death signal, so it never outlives lockbench.
// obs (nil: none) hears what the process counts as it runs.
func startProcClient(argv, env []string, idx int, cfgPath, resultPath, stderrPath string, obs Observer) (*procClient, error) {
	if len(argv) == 0 {
		return nil, errors.New("client_mode processes: no command to start a client process with")
	}
	errf, err := os.Create(stderrPath)
	if err != nil {
		return nil, err
	}
	defer errf.Close()
	cmd := exec.Command(argv[0], append(append([]string(nil), argv[1:]...), "--config", cfgPath, "--result", resultPath)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = errf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("client %d: start %s: %w", idx, argv[0], err)
	}
	p := &procClient{idx: idx, cmd: cmd, stdin: stdin, ready: make(chan error, 1), exited: make(chan struct{}),
		resultPath: resultPath, stderrPath: stderrPath}
	go func() {
		r := bufio.NewReader(stdout)
		line, err := r.ReadString('\n')
		if err == nil && strings.TrimSpace(line) != "ready" {
			err = fmt.Errorf("said %q, not ready", strings.TrimSpace(line))
		}
		p.ready <- err
		readCounts(r, obs)
		// Wait closes stdout: only once the last counts were read.
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// pid of the client process.
func (p *procClient) Pid() int { return p.cmd.Process.Pid }

func (p *procClient) Done() <-chan struct{} { return p.exited }

func (p *procClient) WaitReady(ctx context.Context) error {
	select {
	case err := <-p.ready:
		if err != nil {
			<-p.exited
			return fmt.Errorf("client %d (pid %d) did not start: %v; %s", p.idx, p.Pid(), err, p.stderrTail())
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("client %d (pid %d) not ready: %w", p.idx, p.Pid(), ctx.Err())
	}
}

func (p *procClient) Start(t0 time.Time) error {
	_, err := fmt.Fprintf(p.stdin, "start %d\n", t0.UnixNano())
	return err
}

// Pause stops the whole process (SIGSTOP), as a long GC pause or a VM
// stall would, and waits until the kernel shows it stopped. The signal
// goes to its process group (it leads its own, Setpgid): an external
// client's adapter, its child, stops with it.
func (p *procClient) Pause() error {
	if err := syscall.Kill(-p.Pid(), syscall.SIGSTOP); err != nil {
		return fmt.Errorf("pause client %d (pid %d): %w", p.idx, p.Pid(), err)
	}
	proc.WaitState(p.Pid(), true, time.Second)
	return nil
}

// Resume continues it (SIGCONT).
func (p *procClient) Resume() error {
	if err := syscall.Kill(-p.Pid(), syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("resume client %d (pid %d): %w", p.idx, p.Pid(), err)
	}
	return nil
}

// Stop asks the client to end its run early and write its result.
func (p *procClient) Stop() {
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	_, _ = io.WriteString(p.stdin, "stop\n")
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
}

// close ends the process at once and reaps it (no-op once reaped).
func (p *procClient) Close() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// result waits for the process to end (killing it after limit) and reads
// what it wrote.
func (p *procClient) Result(limit time.Duration) (ClientResult, error) {
	select {
	case <-p.exited:
	case <-time.After(limit):
		p.Close()
		return ClientResult{Index: p.idx}, fmt.Errorf("client %d (pid %d) did not finish within %v; killed", p.idx, p.Pid(), limit)
	}
	p.stdin.Close()
	b, err := os.ReadFile(p.resultPath)
	if err != nil {
		return ClientResult{Index: p.idx}, fmt.Errorf("client %d (pid %d) wrote no result (%v); %s", p.idx, p.Pid(), p.waitErr, p.stderrTail())
	}
	var r ClientResult
	if err := json.Unmarshal(b, &r); err != nil {
		return ClientResult{Index: p.idx}, fmt.Errorf("client %d result: %w", p.idx, err)
	}
	if p.waitErr != nil && r.Err == "" {
		r.Err = fmt.Sprintf("exit: %v; %s", p.waitErr, p.stderrTail())
	}
	return r, nil
}

func (p *procClient) stderrTail() string {
	b, _ := os.ReadFile(p.stderrPath)
	s := strings.TrimSpace(string(b))
	if len(s) > 1500 {
		s = "…" + s[len(s)-1500:]
	}
	if s == "" {
		return "no stderr output"
	}
	return "stderr: " + s
}

// StartProcess starts a lockbench process (argv, with env added) as
// client cfg.Index, its config, result and stderr files in cfg.LogDir; it
// reports its counts to obs (nil: none).
func StartProcess(argv, env []string, cfg ClientConfig, obs Observer) (Client, error) {
	b, _ := json.Marshal(cfg)
	file := func(suffix string) string {
		return filepath.Join(cfg.LogDir, fmt.Sprintf("client-%d.%s", cfg.Index, suffix))
	}
	if err := os.WriteFile(file("json"), b, 0o600); err != nil {
		return nil, err
	}
	p, err := startProcClient(argv, env, cfg.Index, file("json"), file("result.json"), file("stderr"), obs)
	if err != nil {
		return nil, err
	}
	return p, nil
}
