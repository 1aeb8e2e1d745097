//go:build linux

package localmasters

import "syscall"

// procAttr puts the child in its own process group, so a terminal Ctrl-C
// reaches only the parent (which then calls Stop), and asks the kernel to
// SIGKILL it if the parent dies, so a crashed benchmark leaves no orphan.
// Pdeathsig fires when the forking OS thread exits; the Go runtime does not
// retire threads of unlocked goroutines, so in practice that is process exit.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
