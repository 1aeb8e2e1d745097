package redistest

import (
	"strings"
	"testing"
)

// fakeTB records Fatal/Skip instead of stopping the goroutine, so Require's
// decision can be observed.
type fakeTB struct {
	testing.TB
	fatal, skip string
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Fatal(args ...any) { f.fatal = args[0].(string) }
func (f *fakeTB) Skip(args ...any)  { f.skip = args[0].(string) }

func TestRequireMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no redis-server here

	t.Setenv(RequireEnv, "1")
	f := &fakeTB{TB: t}
	Require(f)
	if f.fatal == "" || f.skip != "" || !strings.Contains(f.fatal, "redis-server not installed") {
		t.Errorf("with %s=1: fatal=%q skip=%q, want a failure", RequireEnv, f.fatal, f.skip)
	}

	t.Setenv(RequireEnv, "")
	f = &fakeTB{TB: t}
	Require(f)
	if f.skip == "" || f.fatal != "" || !strings.Contains(f.skip, RequireEnv+"=1") {
		t.Errorf("without %s: fatal=%q skip=%q, want a skip", RequireEnv, f.fatal, f.skip)
	}
}
