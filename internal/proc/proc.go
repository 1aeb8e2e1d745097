// Package proc is one local server process lockbench started (an etcd or
// ZooKeeper member, a postmaster, a redis-server): its runs, one at a time,
// each made by the service's Spawn, and the faults and stops done to it,
// always by its own pid (or process group), never by name.
package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// ErrRunning is Start's error while a run is up: a second one would fight
// the first for its ports and data directory.
var ErrRunning = errors.New("still running")

// ErrNotRunning is Pause's and Resume's error without a run.
var ErrNotRunning = errors.New("not running")

// ErrExited is Await's error when the run exits before it is ready.
var ErrExited = errors.New("exited")

const (
	defaultGrace = time.Second
	defaultPoll  = 100 * time.Millisecond
	// reapTimeout bounds the wait after SIGKILL: a process the kernel does
	// not end by then is stuck (in D state), reported rather than waited on.
	reapTimeout = 5 * time.Second
	// stateWait bounds Pause's and Resume's wait for the kernel to show the
	// new state.
	stateWait = time.Second
)

// Options say how to run a service's process.
type Options struct {
	Name string // in errors: "etcd member m0"
	// Spawn makes the command of a new run (binary, flags, dir, env, and
	// a Credential in SysProcAttr if it needs one). It is called at every
	// Start, so it may read what changed since (a new port).
	Spawn func() *exec.Cmd
	// Output, if set, is the file the run's stdout and stderr are appended
	// to; else they are discarded.
	Output string
	// Tree makes Pause, Resume and Kill signal every process under the
	// run too, not its pid alone: a postmaster's backends must stop, go on
	// and die with it (killed alone, it would leave them serving on shared
	// memory a moment). Not its process group: each backend has its own.
	Tree bool
	// StopSignals are Stop's graceful signals, sent to the pid in turn,
	// each given Grace to end the run; SIGKILL follows the last. Nil:
	// SIGTERM.
	StopSignals []syscall.Signal
	Grace       time.Duration // 0: a second
	Poll        time.Duration // Await's interval; 0: 100 ms
}

// Process is a service's local server process: the current run, or the
// last one once it has exited.
type Process struct {
	opt Options
	// ops makes state changes (Start, Kill, Stop, Pause, Resume) one at a
	// time: a fault's Kill may race the whole set's Stop.
	ops sync.Mutex
	// mu guards run and paused only, held briefly, so that Pid and Running
	// do not wait out a Stop's grace.
	mu     sync.Mutex
	run    *run
	paused bool
}

// run is one start of the command; done is closed once it is reaped.
type run struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func (r *run) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// New is a process of the service, not started yet.
func New(opt Options) *Process {
	if opt.Grace == 0 {
		opt.Grace = defaultGrace
	}
	if opt.Poll == 0 {
		opt.Poll = defaultPoll
	}
	if opt.StopSignals == nil {
		opt.StopSignals = []syscall.Signal{syscall.SIGTERM}
	}
	return &Process{opt: opt}
}

// Start begins a new run of Spawn's command and returns its pid.
func (p *Process) Start() (int, error) {
	p.ops.Lock()
	defer p.ops.Unlock()
	if p.current() != nil {
		return 0, fmt.Errorf("%s: %w", p.opt.Name, ErrRunning)
	}
	cmd := p.opt.Spawn()
	ownGroup(cmd)
	if err := p.startCmd(cmd); err != nil {
		return 0, fmt.Errorf("start %s: %w", p.opt.Name, err)
	}
	r := &run{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(r.done) }() // reaped at once: Pid is 0 as soon as it exits
	p.mu.Lock()
	p.run, p.paused = r, false
	p.mu.Unlock()
	return cmd.Process.Pid, nil
}

// ownGroup puts the run in a process group of its own, so that a
// terminal's Ctrl-C reaches only lockbench (which then stops it), and
// keeps Spawn's own attributes (a Credential).
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	dieWithParent(cmd.SysProcAttr)
}

// startCmd starts cmd with its output appended to Output. A file, not a
// pipe, so that Wait never waits on a child's child that inherited it.
func (p *Process) startCmd(cmd *exec.Cmd) error {
	if p.opt.Output == "" {
		return cmd.Start()
	}
	out, err := os.OpenFile(p.opt.Output, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer out.Close() // the child has its own copy
	cmd.Stdout, cmd.Stderr = out, out
	return cmd.Start()
}

// Restart starts a run unless one is up (then it does nothing) and waits
// until ready passes (see Await).
func (p *Process) Restart(ctx context.Context, ready func(context.Context) error) error {
	if _, err := p.Start(); errors.Is(err, ErrRunning) {
		return nil
	} else if err != nil {
		return err
	}
	return p.Await(ctx, ready)
}

// Await polls ready every Poll until it passes; an error wrapping
// ErrExited when the last run exits first, or ctx's when it ends.
func (p *Process) Await(ctx context.Context, ready func(context.Context) error) error {
	p.mu.Lock()
	r := p.run
	p.mu.Unlock()
	if r == nil {
		return fmt.Errorf("%s: %w", p.opt.Name, ErrNotRunning)
	}
	for {
		err := ready(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-r.done:
			return fmt.Errorf("%s %w (%s) before it was ready", p.opt.Name, ErrExited, r.cmd.ProcessState)
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (last: %v)", p.opt.Name, ctx.Err(), err)
		case <-time.After(p.opt.Poll):
		}
	}
}

// current is the run that is up (nil: none).
func (p *Process) current() *run {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run == nil || p.run.exited() {
		return nil
	}
	return p.run
}

// Pid is the running process' (0: not running: a reaped pid may already
// be another process').
func (p *Process) Pid() int {
	if r := p.current(); r != nil {
		return r.cmd.Process.Pid
	}
	return 0
}

// Running says whether a run is up (a paused one is).
func (p *Process) Running() bool { return p.current() != nil }

// Paused says whether the run is up and paused.
func (p *Process) Paused() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused && p.run != nil && !p.run.exited()
}

// ExitState is how the last run ended ("exit status 1", "signal:
// killed"); "" while it runs or before the first.
func (p *Process) ExitState() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run == nil || !p.run.exited() {
		return ""
	}
	return p.run.cmd.ProcessState.String()
}
