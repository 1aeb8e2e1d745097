package redislock

import (
	"context"
	"net"
	"testing"
	"time"

	"lockbench/redislock/engine"
)

// A benchmark cell whose external client's masters cannot be reached ends
// with the cell's error, not a panic: the runner asks CountKeys first (the
// adapter's measuring engine fails to open there), then closes the cell,
// which cleans up first. Before, Cleanup went to the engine that never
// opened (a nil *RedisClient) and panicked.
func TestAdapterCellCleansUpWhenItsEngineNeverOpened(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.Masters, cfg.Timeout = []string{closedAddr(t)}, time.Second
	c := &adapterClient{cfg: cfg}
	if _, err := c.CountKeys(context.Background(), "lockbench:t:"); err == nil {
		t.Fatal("CountKeys on a master nobody listens on: no error, so the engine opened and this judged nothing")
	}
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("Cleanup after the engine failed to open panicked: %v", p)
		}
	}()
	c.Cleanup(context.Background(), "lockbench:t:")
}

// closedAddr is a loopback address nothing listens on (a port just freed).
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
