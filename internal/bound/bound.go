// Package bound logs what a timing-bound test measured against its bound,
// one machine-readable line per assertion, so that scripts/stress (which
// runs the tests with go test -v) can show each figure beside its limit:
//
//	bound: NAME measured=GOT limit<=LIMIT
//	bound: NAME measured=GOT limit>=LIMIT
//
// NAME has no spaces. The functions only log and compare; the test still
// says what fails and why.
package bound

import (
	"cmp"
	"strings"
	"testing"
)

// Max logs got against the upper bound limit and reports got <= limit.
func Max[T cmp.Ordered](t testing.TB, name string, got, limit T) bool {
	t.Helper()
	t.Logf("bound: %s measured=%v limit<=%v", clean(name), got, limit)
	return got <= limit
}

// Min logs got against the lower bound limit and reports got >= limit.
func Min[T cmp.Ordered](t testing.TB, name string, got, limit T) bool {
	t.Helper()
	t.Logf("bound: %s measured=%v limit>=%v", clean(name), got, limit)
	return got >= limit
}

// clean keeps a name one field wide.
func clean(name string) string { return strings.ReplaceAll(name, " ", "_") }
