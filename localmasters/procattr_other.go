//go:build unix && !linux

package localmasters

import "syscall"

// procAttr: no Pdeathsig outside Linux, so a crashed parent may leave
// orphans there; the own process group still keeps Ctrl-C away from them.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
