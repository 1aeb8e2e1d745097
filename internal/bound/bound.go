// Package bound logs what a timing-bound test saw against its bound, in
// one line scripts/stress collects: "bound: NAME got=G limit=L". With it a
// margin is a measured margin.
package bound

import "testing"

// Log says what assertion name saw (got) against its limit.
func Log(t testing.TB, name string, got, limit any) {
	t.Helper()
	t.Logf("bound: %s got=%v limit=%v", name, got, limit)
}
