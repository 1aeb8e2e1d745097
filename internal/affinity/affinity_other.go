//go:build !linux

package affinity

import "errors"

var errNoAffinity = errors.New("CPU pinning needs Linux")

// AllowedCPUs needs Linux.
func AllowedCPUs(int) ([]int, error) { return nil, errNoAffinity }

// PinProcess needs Linux.
func PinProcess(int, []int) error { return errNoAffinity }
