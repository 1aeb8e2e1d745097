// Package affinity is which CPUs a process may run on, pinning a process
// (all of its threads) to some, and --local-cpus' split of them between
// local servers and lockbench: Redis' local masters are pinned, and the
// runner records lockbench's share, without either importing the other.
package affinity

import (
	"fmt"
	"lockbench/internal/cpulist"
	"slices"
)

// SplitCPUs checks a --local-cpus list against the CPUs this process may
// use and returns the masters' CPUs and the rest, lockbench's.
func SplitCPUs(list string) (local, client []int, err error) {
	local, err = cpulist.Parse(list)
	if err != nil {
		return nil, nil, err
	}
	allowed, err := AllowedCPUs(0)
	if err != nil {
		return nil, nil, fmt.Errorf("local-cpus: %v", err)
	}
	for _, c := range local {
		if !slices.Contains(allowed, c) {
			return nil, nil, fmt.Errorf("local-cpus: CPU %d is not one this process may use (%s); use a subset that leaves lockbench at least one", c, cpulist.Format(allowed))
		}
	}
	for _, c := range allowed {
		if !slices.Contains(local, c) {
			client = append(client, c)
		}
	}
	if len(client) == 0 {
		return nil, nil, fmt.Errorf("local-cpus: %q leaves lockbench no CPU of %s; use a subset that leaves it at least one", list, cpulist.Format(allowed))
	}
	return local, client, nil
}
