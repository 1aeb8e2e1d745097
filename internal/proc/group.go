package proc

import "sync"

// Stopper is what StopAll stops: a Process, or a service's member that
// wraps one.
type Stopper interface{ Stop() error }

// StopAll stops every one at once and returns their errors by index: one
// at a time, N stuck processes would cost N grace periods, and an etcd
// member left leading alone waits its whole grace to hand over.
func StopAll[S ~[]E, E Stopper](all S) []error {
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, s := range all {
		wg.Go(func() { errs[i] = s.Stop() })
	}
	wg.Wait()
	return errs
}

// Pids are the pids of those running, in order (a stopped one has none).
func Pids[S ~[]E, E interface{ Pid() int }](all S) []int {
	var out []int
	for _, p := range all {
		if pid := p.Pid(); pid > 0 {
			out = append(out, pid)
		}
	}
	return out
}
