package localmasters

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ParseCPUList reads a CPU list as the kernel writes one: "0", "2-3,6".
func ParseCPUList(list string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(list, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a || b > 4095 {
			return nil, fmt.Errorf("local-cpus: %q is not a CPU list; use CPU numbers and ranges such as 0 or 2-3,6", list)
		}
		for c := a; c <= b; c++ {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// SplitCPUs checks a --local-cpus list against the CPUs this process may
// use and returns the masters' CPUs and the rest, lockbench's.
func SplitCPUs(list string) (local, client []int, err error) {
	local, err = ParseCPUList(list)
	if err != nil {
		return nil, nil, err
	}
	allowed, err := AllowedCPUs(0)
	if err != nil {
		return nil, nil, fmt.Errorf("local-cpus: %v", err)
	}
	for _, c := range local {
		if !slices.Contains(allowed, c) {
			return nil, nil, fmt.Errorf("local-cpus: CPU %d is not one this process may use (%s); use a subset that leaves lockbench at least one", c, FormatCPUList(allowed))
		}
	}
	for _, c := range allowed {
		if !slices.Contains(local, c) {
			client = append(client, c)
		}
	}
	if len(client) == 0 {
		return nil, nil, fmt.Errorf("local-cpus: %q leaves lockbench no CPU of %s; use a subset that leaves it at least one", list, FormatCPUList(allowed))
	}
	return local, client, nil
}

// FormatCPUList writes CPUs as "0-2,5".
func FormatCPUList(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(cpus[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
