// Package cpulist reads and writes CPU lists as the kernel writes them
// ("0", "2-3,6"): plain parsing, which settings checks and the servers'
// pinning share.
package cpulist

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Parse reads a CPU list as the kernel writes one: "0", "2-3,6".
func Parse(list string) ([]int, error) {
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

// Format writes CPUs as "0-2,5".
func Format(cpus []int) string {
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
