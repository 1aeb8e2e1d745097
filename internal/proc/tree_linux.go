//go:build linux

package proc

import "github.com/prometheus/procfs"

// descendants are the processes under pid (children, theirs, ...), found
// by their parent pid: a server whose children leave its process group
// (a postmaster's each call setsid) has no group to signal.
func descendants(pid int) []int {
	all, err := procfs.AllProcs()
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, p := range all {
		if st, err := p.Stat(); err == nil {
			children[st.PPID] = append(children[st.PPID], p.PID)
		}
	}
	var out []int
	for next := []int{pid}; len(next) > 0; {
		p := next[0]
		next = append(next[1:], children[p]...)
		out = append(out, children[p]...)
	}
	return out
}
