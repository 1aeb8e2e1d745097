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
