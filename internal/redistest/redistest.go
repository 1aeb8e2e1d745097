// Package redistest holds test helpers for code that needs real Redis masters.
package redistest

import (
	"context"
	"os"
	"testing"
	"time"

	"lockbench/internal/redisserver"
	"lockbench/redislock/localmasters"
)

// RequireEnv, when set to 1, turns a missing redis-server into a test failure
// (for CI, where a silent skip would hide that nothing was tested).
const RequireEnv = "LOCKBENCH_REQUIRE_REDIS"

// Require returns the redis-server path. When it is missing the test fails if
// LOCKBENCH_REQUIRE_REDIS=1 and is skipped otherwise.
func Require(t testing.TB) string {
	t.Helper()
	if p, ok := redisserver.Path(); ok {
		return p
	}
	if os.Getenv(RequireEnv) == "1" {
		t.Fatal("redis-server not installed but " + RequireEnv + "=1 requires it; install it (apt-get install redis-server)")
		return ""
	}
	t.Skip("redis-server not installed; install it (apt-get install redis-server) or set " + RequireEnv + "=1 to make this a failure")
	return ""
}

// RequireTool fails the test when missing (a tool's absence) is non-nil and
// LOCKBENCH_REQUIRE_REDIS=1, and skips it with that reason otherwise.
func RequireTool(t testing.TB, missing error) {
	t.Helper()
	if missing == nil {
		return
	}
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%v, but %s=1 requires it", missing, RequireEnv)
	}
	t.Skip(missing)
}

// StartMasters starts n real masters with persistence p (Embedded "never"),
// registers t.Cleanup(set.Stop) and fails the test on error.
func StartMasters(t testing.TB, n int, p localmasters.Persistence) *localmasters.Set {
	t.Helper()
	bin := Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	set, err := localmasters.Start(ctx, localmasters.Options{
		N:           n,
		Persistence: p,
		RedisServer: bin,
		Embedded:    "never",
		Log:         t.Output(),
	})
	if err != nil {
		t.Fatalf("start %d redis masters (persistence %s): %v", n, p, err)
	}
	t.Cleanup(func() {
		if err := set.Stop(); err != nil {
			t.Errorf("stop redis masters: %v", err)
		}
	})
	return set
}

// Do runs one command against addr with a 2 s deadline (see redisserver.Do).
func Do(addr string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return redisserver.Do(ctx, addr, args...)
}

// StartReplicated starts a replicated set (real redis-server master,
// replicas and Sentinels), registers t.Cleanup(r.Stop) and fails the test
// on error. opt.RedisServer and opt.Log are filled in when empty.
func StartReplicated(t testing.TB, opt localmasters.ReplicatedOptions) *localmasters.Replicated {
	t.Helper()
	if opt.RedisServer == "" {
		opt.RedisServer = Require(t)
	}
	if opt.Log == nil {
		opt.Log = t.Output()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := localmasters.StartReplicated(ctx, opt)
	if err != nil {
		t.Fatalf("start replicated set (%d replicas, %d sentinels): %v", opt.Replicas, opt.Sentinels, err)
	}
	t.Cleanup(func() {
		if err := r.Stop(); err != nil {
			t.Errorf("stop replicated set: %v", err)
		}
	})
	return r
}

// StartCluster starts a local Redis Cluster (real redis-server nodes),
// registers t.Cleanup(c.Stop) and fails the test on error.
func StartCluster(t testing.TB, opt localmasters.ClusterOptions) *localmasters.Cluster {
	t.Helper()
	if opt.RedisServer == "" {
		opt.RedisServer = Require(t)
	}
	if opt.Log == nil {
		opt.Log = t.Output()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := localmasters.StartCluster(ctx, opt)
	if err != nil {
		t.Fatalf("start cluster (%d masters, %d replicas each): %v", opt.Masters, opt.ReplicasPerMaster, err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stop cluster: %v", err)
		}
	})
	return c
}
