package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lockbench/internal/bound"
)

// procTestShell is a Process running script in sh (a real child).
func procTestShell(t *testing.T, opt Options, script string) *Process {
	t.Helper()
	opt.Spawn = func() *exec.Cmd { return exec.Command("sh", "-c", script) }
	if opt.Name == "" {
		opt.Name = "test process"
	}
	p := New(opt)
	t.Cleanup(func() { _ = p.Kill() })
	return p
}

// procTestTrapped starts a shell that sets traps, says so in a file, then
// loops in 10 ms sleeps; it returns once the traps are set (waiting on the
// file, not a fixed sleep a slow shell start could outlast).
func procTestTrapped(t *testing.T, opt Options, traps string) (*Process, int) {
	t.Helper()
	ready := filepath.Join(t.TempDir(), "ready")
	p := procTestShell(t, opt, traps+`; echo $$ > '`+ready+`'; while :; do sleep 0.01; done`)
	procTestStart(t, p)
	return p, procTestReadPid(t, ready)
}

func procTestStart(t *testing.T, p *Process) int {
	t.Helper()
	pid, err := p.Start()
	if err != nil {
		t.Fatal(err)
	}
	if pid <= 0 || p.Pid() != pid || !p.Running() {
		t.Fatalf("started: pid %d, Pid %d, Running %v", pid, p.Pid(), p.Running())
	}
	return pid
}

// procTestState is the process' state letter in /proc ('?': gone).
func procTestState(pid int) byte {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return '?'
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return rest[0]
}

// procTestGone says whether pid is gone (or a zombie, not yet reaped by
// whoever inherited it), waiting up to a second.
func procTestGone(pid int) bool {
	deadline := time.Now().Add(time.Second)
	for {
		if st := procTestState(pid); st == '?' || st == 'Z' {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// procTestReadPid waits for the pid a script wrote to path.
func procTestReadPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(path)
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 {
			return n
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

// A run has its own process group; Kill ends it with SIGKILL, reaped at
// once: Pid 0, not Running, its pid gone; a second Kill does nothing.
func TestKill(t *testing.T) {
	p := procTestShell(t, Options{}, "exec sleep 100")
	pid := procTestStart(t, p)
	if pgid, err := syscall.Getpgid(pid); err != nil || pgid != pid {
		t.Errorf("process group %d (%v), want its own (%d)", pgid, err, pid)
	}
	if _, err := p.Start(); !errors.Is(err, ErrRunning) {
		t.Errorf("second Start: %v, want ErrRunning", err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if p.Pid() != 0 || p.Running() || !procTestGone(pid) {
		t.Fatalf("after Kill: Pid %d, Running %v, state %c", p.Pid(), p.Running(), procTestState(pid))
	}
	if got := p.ExitState(); got != "signal: killed" {
		t.Errorf("ExitState %q, want signal: killed", got)
	}
	if err := p.Kill(); err != nil {
		t.Errorf("Kill without a run: %v", err)
	}
	if err := p.Pause(); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Pause without a run: %v, want ErrNotRunning", err)
	}
}

// A run that exits by itself is seen: Pid 0, not Running, how it ended.
func TestExitedByItself(t *testing.T) {
	p := procTestShell(t, Options{}, "exit 7")
	if _, err := p.Start(); err != nil { // not procTestStart: it may be gone already
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for p.Running() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if p.Pid() != 0 || p.Running() {
		t.Fatalf("exited run: Pid %d, Running %v", p.Pid(), p.Running())
	}
	if got := p.ExitState(); got != "exit status 7" {
		t.Errorf("ExitState %q, want exit status 7", got)
	}
}

// Pause stops the run and returns once the kernel shows it stopped;
// Resume continues it; a killed run, or the next, is not paused.
func TestPauseResume(t *testing.T) {
	p := procTestShell(t, Options{}, "exec sleep 100")
	pid := procTestStart(t, p)
	if err := p.Pause(); err != nil {
		t.Fatal(err)
	}
	if st := procTestState(pid); st != 'T' || !p.Paused() || !p.Running() {
		t.Fatalf("paused: state %c, Paused %v, Running %v", st, p.Paused(), p.Running())
	}
	if err := p.Resume(); err != nil {
		t.Fatal(err)
	}
	if st := procTestState(pid); st == 'T' || p.Paused() {
		t.Fatalf("resumed: state %c, Paused %v", st, p.Paused())
	}
	if err := p.Pause(); err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil || p.Paused() {
		t.Fatalf("killed while paused: %v, Paused %v", err, p.Paused())
	}
	procTestStart(t, p)
	if p.Paused() {
		t.Error("a new run is Paused")
	}
}

// With Tree, Pause stops and Kill ends the processes under the run too,
// also one in a session of its own (a postmaster's backends each call
// setsid); without it, only the run's own pid.
func TestTree(t *testing.T) {
	for _, tree := range []bool{true, false} {
		t.Run(fmt.Sprintf("tree=%v", tree), func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "child")
			p := procTestShell(t, Options{Tree: tree}, "setsid sleep 100 & echo $! > "+file+"; wait")
			procTestStart(t, p)
			child := procTestReadPid(t, file)
			t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
			if err := p.Pause(); err != nil {
				t.Fatal(err)
			}
			WaitState(child, tree, time.Second)
			if stopped := procTestState(child) == 'T'; stopped != tree {
				t.Errorf("child stopped %v after Pause, want %v", stopped, tree)
			}
			if err := p.Resume(); err != nil {
				t.Fatal(err)
			}
			WaitState(child, false, time.Second)
			if st := procTestState(child); st == 'T' {
				t.Errorf("child still stopped after Resume")
			}
			if err := p.Kill(); err != nil {
				t.Fatal(err)
			}
			if gone := procTestGone(child); gone != tree {
				t.Errorf("child gone %v after Kill, want %v", gone, tree)
			}
		})
	}
}

// Restart starts a new run of Spawn's command (made anew: it sees what
// changed) after a Kill and waits until it is ready; while a run is up it
// does nothing.
func TestRestart(t *testing.T) {
	dir := t.TempDir()
	runs := 0
	p := New(Options{Name: "counter", Output: filepath.Join(dir, "out.log"), Poll: 10 * time.Millisecond, Spawn: func() *exec.Cmd {
		runs++
		return exec.Command("sh", "-c", fmt.Sprintf("echo run %d; touch %s/ready%d; exec sleep 100", runs, dir, runs))
	}})
	t.Cleanup(func() { _ = p.Kill() })
	ready := func(n int) func(context.Context) error {
		return func(context.Context) error {
			_, err := os.Stat(filepath.Join(dir, fmt.Sprintf("ready%d", n)))
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Restart(ctx, ready(1)); err != nil {
		t.Fatal(err)
	}
	first := p.Pid()
	if err := p.Restart(ctx, ready(2)); err != nil || p.Pid() != first || runs != 1 {
		t.Fatalf("Restart of a running process: %v, pid %d (was %d), %d runs", err, p.Pid(), first, runs)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := p.Restart(ctx, ready(2)); err != nil {
		t.Fatal(err)
	}
	if p.Pid() == 0 || p.Pid() == first || runs != 2 || !procTestGone(first) {
		t.Fatalf("after Restart: pid %d (was %d), %d runs", p.Pid(), first, runs)
	}
	out, _ := os.ReadFile(filepath.Join(dir, "out.log"))
	if string(out) != "run 1\nrun 2\n" {
		t.Errorf("output %q, want both runs appended", out)
	}
}

// Await reports a run that exits before it is ready, with how it ended,
// and a ctx that ends first.
func TestAwait(t *testing.T) {
	never := func(context.Context) error { return errors.New("not yet") }
	p := procTestShell(t, Options{Poll: 10 * time.Millisecond}, "exit 3")
	if _, err := p.Start(); err != nil {
		t.Fatal(err)
	}
	err := p.Await(context.Background(), never)
	if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("Await of an exiting run: %v, want ErrExited with its status", err)
	}
	p = procTestShell(t, Options{Poll: 10 * time.Millisecond}, "exec sleep 100")
	procTestStart(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err = p.Await(ctx, never)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "not yet") {
		t.Errorf("Await past ctx: %v, want its deadline and the last check", err)
	}
}

// Stop sends the graceful signals in turn, each given Grace, and SIGKILL
// after the last; a paused run is continued so that it can act on them.
func TestStop(t *testing.T) {
	const grace = 300 * time.Millisecond
	for _, c := range []struct {
		name, script string
		signals      []syscall.Signal
		pause        bool
		want         string
		least        time.Duration // Stop takes at least this long
	}{
		{"term", `trap "exit 3" TERM`, nil, false, "exit status 3", 0},
		{"paused", `trap "exit 3" TERM`, nil, true, "exit status 3", 0},
		{"second signal", `trap "" INT; trap "exit 4" QUIT`, []syscall.Signal{syscall.SIGINT, syscall.SIGQUIT}, false, "exit status 4", grace},
		{"killed after grace", `trap "" TERM`, nil, false, "signal: killed", grace},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, pid := procTestTrapped(t, Options{StopSignals: c.signals, Grace: grace}, c.script)
			if c.pause {
				if err := p.Pause(); err != nil {
					t.Fatal(err)
				}
			}
			start := time.Now()
			if err := p.Stop(); err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			if got := p.ExitState(); got != c.want || p.Running() || !procTestGone(pid) {
				t.Errorf("after Stop: ExitState %q (want %q), Running %v", got, c.want, p.Running())
			}
			// At least the graces it must wait out; at most one grace more,
			// for the shell to act on a signal between its 10 ms sleeps.
			if !bound.Min(t, "proc.stop_took", took, c.least) || !bound.Max(t, "proc.stop_took", took, c.least+grace) {
				t.Errorf("Stop took %v, want %v to %v", took, c.least, c.least+grace)
			}
			if err := p.Stop(); err != nil {
				t.Errorf("Stop without a run: %v", err)
			}
		})
	}
}

// StopAll stops every one at once: three that wait out their grace take
// one grace, not three; Pids are the running ones'.
func TestStopAll(t *testing.T) {
	const grace = 400 * time.Millisecond
	var ps []*Process
	var pids []int
	for range 3 {
		p, pid := procTestTrapped(t, Options{Grace: grace}, `trap "" TERM`)
		pids = append(pids, pid)
		ps = append(ps, p)
	}
	if got := Pids(ps); !slices.Equal(got, pids) {
		t.Errorf("Pids %v, want %v", got, pids)
	}
	start := time.Now()
	for i, err := range StopAll(ps) {
		if err != nil {
			t.Errorf("process %d: %v", i, err)
		}
	}
	// One grace and the kills, below the three graces of one at a time.
	if took := time.Since(start); !bound.Max(t, "proc.stop_all_took", took, 2*grace) {
		t.Errorf("StopAll took %v, more than one grace (%v) each", took, grace)
	}
	if left := Pids(ps); left != nil {
		t.Errorf("Pids after StopAll: %v, want none", left)
	}
	for i, p := range ps {
		if p.Running() || !procTestGone(pids[i]) {
			t.Errorf("process %d (pid %d) survived StopAll", i, pids[i])
		}
	}
}
