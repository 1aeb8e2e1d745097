//go:build unix && !linux

package proc

import "syscall"

// dieWithParent: no Pdeathsig outside Linux, so a crashed lockbench may
// leave orphans there.
func dieWithParent(*syscall.SysProcAttr) {}
