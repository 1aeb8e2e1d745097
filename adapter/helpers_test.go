package adapter_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"lockbench/adapter"
	"lockbench/internal/adaptertest"
	"lockbench/internal/redistest"
	"lockbench/redislock/localmasters"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// reference builds the Go reference adapter (redislock/cmd/lockbench-adapter-redlock)
// once per test binary and returns its path.
func reference(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "lockbench-adapter-")
		if buildErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", buildDir, "lockbench/redislock/cmd/lockbench-adapter-redlock").CombinedOutput()
		if err != nil {
			buildErr = &buildError{err, string(out)}
		}
	})
	if buildErr != nil {
		t.Fatalf("build the reference adapter: %v", buildErr)
	}
	return filepath.Join(buildDir, "lockbench-adapter-redlock")
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

func TestMain(m *testing.M) {
	if mode := os.Getenv(adaptertest.Env); mode != "" {
		adaptertest.Serve(mode)
		os.Exit(0)
	}
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// masters are n real redis-server masters for the test.
func masters(t *testing.T, n int) []string {
	return redistest.StartMasters(t, n, localmasters.PersistNone).Addrs()
}

// startRef is the reference adapter on addrs, with hello's ttl and wait.
func startRef(t *testing.T, addrs []string, ttl, wait time.Duration, settings map[string]any) *adapter.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := adapter.Start(ctx, adapter.Options{Argv: []string{reference(t)}, Stderr: t.Output(),
		Hello: adapter.Hello{Servers: addrs, TTL: ttl, Wait: wait, MaxFlight: 64, Settings: settings}})
	if err != nil {
		t.Fatalf("start the reference adapter: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// fake is the argv of a fake adapter broken as mode says (this test
// binary run again); its env is set for the test.
func fake(t testing.TB, mode string) []string {
	t.Setenv(adaptertest.Env, mode)
	return []string{os.Args[0]}
}
