//go:build unix && !linux

package proc

import (
	"os/exec"
	"syscall"
)

// ownGroup: no Pdeathsig outside Linux, so a crashed lockbench may leave
// orphans there; the own process group still keeps Ctrl-C away from them.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}
