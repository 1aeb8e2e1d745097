package adapter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
)

// CheckCommand says, before anything starts, whether argv can run: its
// program found and executable. The error names the setting ("client").
func CheckCommand(argv []string) error {
	if len(argv) == 0 || argv[0] == "" {
		return errors.New("client: empty; give the adapter's command, e.g. --client 'node adapters/node-redlock/adapter.js'")
	}
	if _, err := exec.LookPath(argv[0]); err != nil {
		return fmt.Errorf("client: %q is not an executable program (%v); give an adapter's command (docs/adapters.md)", argv[0], unwrapExec(err))
	}
	return nil
}

// unwrapExec is exec's error without the program name it repeats.
func unwrapExec(err error) error {
	var e *exec.Error
	if errors.As(err, &e) {
		return e.Err
	}
	return err
}

// SplitCommand splits a command line on spaces (no quoting: an adapter's
// command is a program and its plain arguments).
func SplitCommand(s string) []string { return strings.Fields(s) }

// startProcess starts argv with pipes on stdin and stdout; its stderr goes
// to tail (and on to w when set). It stays in lockbench's process group,
// so a pause of a client process (its group) pauses its adapter with it;
// it dies with lockbench (Pdeathsig).
func startProcess(argv, env []string, tail *stderrTail) (*exec.Cmd, io.WriteCloser, io.ReadCloser, error) {
	if err := CheckCommand(argv); err != nil {
		return nil, nil, nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = tail
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	out, childOut, err := blockingPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	cmd.Stdout = childOut
	err = cmd.Start()
	childOut.Close() // the adapter's now: its exit ends our reads
	if err != nil {
		out.Close()
		return nil, nil, nil, fmt.Errorf("client: start %s: %w", argv[0], err)
	}
	return cmd, in, out, nil
}

// blockingPipe is a pipe whose read end blocks: the reader's thread
// sleeps in read(2) until lines come, where the runtime's poller takes a
// read that fails (EAGAIN), an epoll_wait and the read again at each wake.
func blockingPipe() (r, w *os.File, err error) {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, fmt.Errorf("client: pipe: %w", err)
	}
	return os.NewFile(uintptr(p[0]), "adapter stdout"), os.NewFile(uintptr(p[1]), "adapter stdout (its end)"), nil
}

// stderrTail keeps an adapter's last stderr lines for the error that
// says why it stopped, and passes everything on to w (nil: nowhere).
type stderrTail struct {
	mu      sync.Mutex
	w       io.Writer
	lines   []string
	partial []byte
}

const tailLines = 8

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.w != nil {
		_, _ = t.w.Write(p)
	}
	t.partial = append(t.partial, p...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		t.keep(string(t.partial[:i]))
		t.partial = t.partial[i+1:]
	}
	if len(t.partial) > 4096 { // a line without end: keep its start
		t.keep(string(t.partial[:200]))
		t.partial = t.partial[:0]
	}
	return len(p), nil
}

func (t *stderrTail) keep(line string) {
	if len(line) > 200 {
		line = line[:200] + "…"
	}
	t.lines = append(t.lines, line)
	if len(t.lines) > tailLines {
		t.lines = t.lines[len(t.lines)-tailLines:]
	}
}

// String is the last lines, " | " between them ("(none)" when silent).
func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := t.lines
	if len(t.partial) > 0 {
		lines = append(append([]string(nil), lines...), string(t.partial))
	}
	if len(lines) == 0 {
		return "(none)"
	}
	return strings.Join(lines, " | ")
}
