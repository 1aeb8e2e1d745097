// Package redistest holds test helpers for code that needs real Redis masters.
package redistest

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
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
	opt.RedisServer, opt.Log = serverAndLog(t, opt.RedisServer, opt.Log)
	return started(t, fmt.Sprintf("replicated set (%d replicas, %d sentinels)", opt.Replicas, opt.Sentinels),
		func(ctx context.Context) (*localmasters.Replicated, error) {
			return localmasters.StartReplicated(ctx, opt)
		})
}

// StartCluster starts a local Redis Cluster (real redis-server nodes),
// registers t.Cleanup(c.Stop) and fails the test on error.
func StartCluster(t testing.TB, opt localmasters.ClusterOptions) *localmasters.Cluster {
	t.Helper()
	opt.RedisServer, opt.Log = serverAndLog(t, opt.RedisServer, opt.Log)
	return started(t, fmt.Sprintf("cluster (%d masters, %d replicas each)", opt.Masters, opt.ReplicasPerMaster),
		func(ctx context.Context) (*localmasters.Cluster, error) { return localmasters.StartCluster(ctx, opt) })
}

// serverAndLog fills in the redis-server to run and the log when empty.
func serverAndLog(t testing.TB, server string, log io.Writer) (string, io.Writer) {
	t.Helper()
	if server == "" {
		server = Require(t)
	}
	if log == nil {
		log = t.Output()
	}
	return server, log
}

// started starts what (within 60 s), stops it when the test ends and
// fails the test when either goes wrong.
func started[T interface{ Stop() error }](t testing.TB, what string, start func(context.Context) (T, error)) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	v, err := start(ctx)
	if err != nil {
		t.Fatalf("start %s: %v", what, err)
	}
	t.Cleanup(func() {
		if err := v.Stop(); err != nil {
			t.Errorf("stop %s: %v", what, err)
		}
	})
	return v
}

// ShardOf is the cluster's shard whose slots hold key.
func ShardOf(t testing.TB, c *localmasters.Cluster, key string) int {
	t.Helper()
	s, err := Do(c.MasterAddrs()[0], "CLUSTER", "KEYSLOT", key)
	if err != nil {
		t.Fatal(err)
	}
	slot, _ := strconv.Atoi(s)
	for i := range c.MasterAddrs() {
		if lo, hi := c.Shard(i); lo <= slot && slot <= hi {
			return i
		}
	}
	t.Fatalf("slot %d of %s is no shard's", slot, key)
	return -1
}
