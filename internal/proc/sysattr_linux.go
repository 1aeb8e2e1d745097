//go:build linux

package proc

import (
	"os/exec"
	"syscall"
)

// ownGroup puts the run in a process group of its own, so that a
// terminal's Ctrl-C reaches only lockbench (which then stops it), and has
// the kernel SIGKILL it if lockbench dies, so that a crashed benchmark
// leaves no orphan. Pdeathsig fires when the forking OS thread exits; the
// Go runtime does not retire threads of unlocked goroutines, so in
// practice that is lockbench's exit. Spawn's own attributes (a
// Credential) are kept.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
