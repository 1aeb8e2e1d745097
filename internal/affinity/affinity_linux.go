//go:build linux

package affinity

import (
	"fmt"
	"lockbench/internal/cpulist"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// AllowedCPUs are the CPUs process pid may run on (0: this process).
func AllowedCPUs(pid int) ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	var out []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// PinProcess sets the CPU affinity of every thread of process pid (0: this
// process): sched_setaffinity acts on one thread, and threads started
// later inherit their creator's set.
func PinProcess(pid int, cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	dir := "/proc/self/task"
	if pid != 0 {
		dir = "/proc/" + strconv.Itoa(pid) + "/task"
	}
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("pin to CPUs %s: %w", cpulist.Format(cpus), err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		// A thread that exited meanwhile is not an error.
		if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
			return fmt.Errorf("pin thread %d to CPUs %s: %w", tid, cpulist.Format(cpus), err)
		}
	}
	return nil
}
