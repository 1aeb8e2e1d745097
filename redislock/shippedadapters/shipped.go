// Package shippedadapters finds the shipped adapters of Redis' lock
// libraries (adapters/: node-redlock, node-redlock 5, redis-py) for the
// tests that run them: their argv, or the test fails under
// LOCKBENCH_REQUIRE_REDIS=1 (and is skipped otherwise) when the library
// is not installed.
package shippedadapters

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"lockbench/internal/redistest"
)

// The shipped adapters' commands, as a user runs them (the scripts'
// own #! lines choose node and Debian's /usr/bin/python3).
const (
	NodeRedlockScript = "adapters/node-redlock/adapter.js"
	// NodeRedlock5Script is node-redlock 5.0.0-beta.2's auto-extending using().
	NodeRedlock5Script = "adapters/node-redlock5/adapter.js"
	RedisPyScript      = "adapters/redis-py/adapter.py"
	// DebianPython is the redis-py adapter's interpreter: Debian's, whose
	// python3-redis it imports (a python3 earlier on PATH may lack it).
	DebianPython = "/usr/bin/python3"
)

const installHint = "scripts/adapters install"

// NodeRedlock is the node-redlock adapter's argv. When node or its
// packages are missing the test fails under LOCKBENCH_REQUIRE_REDIS=1
// and is skipped otherwise.
func NodeRedlock(t testing.TB) []string { return nodeAdapter(t, NodeRedlockScript) }

// NodeRedlock5 is the node-redlock 5.0.0-beta.2 adapter's argv, failed or
// skipped as NodeRedlock's.
func NodeRedlock5(t testing.TB) []string { return nodeAdapter(t, NodeRedlock5Script) }

func nodeAdapter(t testing.TB, script string) []string {
	t.Helper()
	root := repoRoot(t)
	redistest.RequireTool(t, nodeRedlockMissing(root, script))
	return []string{filepath.Join(root, script)}
}

func nodeRedlockMissing(root, script string) error {
	if _, err := exec.LookPath("node"); err != nil {
		return fmt.Errorf("node not installed (%s installs it)", installHint)
	}
	pkg := filepath.Join(root, filepath.Dir(script), "node_modules", "redlock", "package.json")
	if _, err := os.Stat(pkg); err != nil {
		return fmt.Errorf("node-redlock's packages not installed in %s (%s runs npm ci)", filepath.Dir(script), installHint)
	}
	return nil
}

// RedisPy is the redis-py adapter's argv, failed or skipped as
// NodeRedlock's when Debian's python3 cannot import redis.
func RedisPy(t testing.TB) []string {
	t.Helper()
	root := repoRoot(t)
	redistest.RequireTool(t, redisPyMissing())
	return []string{filepath.Join(root, RedisPyScript)}
}

func redisPyMissing() error {
	if out, err := exec.Command(DebianPython, "-c", "import redis").CombinedOutput(); err != nil {
		return fmt.Errorf("%s cannot import redis (%v: %s); install Debian's python3-redis (%s)", DebianPython, err, firstLine(out), installHint)
	}
	return nil
}

func firstLine(b []byte) string {
	for i, c := range b {
		if c == '\n' {
			return string(b[:i])
		}
	}
	return string(b)
}

// repoRoot is the module's root, found up from the test's directory (a
// package's tests run in their own).
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal(errors.New("no go.mod above the test's directory"))
		}
		dir = parent
	}
}
