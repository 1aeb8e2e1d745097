package check

import "slices"

// A fault judged nothing about exclusion unless it met a holder inside its
// critical section at a time when a lost lock could be handed on (Jepsen
// shows a fault's effect on the history before a test may pass). These
// count, from the holds' own records (their acquire's return and their
// release call), the holds a fault event exercised.

// ExercisedAtServer counts the holds a server-side fault at t (a crash, a
// leader's kill, a clock jump) exercised: granted at or after since and
// before t, still held at t, still held when the service next granted any
// lock after t (it was granting again while the holder was inside its
// section), and whose key was granted again after t before the cell ended
// (someone wanted it). A hold that released before the service came back
// met nothing a lost lock could break.
func (ck *Findings) ExercisedAtServer(t, since int64) int {
	next, ok := ck.nextGrant(t, -1, nil)
	if !ok {
		return 0
	}
	n := 0
	for _, a := range ck.Acquired {
		if a.Done >= since && a.Done <= t && t < a.Used && next < a.Used && ck.grantedAgain(a, t) {
			n++
		}
	}
	return n
}

// ExercisedAtClients counts the holds a client-side fault (a pause or a
// partition of clients, from t to end) exercised: holds of those clients
// held at t, whose key was granted to another holder after t, while the
// fault lasted or before the faulted holder's release call.
func (ck *Findings) ExercisedAtClients(t, end int64, clients []int) int {
	n := 0
	for _, a := range ck.Acquired {
		if !slices.Contains(clients, a.Client) || a.Done > t || t >= a.Used {
			continue
		}
		if g, ok := ck.nextGrant(t, int64(a.Key), &a); ok && g < max(end, a.Used) {
			n++
		}
	}
	return n
}

// grantedAgain says a's key was granted to another holder after t.
func (ck *Findings) grantedAgain(a Acquire, t int64) bool {
	_, ok := ck.nextGrant(t, int64(a.Key), &a)
	return ok
}

// nextGrant is the first grant returned after t (of key, or of any key
// when key < 0), other than self.
func (ck *Findings) nextGrant(t, key int64, self *Acquire) (int64, bool) {
	var first int64
	found := false
	for i := range ck.Acquired {
		a := &ck.Acquired[i]
		if a.Done <= t || key >= 0 && int64(a.Key) != key || self != nil && *a == *self {
			continue
		}
		if !found || a.Done < first {
			first, found = a.Done, true
		}
	}
	return first, found
}

// HeldAtServer counts the holds granted at or after since and before t
// and still held at t by their holders' own account: what a server-side
// fault at t met, handed on or not.
func (ck *Findings) HeldAtServer(t, since int64) int {
	n := 0
	for _, a := range ck.Acquired {
		if a.Done >= since && a.Done <= t && t < a.Used {
			n++
		}
	}
	return n
}

// HeldAtClients counts the holds of clients held at t: what a client-side
// fault at t met, handed on or not.
func (ck *Findings) HeldAtClients(t int64, clients []int) int {
	n := 0
	for _, a := range ck.Acquired {
		if slices.Contains(clients, a.Client) && a.Done <= t && t < a.Used {
			n++
		}
	}
	return n
}
