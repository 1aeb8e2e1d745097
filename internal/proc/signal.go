package proc

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Kill is kill -9 of the run (and every process under it with Tree),
// reaped: a crash. It does nothing without a run.
func (p *Process) Kill() error {
	p.ops.Lock()
	defer p.ops.Unlock()
	if r := p.current(); r != nil {
		return p.kill(r)
	}
	return nil
}

func (p *Process) kill(r *run) error {
	if err := p.signal(r, syscall.SIGKILL, p.opt.Tree); err != nil {
		return fmt.Errorf("kill %s (pid %d): %w", p.opt.Name, r.cmd.Process.Pid, err)
	}
	select {
	case <-r.done:
		return nil
	case <-time.After(reapTimeout):
		return fmt.Errorf("%s (pid %d) not gone %v after SIGKILL", p.opt.Name, r.cmd.Process.Pid, reapTimeout)
	}
}

// Stop ends the run gracefully, by its pid: each of StopSignals, Grace
// apart, then SIGKILL. It does nothing without a run.
func (p *Process) Stop() error {
	p.ops.Lock()
	defer p.ops.Unlock()
	r := p.current()
	if r == nil {
		return nil
	}
	for i, sig := range p.opt.StopSignals {
		_ = p.signal(r, sig, false) // an error: it has gone, which done says
		if i == 0 {
			// A paused process acts on no signal but SIGKILL until it is
			// continued, and then on the one already sent before it serves.
			_ = p.signal(r, syscall.SIGCONT, p.opt.Tree)
		}
		select {
		case <-r.done:
			return nil
		case <-time.After(p.opt.Grace):
		}
	}
	return p.kill(r)
}

// Pause stops the run (SIGSTOP; what is under it too with Tree) and
// returns once the kernel shows it stopped, so that nothing sent after is served.
func (p *Process) Pause() error { return p.pause(syscall.SIGSTOP, true) }

// Resume continues a paused run (SIGCONT).
func (p *Process) Resume() error { return p.pause(syscall.SIGCONT, false) }

func (p *Process) pause(sig syscall.Signal, paused bool) error {
	p.ops.Lock()
	defer p.ops.Unlock()
	r := p.current()
	if r == nil {
		return fmt.Errorf("%s: %w", p.opt.Name, ErrNotRunning)
	}
	pid := r.cmd.Process.Pid
	if err := p.signal(r, sig, p.opt.Tree); err != nil {
		return fmt.Errorf("signal %s (pid %d): %w", p.opt.Name, pid, err)
	}
	p.mu.Lock()
	p.paused = paused
	p.mu.Unlock()
	WaitState(pid, paused, stateWait)
	return nil
}

// signal sends sig to the run's pid, and with tree to every process under
// it. An exited run has nothing to signal; its pid may be another's by now.
func (p *Process) signal(r *run, sig syscall.Signal, tree bool) error {
	var err error
	switch {
	case r.exited():
		err = os.ErrProcessDone
	case tree:
		if err = signalTree(r.cmd.Process.Pid, sig); errors.Is(err, syscall.ESRCH) {
			err = os.ErrProcessDone
		}
	default:
		err = r.cmd.Process.Signal(sig)
	}
	if sig == syscall.SIGKILL && errors.Is(err, os.ErrProcessDone) {
		return nil // gone already: what SIGKILL wanted
	}
	return err
}

// signalTree signals the processes under pid, then pid. Unless it
// continues them, pid is stopped first, so that it forks no child the list
// misses; a stop returns once they all show it, a kill once they are gone.
func signalTree(pid int, sig syscall.Signal) error {
	if sig != syscall.SIGCONT {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			return err
		}
		WaitState(pid, true, stateWait)
	}
	under := descendants(pid)
	for _, d := range under {
		_ = syscall.Kill(d, sig) // an error: it ended by itself
	}
	err := syscall.Kill(pid, sig)
	switch sig {
	case syscall.SIGSTOP:
		for _, d := range under {
			WaitState(d, true, stateWait)
		}
	case syscall.SIGKILL:
		if left := waitGone(under, reapTimeout); len(left) > 0 {
			return errors.Join(err, fmt.Errorf("pids %v not gone %v after SIGKILL", left, reapTimeout))
		}
	}
	return err
}

// waitGone polls until every pid is gone or a zombie (not ours to reap:
// whoever inherited it does), or limit passes; it returns those left.
func waitGone(pids []int, limit time.Duration) []int {
	deadline := time.Now().Add(limit)
	for {
		pids = slices.DeleteFunc(pids, func(pid int) bool { st := state(pid); return st == 0 || st == 'Z' })
		if len(pids) == 0 || time.Now().After(deadline) {
			return pids
		}
		time.Sleep(time.Millisecond)
	}
}

// WaitState polls /proc/PID/stat until the process is (not) stopped, or
// limit passes: a signal is delivered asynchronously, so a pause is in
// effect only once the kernel shows it. Best effort: without /proc (or
// the process) it returns at once.
func WaitState(pid int, stopped bool, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for {
		st := state(pid)
		if st == 0 || (st == 'T' || st == 't') == stopped || time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// Stopped reports whether pid is stopped (SIGSTOP) right now, as
// /proc/PID/stat shows it; false without /proc or the process.
func Stopped(pid int) bool {
	st := state(pid)
	return st == 'T' || st == 't'
}

// state is the process' state letter in /proc/PID/stat (0: no such
// process, or no /proc).
func state(pid int) byte {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The state follows the parenthesised command name, which may hold
	// spaces and parentheses.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}
