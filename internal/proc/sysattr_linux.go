//go:build linux

package proc

import "syscall"

// dieWithParent has the kernel SIGKILL the run if lockbench dies, so that
// a crashed benchmark leaves no orphan. Pdeathsig fires when the forking
// OS thread exits; the Go runtime does not retire threads of unlocked
// goroutines, so in practice that is lockbench's exit.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
